// RUN: tcir-opt %s -t cuda | filecheck %s

// The width of index values: int when every memref is static with fewer than
// 2^31 elements, every index constant fits in 32 bits and no argument is an
// index scalar; long long otherwise (here: 2^31 elements, a 2^32 constant, an
// unsigned division computed on the unsigned type of the printed width).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<1024x1024xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<1024x1024xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c3 = arith.constant 3 : index
      %q = arith.divui %tx, %c3 : index
      %g = "gpu.global_id"() <{dimension = #gpu<dim y>}> : () -> index
      %v = arith.constant 1.0 : f32
      memref.store %v, %A[%q, %g] : memref<1024x1024xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "small"} : () -> ()
    "gpu.func"() <{function_type = (memref<2048x1048576xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<2048x1048576xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = arith.constant 1.0 : f32
      memref.store %v, %A[%tx, %tx] : memref<2048x1048576xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "huge"} : () -> ()
    "gpu.func"() <{function_type = (memref<32xf32>) -> (), kernel}> ({
    ^bb0(%A: memref<32xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %big = arith.constant 4294967296 : index
      %i = arith.remsi %big, %tx : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %A[%i] : memref<32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "wide_constant"} : () -> ()
  }) : () -> ()
}

// CHECK:       __global__ void small(float* __restrict__ A) {
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const int g = (int)(blockIdx.y * blockDim.y + threadIdx.y);
// CHECK-NEXT:    A[((int)((unsigned int)tx / (unsigned int)3)) * 1024 + g] = 1.0f;
// CHECK:       __global__ void huge(float* __restrict__ A) {
// CHECK-NEXT:    const long long tx = threadIdx.x;
// CHECK-NEXT:    A[tx * 1048576 + tx] = 1.0f;
// CHECK:       __global__ void wide_constant(float* __restrict__ A) {
// CHECK-NEXT:    const long long tx = threadIdx.x;
// CHECK-NEXT:    A[4294967296LL % tx] = 1.0f;
