// RUN: tcir-opt %s -p gpu-hoist-loads | filecheck %s
// RUN: tcir-opt %s -p gpu-hoist-loads -t cuda | filecheck %s --check-prefix=CUDA

// gpu-hoist-loads: in each run of ops between regions and barriers, the loads
// of global memrefs the kernel only reads move first, with the index
// arithmetic of their subscripts, in their order; the rest keep theirs.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({

    // Two points of an elementwise layer: both loads before the first division.
    // CHECK-LABEL: function_type = (memref<64xf32>, memref<64xf32>) -> ()
    // CHECK:         %tx = "gpu.thread_id"()
    // CHECK-NEXT:    %[[X0:.*]] = memref.load %X[%tx]
    // CHECK-NEXT:    %c32 = arith.constant 32
    // CHECK-NEXT:    %[[J:.*]] = arith.addi %tx, %c32
    // CHECK-NEXT:    %[[X1:.*]] = memref.load %X[%[[J]]]
    // CHECK:         %private = memref.alloca()
    // CHECK-NEXT:    %{{.*}} = arith.divf %one, %[[X0]]
    // CHECK-NEXT:    memref.store
    // CHECK-NEXT:    %{{.*}} = arith.divf %one, %[[X1]]
    // CHECK:         memref.store %{{.*}}, %Y[%tx]
    // CUDA-LABEL: two_points(
    // The first load prints inside the first division, after the second load.
    // CUDA:         const float [[V1:[a-z0-9]+]] = X[tx + 32];
    // CUDA-NEXT:    float private_[2];
    // CUDA-NEXT:    private_[0] = 1.0f / X[tx];
    // CUDA-NEXT:    private_[1] = 1.0f / [[V1]];
    "gpu.func"() <{function_type = (memref<64xf32>, memref<64xf32>) -> (), kernel}> ({
    ^bb0(%X: memref<64xf32>, %Y: memref<64xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %one = arith.constant 1.000000e+00 : f32
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %private = memref.alloca() : memref<2xf32, 5 : i64>
      %x0 = memref.load %X[%tx] : memref<64xf32>
      %y0 = arith.divf %one, %x0 : f32
      memref.store %y0, %private[%c0] : memref<2xf32, 5 : i64>
      %j = arith.addi %tx, %c32 : index
      %x1 = memref.load %X[%j] : memref<64xf32>
      %y1 = arith.divf %one, %x1 : f32
      memref.store %y1, %private[%c1] : memref<2xf32, 5 : i64>
      %p0 = memref.load %private[%c0] : memref<2xf32, 5 : i64>
      memref.store %p0, %Y[%tx] : memref<64xf32>
      %p1 = memref.load %private[%c1] : memref<2xf32, 5 : i64>
      memref.store %p1, %Y[%j] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "two_points"} : () -> ()

    // A load whose subscript is read from private memory stays; a gathered
    // read (its subscript loaded from a read-only index tensor) moves with that
    // load; nothing crosses the barrier or the loop; a memref the kernel
    // writes (Z) is not hoisted.
    // CHECK-LABEL: function_type = (memref<64xf32>, memref<64xi32>, memref<64xf32>) -> ()
    // CHECK:         %[[I:.*]] = memref.load %I[%tx]
    // CHECK-NEXT:    %[[S:.*]] = arith.index_cast %[[I]]
    // CHECK-NEXT:    %[[E:.*]] = memref.load %X[%[[S]]]
    // CHECK:         %[[Z:.*]] = memref.load %Z[%tx]
    // CHECK-NEXT:    memref.store %[[Z]], %private[%c0]
    // CHECK-NEXT:    %[[K:.*]] = memref.load %private[%c0]
    // CHECK-NEXT:    %[[KI:.*]] = arith.fptosi %[[K]]
    // CHECK-NEXT:    %[[KS:.*]] = arith.index_cast %[[KI]]
    // CHECK-NEXT:    %{{.*}} = memref.load %X[%[[KS]]]
    // CHECK-NEXT:    %{{.*}} = arith.divf
    // CHECK-NEXT:    "gpu.barrier"()
    // CHECK-NEXT:    memref.store %[[E]], %Z[%tx]
    // CHECK-NEXT:    scf.for
    // CHECK-NEXT:    }
    // CHECK-NEXT:    %[[A:.*]] = memref.load %X[%c1]
    // CHECK-NEXT:    %[[D:.*]] = arith.divf %[[A]], %[[A]]
    // CHECK-NEXT:    memref.store %[[D]], %Z[%c1]
    "gpu.func"() <{function_type = (memref<64xf32>, memref<64xi32>, memref<64xf32>) -> (), kernel}> ({
    ^bb0(%X: memref<64xf32>, %I: memref<64xi32>, %Z: memref<64xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %private = memref.alloca() : memref<1xf32, 5 : i64>
      %z = memref.load %Z[%tx] : memref<64xf32>
      memref.store %z, %private[%c0] : memref<1xf32, 5 : i64>
      %k = memref.load %private[%c0] : memref<1xf32, 5 : i64>
      %ki = arith.fptosi %k : f32 to i32
      %ks = arith.index_cast %ki : i32 to index
      %xk = memref.load %X[%ks] : memref<64xf32>
      %i = memref.load %I[%tx] : memref<64xi32>
      %s = arith.index_cast %i : i32 to index
      %e = memref.load %X[%s] : memref<64xf32>
      %sum = arith.divf %xk, %e : f32
      "gpu.barrier"() : () -> ()
      memref.store %e, %Z[%tx] : memref<64xf32>
      scf.for %iv = %c0 to %c4 step %c1 {
        scf.yield
      }
      %a = memref.load %X[%c1] : memref<64xf32>
      %d = arith.divf %a, %a : f32
      memref.store %d, %Z[%c1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "fences"} : () -> ()

    // A run of plain arithmetic (no division, no math function) keeps its order.
    // CHECK-LABEL: function_type = (memref<64xf32>) -> ()
    // CHECK:         %[[P0:.*]] = memref.load %X[%tx]
    // CHECK-NEXT:    %[[Q0:.*]] = arith.mulf %[[P0]], %[[P0]]
    // CHECK-NEXT:    memref.store %[[Q0]], %X0[%c0]
    // CHECK-NEXT:    %[[P1:.*]] = memref.load %X[%c1]
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%X: memref<64xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %X0 = memref.alloca() : memref<2xf32, 5 : i64>
      %p0 = memref.load %X[%tx] : memref<64xf32>
      %q0 = arith.mulf %p0, %p0 : f32
      memref.store %q0, %X0[%c0] : memref<2xf32, 5 : i64>
      %p1 = memref.load %X[%c1] : memref<64xf32>
      %q1 = arith.mulf %p1, %p1 : f32
      memref.store %q1, %X0[%c1] : memref<2xf32, 5 : i64>
      "gpu.return"() : () -> ()
    }) {sym_name = "plain"} : () -> ()
  }) : () -> ()
}
