// RUN: tcir-opt %s -p gpu-prefetch-copies | filecheck %s
// RUN: tcir-opt %s -p 'gpu-prefetch-copies{double-buffer=true}' | filecheck %s --check-prefix=DOUBLE

// A k loop of two steps, each copying a 4x4 tile of A and of B to shared memory
// between two barriers, then computing on them. The next step's elements are
// loaded into registers (%prefetch) while this step computes: before the loop
// for step 0, at the end of each step for the next one (if there is one); the
// shared tiles are filled from the registers.

// CHECK: %prefetch = memref.alloca() : memref<2xf32, 5 : i64>
// CHECK: %[[A0:.*]] = memref.load %A[{{.*}}] : memref<4x8xf32>
// CHECK-NEXT: memref.store %[[A0]], %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK: %[[B0:.*]] = memref.load %B[{{.*}}] : memref<4x8xf32>
// CHECK-NEXT: memref.store %[[B0]], %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK-NEXT: scf.for %[[K:.*]] = %[[LO:.*]] to %[[HI:.*]] step %[[STEP:.*]] {
// CHECK-NEXT: "gpu.barrier"() : () -> ()
// CHECK: %[[RA:.*]] = memref.load %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK-NEXT: memref.store %[[RA]], %shared_A[{{.*}}] : memref<4x5xf32, 3 : i64>
// CHECK: %[[RB:.*]] = memref.load %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK-NEXT: memref.store %[[RB]], %shared_B[{{.*}}] : memref<4x5xf32, 3 : i64>
// CHECK-NEXT: "gpu.barrier"() : () -> ()
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[K]], %[[STEP]] : index
// CHECK-NEXT: %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]] : index
// CHECK-NEXT: scf.if %[[MORE]] {
// CHECK: memref.load %A[{{.*}}] : memref<4x8xf32>
// CHECK-NEXT: memref.store {{.*}}, %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK: memref.load %B[{{.*}}] : memref<4x8xf32>
// CHECK-NEXT: memref.store {{.*}}, %prefetch[{{.*}}] : memref<2xf32, 5 : i64>
// CHECK-NEXT: }
// CHECK: scf.for
// CHECK: memref.load %shared_A[{{.*}}] : memref<4x5xf32, 3 : i64>

// With a second shared buffer per tile, a step reads one buffer while the
// registers fill the other.
// DOUBLE: %shared_A = memref.alloca() : memref<2x4x5xf32, 3 : i64>
// DOUBLE-NEXT: %shared_B = memref.alloca() : memref<2x4x5xf32, 3 : i64>
// DOUBLE: memref.load %shared_A[{{.*}}] : memref<2x4x5xf32, 3 : i64>

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4x8xf32>, memref<4x8xf32>, memref<4x4xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<4x8xf32>, %B: memref<4x8xf32>, %C: memref<4x4xf32>):
      %0 = arith.constant 0 : index
      %1 = arith.constant 2 : index
      %2 = arith.constant 1 : index
      %3 = arith.constant 4 : index
      %5 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %7 = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %shared_A = memref.alloca() : memref<4x5xf32, 3 : i64>
      %shared_B = memref.alloca() : memref<4x5xf32, 3 : i64>
      scf.for %c2 = %0 to %1 step %2 {
        "gpu.barrier"() : () -> ()
        %10 = arith.muli %3, %c2 : index
        %11 = arith.addi %5, %10 : index
        %12 = memref.load %A[%7, %11] : memref<4x8xf32>
        memref.store %12, %shared_A[%7, %5] : memref<4x5xf32, 3 : i64>
        %13 = memref.load %B[%7, %11] : memref<4x8xf32>
        memref.store %13, %shared_B[%7, %5] : memref<4x5xf32, 3 : i64>
        "gpu.barrier"() : () -> ()
        %14 = arith.cmpi eq, %c2, %0 : index
        scf.if %14 {
          %15 = arith.constant 0.000000e+00 : f32
          memref.store %15, %C[%7, %5] : memref<4x4xf32>
        } else {
        }
        scf.for %c3 = %0 to %3 step %2 {
          %16 = memref.load %shared_A[%7, %c3] : memref<4x5xf32, 3 : i64>
          %17 = memref.load %shared_B[%5, %c3] : memref<4x5xf32, 3 : i64>
          %18 = arith.mulf %16, %17 : f32
          %19 = memref.load %C[%7, %5] : memref<4x4xf32>
          %20 = arith.addf %19, %18 : f32
          memref.store %20, %C[%7, %5] : memref<4x4xf32>
        }
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "tmm_kernel0"} : () -> ()
  }) : () -> ()
}
