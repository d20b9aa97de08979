// RUN: tcir-opt %s -p scf-for-loop-specialization | filecheck %s
// RUN: tcir-opt %s -p 'scf-for-loop-specialization{max-trip-count=4}' | filecheck %s --check-prefix=SHORT
// RUN: not tcir-opt %s -p 'scf-for-loop-specialization{max-trip-count=0}' 2>&1 | filecheck %s --check-prefix=ERROR

// scf-for-loop-specialization: a loop bounded by min(C, x) + c runs as a
// loop to the constant C + c when its bound reaches it, and as itself
// otherwise; loops inside it of constant trip counts (a register tile's)
// are copied along. Loops with a barrier, loop-carried values, a constant
// bound, a loop inside whose trip count varies or more than
// max-trip-count iterations stay.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>, index) -> (), kernel}> ({
    ^bb0(%A: memref<64xf32>, %n: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c7 = arith.constant 7 : index
      %f = arith.constant 1.0 : f32
      %m = arith.minsi %c7, %n : index
      %ub = arith.addi %m, %c1 : index
      // A point loop of up to 8 steps: versioned.
      scf.for %i = %c0 to %ub step %c1 {
        memref.store %f, %A[%i] : memref<64xf32>
      }
      // min(x, 7) without an offset, step 2: up to 4 steps.
      %m2 = arith.minsi %n, %c7 : index
      scf.for %j = %c0 to %m2 step %c2 {
        memref.store %f, %A[%j] : memref<64xf32>
      }
      // A barrier in the body: left alone.
      scf.for %k = %c0 to %ub step %c1 {
        "gpu.barrier"() : () -> ()
      }
      // Loop-carried values: left alone.
      %s = scf.for %l = %c0 to %ub step %c1 iter_args(%acc = %f) -> (f32) {
        %t = arith.addf %acc, %f : f32
        scf.yield %t : f32
      }
      memref.store %s, %A[%c0] : memref<64xf32>
      // A loop of 2 iterations inside: versioned with it.
      scf.for %p = %c0 to %ub step %c1 {
        %p2 = arith.addi %p, %c2 : index
        scf.for %q = %p to %p2 step %c1 {
          memref.store %f, %A[%q] : memref<64xf32>
        }
      }
      // A loop inside whose trip count varies: the outer loop stays.
      scf.for %r = %c0 to %ub step %c1 {
        scf.for %t2 = %c0 to %n step %c1 {
          memref.store %f, %A[%t2] : memref<64xf32>
        }
      }
      // A constant bound already: left alone.
      %c8 = arith.constant 8 : index
      scf.for %o = %c0 to %c8 step %c1 {
        memref.store %f, %A[%o] : memref<64xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "specialize"} : () -> ()
  }) : () -> ()
}

// CHECK-LABEL: ^bb0(%A
// CHECK:         %[[UB:.*]] = arith.addi %{{.*}}, %c1 : index
// CHECK:         %[[FULL:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[UB]], %[[FULL]] : index
// CHECK-NEXT:    scf.if %[[EQ]] {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[FULL]] step %c1 {
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[UB]] step %c1 {
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         %[[M2:.*]] = arith.minsi %n, %c7 : index
// CHECK-NEXT:    %[[FULL2:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[EQ2:.*]] = arith.cmpi eq, %[[M2]], %[[FULL2]] : index
// CHECK-NEXT:    scf.if %[[EQ2]] {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[FULL2]] step %c2 {
// CHECK:         } else {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[M2]] step %c2 {
// CHECK:         scf.for %{{.*}} = %c0 to %[[UB]] step %c1 {
// CHECK-NEXT:      "gpu.barrier"
// CHECK:         scf.for %{{.*}} = %c0 to %[[UB]] step %c1 iter_args
// CHECK:         %[[FULL3:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[EQ3:.*]] = arith.cmpi eq, %[[UB]], %[[FULL3]] : index
// CHECK-NEXT:    scf.if %[[EQ3]] {
// CHECK-NEXT:      scf.for %[[P:.*]] = %c0 to %[[FULL3]] step %c1 {
// CHECK-NEXT:        %[[P2:.*]] = arith.addi %[[P]], %c2 : index
// CHECK-NEXT:        scf.for %{{.*}} = %[[P]] to %[[P2]] step %c1 {
// CHECK:         } else {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %[[UB]] step %c1 {
// CHECK-NOT:     scf.if
// CHECK:         scf.for %{{.*}} = %c0 to %[[UB]] step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %n step %c1 {
// CHECK:         scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NOT:     scf.if

// With at most 4 steps, the first loop (8) stays and the second (4) is versioned.
// SHORT-LABEL: ^bb0(%A
// SHORT:         %[[UB:.*]] = arith.addi %{{.*}}, %c1 : index
// SHORT-NEXT:    scf.for %{{.*}} = %c0 to %[[UB]] step %c1 {
// SHORT:         arith.cmpi eq
// SHORT-NEXT:    scf.if

// ERROR: error: scf-for-loop-specialization: max-trip-count must be positive, got 0
