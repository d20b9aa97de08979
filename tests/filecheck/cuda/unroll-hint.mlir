// RUN: tcir-opt %s -t cuda | filecheck %s

// An `scf.for` with the `tcir.unroll` hint and a constant trip count gets
// `#pragma unroll`, whole where its unrolled body holds at most 1024 float
// products (its inner loops of constant trip counts unrolled too), else by
// the largest divisor of its trip count that stays within (1: none), but
// for a loop whose iterator indexes private memory: whole. A hinted loop of
// a trip count that varies gets no pragma.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>, index) -> (), kernel}> ({
    ^bb0(%A: memref<64xf32>, %n: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c27 = arith.constant 27 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %x = memref.load %A[%c0] : memref<64xf32>
      // 4 x 64 products: whole.
      scf.for %i = %c0 to %c4 step %c1 {
        scf.for %j = %c0 to %c64 step %c1 {
          %y = arith.mulf %x, %x : f32
          memref.store %y, %A[%j] : memref<64xf32>
        } {tcir.unroll}
      } {tcir.unroll}
      // 8 x 256 products: by 4.
      scf.for %i = %c0 to %c8 step %c1 {
        scf.for %j = %c0 to %c256 step %c1 {
          %y = arith.mulf %x, %x : f32
          memref.store %y, %A[%c1] : memref<64xf32>
        }
      } {tcir.unroll}
      // 27 x 64 products: by 9.
      scf.for %i = %c0 to %c27 step %c1 {
        scf.for %j = %c0 to %c64 step %c1 {
          %y = arith.mulf %x, %x : f32
          memref.store %y, %A[%j] : memref<64xf32>
        }
      } {tcir.unroll}
      // 4 x 2048 products: not unrolled.
      scf.for %i = %c0 to %c4 step %c1 {
        scf.for %j = %c0 to %c256 step %c1 {
          scf.for %k = %c0 to %c8 step %c1 {
            %y = arith.mulf %x, %x : f32
            memref.store %y, %A[%k] : memref<64xf32>
          }
        }
      } {tcir.unroll}
      // An iterator in the indices of private elements: whole, whatever the
      // products (the elements stay registers only with constant indices).
      %P = memref.alloca() : memref<8xf32, 5>
      scf.for %i = %c0 to %c8 step %c1 {
        %i2 = arith.addi %i, %c0 : index
        scf.for %j = %c0 to %c256 step %c1 {
          %y = arith.mulf %x, %x : f32
          memref.store %y, %P[%i2] : memref<8xf32, 5>
        }
      } {tcir.unroll}
      %p = memref.load %P[%c0] : memref<8xf32, 5>
      memref.store %p, %A[%c0] : memref<64xf32>
      // A trip count that varies: no pragma.
      scf.for %i = %c0 to %n step %c1 {
        memref.store %x, %A[%c0] : memref<64xf32>
      } {tcir.unroll}
      "gpu.return"() : () -> ()
    }) {sym_name = "hinted", gpu.known_block_size = array<i32: 32, 1, 1>} : () -> ()
  }) : () -> ()
}
// CHECK-LABEL: hinted(
// CHECK:         #pragma unroll
// CHECK-NEXT:    for (long long i = 0; i < 4; ++i) {
// CHECK-NEXT:      #pragma unroll
// CHECK-NEXT:      for (long long j = 0; j < 64; ++j) {
// CHECK:         #pragma unroll 4
// CHECK-NEXT:    for (long long i_1 = 0; i_1 < 8; ++i_1) {
// CHECK-NEXT:      for (long long j_1 = 0; j_1 < 256; ++j_1) {
// CHECK:         #pragma unroll 9
// CHECK-NEXT:    for (long long i_2 = 0; i_2 < 27; ++i_2) {
// CHECK:         #pragma unroll 1
// CHECK-NEXT:    for (long long i_3 = 0; i_3 < 4; ++i_3) {
// CHECK:         #pragma unroll
// CHECK-NEXT:    for (long long i_4 = 0; i_4 < 8; ++i_4) {
// CHECK:         }
// CHECK-NOT:     #pragma
// CHECK:         for (long long i_5 = 0; i_5 < n; ++i_5) {
