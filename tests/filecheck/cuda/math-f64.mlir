// RUN: tcir-opt %s -t cuda | filecheck %s

// f64 math: unsuffixed CUDA functions, libm calls by their double names,
// double literals, casts between float widths and integers.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    func.func private @erfc(f64) -> f64
    func.func private @lgamma(f64) -> f64
    "gpu.func"() <{function_type = (memref<4x8xf64>, memref<4x8xf32>, memref<4x8xi32>) -> (), kernel}> ({
    ^bb0(%X: memref<4x8xf64>, %Y: memref<4x8xf32>, %Z: memref<4x8xi32>):
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %x = memref.load %X[%bx, %ty] : memref<4x8xf64>
      %ninf = arith.constant 0xFFF0000000000000 : f64
      %third = arith.constant 0.33333333333333331 : f64
      %l = math.log1p %x : f64
      %s = math.sin %l : f64
      %c = func.call @erfc(%s) : (f64) -> f64
      %g = func.call @lgamma(%c) : (f64) -> f64
      %m = arith.maximumf %g, %ninf : f64
      %p = arith.mulf %m, %third : f64
      %fl = math.floor %p : f64
      %y = arith.truncf %fl : f64 to f32
      %i = arith.fptosi %y : f32 to i32
      %e = arith.extf %y : f32 to f64
      %w = arith.sitofp %i : i32 to f64
      %sum = arith.addf %e, %w : f64
      %back = arith.truncf %sum : f64 to f32
      memref.store %back, %Y[%bx, %ty] : memref<4x8xf32>
      memref.store %i, %Z[%bx, %ty] : memref<4x8xi32>
      "gpu.return"() : () -> ()
    }) {sym_name = "math_f64"} : () -> ()
  }) : () -> ()
}

// CHECK:       __device__ __forceinline__ double tc_maximum(double a, double b) {
// CHECK:       extern "C" __global__ void math_f64(const double* __restrict__ X, float* __restrict__ Y, int* __restrict__ Z) {
// CHECK-NEXT:    const int bx = blockIdx.x;
// CHECK-NEXT:    const int ty = threadIdx.y;
// CHECK-NEXT:    const float y = (float)floor(tc_maximum(lgamma(erfc(sin(log1p(X[bx * 8 + ty])))), -__longlong_as_double(0x7ff0000000000000LL)) * 0.3333333333333333);
// CHECK-NEXT:    const int i = (int)y;
// CHECK-NEXT:    Y[bx * 8 + ty] = (float)((double)y + (double)i);
// CHECK-NEXT:    Z[bx * 8 + ty] = i;
// CHECK-NEXT:  }
