// RUN: tcir-opt %s -t cuda | filecheck %s

// A tiled matmul: a shared tile of A (padded to 33 columns) loaded by the
// block, barriers around its use, and a private accumulator per thread.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64x32xf32>, memref<32x64xf32>, memref<64x64xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<64x32xf32>, %B: memref<32x64xf32>, %C: memref<64x64xf32>):
      %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %As = memref.alloca() : memref<32x33xf32, 3>
      %acc = memref.alloca() : memref<2xf32, 5>
      %row = arith.muli %by, %c32 : index
      %i = arith.addi %row, %ty : index
      %a = memref.load %A[%i, %tx] : memref<64x32xf32>
      memref.store %a, %As[%ty, %tx] : memref<32x33xf32, 3>
      "gpu.barrier"() : () -> ()
      scf.for %r = %c0 to %c2 step %c1 {
        memref.store %zero, %acc[%r] : memref<2xf32, 5>
      }
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %As[%ty, %k] : memref<32x33xf32, 3>
        scf.for %r = %c0 to %c2 step %c1 {
          %j = arith.addi %tx, %r : index
          %b = memref.load %B[%k, %j] : memref<32x64xf32>
          %s = memref.load %acc[%r] : memref<2xf32, 5>
          %p = arith.mulf %x, %b : f32
          %t = arith.addf %s, %p : f32
          memref.store %t, %acc[%r] : memref<2xf32, 5>
        }
      }
      "gpu.barrier"() : () -> ()
      scf.for %r = %c0 to %c2 step %c2 {
        %j = arith.addi %tx, %r : index
        %v = memref.load %acc[%r] : memref<2xf32, 5>
        memref.store %v, %C[%i, %j] : memref<64x64xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "tiled", gpu.known_block_size = array<i32: 32, 32, 1>} : () -> ()
  }) : () -> ()
}

// CHECK:       extern "C" __global__ void __launch_bounds__(1024) tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
// CHECK-NEXT:    __shared__ float As[32][33];
// CHECK-NEXT:    const int by = blockIdx.y;
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const int ty = threadIdx.y;
// CHECK-NEXT:    float acc[2];
// CHECK-NEXT:    const int i = by * 32 + ty;
// CHECK-NEXT:    As[ty][tx] = A[i * 32 + tx];
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    for (int r = 0; r < 2; ++r) {
// CHECK-NEXT:      acc[r] = 0.0f;
// CHECK-NEXT:    }
// CHECK-NEXT:    for (int k = 0; k < 32; ++k) {
// CHECK-NEXT:      const float x = As[ty][k];
// CHECK-NEXT:      for (int r_1 = 0; r_1 < 2; ++r_1) {
// CHECK-NEXT:        acc[r_1] += x * B[k * 64 + tx + r_1];
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    for (int r_2 = 0; r_2 < 2; r_2 += 2) {
// CHECK-NEXT:      C[i * 64 + tx + r_2] = acc[r_2];
// CHECK-NEXT:    }
// CHECK-NEXT:  }
