// RUN: tcir-opt %s -p gpu-vectorize-copies | filecheck %s

// A transposing copy (poly-promote{transpose-copies=true}): a thread's group
// loop reads 4 consecutive elements of a row of A and stores them down a
// column of the shared tile, one row each. The group becomes one float4 load
// and four stores of its lanes, each at its own row. A half tile's group
// stays scalar (no lanes named .x .. .w), as does a loop whose store varies
// along two dimensions.

// CHECK-LABEL: "gpu.func"
// CHECK:      %[[K:.*]] = arith.addi %col, %c0 : index
// CHECK-NEXT: %[[V:.*]] = vector.load %A[%ty, %[[K]]] : memref<8x8xf32>, vector<4xf32>
// CHECK-NEXT: %[[L0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[I0:.*]] = arith.addi %c0, %[[L0]] : index
// CHECK-NEXT: %[[R0:.*]] = arith.addi %col, %[[I0]] : index
// CHECK-NEXT: %[[X:.*]] = vector.extract %[[V]][0] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[X]], %shared_A[%[[R0]], %ty] : memref<8x9xf32, 3 : i64>
// CHECK:      %[[W:.*]] = vector.extract %[[V]][3] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[W]], %shared_A[%{{.*}}, %ty] : memref<8x9xf32, 3 : i64>
// CHECK-NEXT: scf.for %h = %c0 to %c4 step %c1 {
// CHECK:        memref.load %H[%ty, %{{.*}}] : memref<8x8xf16>
// CHECK:      scf.for %d = %c0 to %c4 step %c1 {
// CHECK:        memref.load %A[%ty, %{{.*}}] : memref<8x8xf32>
// CHECK-NOT:  vector.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8x8xf32>, memref<8x8xf16>) -> (), kernel}> ({
    ^bb0(%A: memref<8x8xf32>, %H: memref<8x8xf16>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %shared_A = memref.alloca() {alignment = 16 : i64} : memref<8x9xf32, 3 : i64>
      %shared_H = memref.alloca() {alignment = 16 : i64} : memref<8x9xf16, 3 : i64>
      %shared_D = memref.alloca() {alignment = 16 : i64} : memref<8x9xf32, 3 : i64>
      %col = arith.muli %c4, %tx : index
      scf.for %e = %c0 to %c4 step %c1 {
        %j = arith.addi %col, %e : index
        %v = memref.load %A[%ty, %j] : memref<8x8xf32>
        memref.store %v, %shared_A[%j, %ty] : memref<8x9xf32, 3 : i64>
      }
      scf.for %h = %c0 to %c4 step %c1 {
        %j = arith.addi %col, %h : index
        %v = memref.load %H[%ty, %j] : memref<8x8xf16>
        memref.store %v, %shared_H[%j, %ty] : memref<8x9xf16, 3 : i64>
      }
      scf.for %d = %c0 to %c4 step %c1 {
        %j = arith.addi %col, %d : index
        %v = memref.load %A[%ty, %j] : memref<8x8xf32>
        memref.store %v, %shared_D[%j, %j] : memref<8x9xf32, 3 : i64>
      }
      "gpu.barrier"() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "copies"} : () -> ()
  }) : () -> ()
}
