// RUN: tcir-opt %s -p gpu-simplify-index | filecheck %s
// RUN: tcir-opt %s -p gpu-simplify-index -t cuda | filecheck %s --check-prefix=CUDA

// gpu-simplify-index: integer ops on constants fold (wrapping at the type's
// width; a division by zero stays), sums of adds, subtractions and products
// by constants become one linear form (terms in definition order, a positive
// one first), loop invariants move before their loop and equal values are
// computed once (the constants at the kernel's start).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64x64xf32>, memref<8xi32>) -> (), kernel}> ({
    ^bb0(%A: memref<64x64xf32>, %P: memref<8xi32>):
      %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c31 = arith.constant 31 : index
      %cm32 = arith.constant -32 : index
      %cm3 = arith.constant -3 : index
      // 31 + 1 is 32; x * 1, x + 0 and 0 * x are x, x and 0.
      %ub = arith.addi %c31, %c1 : index
      %one = arith.muli %ty, %c1 : index
      %same = arith.addi %one, %c0 : index
      %zero = arith.muli %c0, %by : index
      // (-32 * by + ty) + 8 * (4 * by + 1) is ty + 8.
      %a = arith.muli %cm32, %by : index
      %b = arith.addi %a, %ty : index
      %c = arith.muli %c4, %by : index
      %d = arith.addi %c, %c1 : index
      %e = arith.muli %c8, %d : index
      %row = arith.addi %b, %e : index
      // -3 - ty (no positive term: the constant first).
      %neg = arith.subi %cm3, %ty : index
      // Divisions, min, comparisons and selects of constants fold; 7 / 0 stays.
      %c7 = arith.constant 7 : index
      %fd = arith.floordivsi %cm3, %c4 : index
      %rs = arith.remsi %cm3, %c4 : index
      %mn = arith.minsi %fd, %rs : index
      %lt = arith.cmpi slt, %mn, %c0 : index
      %sel = arith.select %lt, %c7, %ty : index
      %bad = arith.divsi %c7, %c0 : index
      // i32 wraps: 2147483647 + 1 is -2147483648.
      %big = arith.constant 2147483647 : i32
      %i1 = arith.constant 1 : i32
      %wrap = arith.addi %big, %i1 : i32
      memref.store %wrap, %P[%zero] : memref<8xi32>
      scf.for %k = %c0 to %ub step %c1 {
        // Invariant in the loop, and computed twice: one value before it.
        %r1 = arith.addi %row, %zero : index
        %r2 = arith.addi %row, %zero : index
        %x = memref.load %A[%r1, %k] : memref<64x64xf32>
        memref.store %x, %A[%r2, %neg] : memref<64x64xf32>
        memref.store %x, %A[%same, %sel] : memref<64x64xf32>
        memref.store %x, %A[%ty, %bad] : memref<64x64xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// CHECK:       ^bb0(%A: memref<64x64xf32>, %P: memref<8xi32>):
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[CM3:.*]] = arith.constant -3 : index
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[WRAP:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
// CHECK-NEXT:    %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
// CHECK-NEXT:    %[[NEG:.*]] = arith.subi %[[CM3]], %ty : index
// CHECK-NEXT:    %[[BAD:.*]] = arith.divsi %[[C7]], %[[C0]] : index
// CHECK-NEXT:    memref.store %[[WRAP]], %P[%[[C0]]] : memref<8xi32>
// CHECK-NEXT:    %[[ROW:.*]] = arith.addi %ty, %[[C8]] : index
// CHECK-NEXT:    scf.for %k = %[[C0]] to %[[C32]] step %[[C1]] {
// CHECK-NEXT:      %[[X:.*]] = memref.load %A[%[[ROW]], %k] : memref<64x64xf32>
// CHECK-NEXT:      memref.store %[[X]], %A[%[[ROW]], %[[NEG]]] : memref<64x64xf32>
// CHECK-NEXT:      memref.store %[[X]], %A[%ty, %[[C7]]] : memref<64x64xf32>
// CHECK-NEXT:      memref.store %[[X]], %A[%ty, %[[BAD]]] : memref<64x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    "gpu.return"() : () -> ()

// CUDA:       extern "C" __global__ void k(float* __restrict__ A, int* __restrict__ P) {
// CUDA-NEXT:    const int ty = threadIdx.y;
// CUDA-NEXT:    P[0] = -2147483648;
// CUDA-NEXT:    for (int k = 0; k < 32; ++k) {
// CUDA-NEXT:      const float x = A[(ty + 8) * 64 + k];
// CUDA-NEXT:      A[(ty + 8) * 64 + (-3 - ty)] = x;
// CUDA-NEXT:      A[ty * 64 + 7] = x;
// CUDA-NEXT:      A[ty * 64 + ((int)7) / 0] = x;
// CUDA-NEXT:    }
// CUDA-NEXT:  }
