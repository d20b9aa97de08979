// RUN: tcir-opt %s -p gpu-vectorize-copies | filecheck %s

// A copy of a tile padded past the edge of A (`poly-pad-tiles`): its last
// subscript is clamped a group at a time, `min(j, 4 + j mod 4)` on rows of
// 8, so that a group past the edge reads the last group whole. The group
// loop becomes one float4 copy at `min(col, 4 + col mod 4)`, the group's
// first element (where `min(col, 4)`). The same loop clamped element by element (`min(j, 7)`:
// a group past the edge reads element 7 four times) stays scalar.

// CHECK-LABEL: "gpu.func"
// CHECK:      %[[FIRST:.*]] = arith.addi %col, %c0 : index
// CHECK-NEXT: %[[LANE:.*]] = arith.remsi %[[FIRST]], %c4 : index
// CHECK-NEXT: %[[BOUND:.*]] = arith.addi %c4, %[[LANE]] : index
// CHECK-NEXT: %[[J:.*]] = arith.minsi %[[FIRST]], %[[BOUND]] : index
// CHECK-NEXT: %[[V:.*]] = vector.load %A[%ty, %[[J]]] : memref<8x8xf32>, vector<4xf32>
// CHECK-NEXT: vector.store %[[V]], %shared_A[%ty, %[[FIRST]]] : memref<8x12xf32, 3 : i64>, vector<4xf32>
// CHECK-NEXT: scf.for %e2 = %c0 to %c4 step %c1 {
// CHECK:        arith.minsi %{{.*}}, %c7 : index
// CHECK-NOT:  vector.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8x8xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8x8xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c7 = arith.constant 7 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %shared_A = memref.alloca() {alignment = 16 : i64} : memref<8x12xf32, 3 : i64>
      %shared_B = memref.alloca() {alignment = 16 : i64} : memref<8x12xf32, 3 : i64>
      %col = arith.muli %c4, %tx : index
      scf.for %e = %c0 to %c4 step %c1 {
        %j = arith.addi %col, %e : index
        %lane = arith.remsi %j, %c4 : index
        %bound = arith.addi %c4, %lane : index
        %clamped = arith.minsi %j, %bound : index
        %v = memref.load %A[%ty, %clamped] : memref<8x8xf32>
        memref.store %v, %shared_A[%ty, %j] : memref<8x12xf32, 3 : i64>
      }
      scf.for %e2 = %c0 to %c4 step %c1 {
        %j2 = arith.addi %col, %e2 : index
        %clamped2 = arith.minsi %j2, %c7 : index
        %w = memref.load %A[%ty, %clamped2] : memref<8x8xf32>
        memref.store %w, %shared_B[%ty, %j2] : memref<8x12xf32, 3 : i64>
      }
      "gpu.barrier"() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "copies"} : () -> ()
  }) : () -> ()
}
