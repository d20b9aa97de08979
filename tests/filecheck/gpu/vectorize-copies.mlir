// RUN: tcir-opt %s -p gpu-vectorize-copies | filecheck %s
// RUN: tcir-opt %s -p 'gpu-vectorize-copies{max-width=2}' | filecheck %s --check-prefix=NARROW

// A thread's group loop copying 4 consecutive elements of a row of A to shared
// memory becomes one float4 load and store (at the group's first element); the
// 6-element loop of B is no vector width and stays scalar. With max-width=2
// the group of 4 is too wide: nothing changes.

// CHECK: %col = arith.muli %c4, %tx : index
// CHECK-NEXT: %[[J:.*]] = arith.addi %col, %c0 : index
// CHECK-NEXT: %[[V:.*]] = vector.load %A[%ty, %[[J]]] : memref<8x8xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %[[V]], %shared_A[%ty, %[[J]]] : memref<8x12xf32, 3 : i64>, vector<4xf32>
// CHECK-NEXT: scf.for %e2 = %c0 to %c6 step %c1 {
// CHECK-NEXT: memref.load %B[%ty, %e2] : memref<8x6xf32>
// CHECK-NOT: vector.

// NARROW-NOT: vector.
// NARROW: scf.for %e = %c0 to %c4 step %c1 {

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8x8xf32>, memref<8x6xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8x8xf32>, %B: memref<8x6xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c6 = arith.constant 6 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %shared_A = memref.alloca() {alignment = 16 : i64} : memref<8x12xf32, 3 : i64>
      %shared_B = memref.alloca() {alignment = 16 : i64} : memref<8x6xf32, 3 : i64>
      %col = arith.muli %c4, %tx : index
      scf.for %e = %c0 to %c4 step %c1 {
        %j = arith.addi %col, %e : index
        %v = memref.load %A[%ty, %j] : memref<8x8xf32>
        memref.store %v, %shared_A[%ty, %j] : memref<8x12xf32, 3 : i64>
      }
      scf.for %e2 = %c0 to %c6 step %c1 {
        %w = memref.load %B[%ty, %e2] : memref<8x6xf32>
        memref.store %w, %shared_B[%ty, %e2] : memref<8x6xf32, 3 : i64>
      }
      "gpu.barrier"() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "copies"} : () -> ()
  }) : () -> ()
}
