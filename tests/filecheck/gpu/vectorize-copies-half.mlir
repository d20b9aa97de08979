// RUN: tcir-opt %s -p 'gpu-vectorize-copies{max-width=8}' | filecheck %s

// Groups of 8 elements: 16 bytes of f16 become one vector<8xf16> load and
// store (the shared buffer aligned to 16); 8 f32 are 32 bytes, wider than
// any vector load, and stay scalar.

// CHECK-LABEL: "gpu.func"
// CHECK: %shared_A = memref.alloca() {alignment = 16 : i64} : memref<8x24xf16, 3 : i64>
// CHECK: %[[V:.*]] = vector.load %A[%ty, %{{.*}}] : memref<8x16xf16>, vector<8xf16>
// CHECK-NEXT: vector.store %[[V]], %shared_A[%ty, %{{.*}}] : memref<8x24xf16, 3 : i64>, vector<8xf16>
// CHECK-NEXT: scf.for %e2 = %c0 to %c8 step %c1 {
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.load %B[%ty, %{{.*}}] : memref<8x16xf32>
// CHECK-NOT: vector.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8x16xf16>, memref<8x16xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<8x16xf16>, %B: memref<8x16xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %shared_A = memref.alloca() : memref<8x24xf16, 3 : i64>
      %shared_B = memref.alloca() {alignment = 16 : i64} : memref<8x24xf32, 3 : i64>
      %col = arith.muli %c8, %tx : index
      scf.for %e = %c0 to %c8 step %c1 {
        %j = arith.addi %col, %e : index
        %v = memref.load %A[%ty, %j] : memref<8x16xf16>
        memref.store %v, %shared_A[%ty, %j] : memref<8x24xf16, 3 : i64>
      }
      scf.for %e2 = %c0 to %c8 step %c1 {
        %j2 = arith.addi %col, %e2 : index
        %w = memref.load %B[%ty, %j2] : memref<8x16xf32>
        memref.store %w, %shared_B[%ty, %j2] : memref<8x24xf32, 3 : i64>
      }
      "gpu.barrier"() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "copies"} : () -> ()
  }) : () -> ()
}
