// RUN: tcir-opt %s -t cuda | filecheck %s

// f32 math: `f`-suffixed CUDA functions, libm calls, NaN-propagating maximumf,
// literals (inf, nan, f suffix) and every cmpf predicate family.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    func.func private @erfcf(f32) -> f32
    "gpu.func"() <{function_type = (memref<16xf32>, memref<16xf32>, f32) -> (), kernel}> ({
    ^bb0(%X: memref<16xf32>, %Y: memref<16xf32>, %alpha: f32):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %X[%tx] : memref<16xf32>
      %inf = arith.constant 0x7F800000 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %nan = arith.constant 0x7FC00000 : f32
      %tenth = arith.constant 0.1 : f32
      %half = arith.constant -0.5 : f32
      %e = math.exp %x : f32
      %t = math.tanh %e : f32
      %er = math.erf %t : f32
      %ec = func.call @erfcf(%er) : (f32) -> f32
      %p = math.powf %ec, %alpha : f32
      %a = math.absf %p : f32
      %cs = math.copysign %a, %half : f32
      %at = math.atan2 %cs, %tenth : f32
      %f = math.fma %at, %alpha, %tenth : f32
      %sq = math.sqrt %f : f32
      %rs = math.rsqrt %sq : f32
      %re = math.roundeven %rs : f32
      %pi = arith.constant 3 : i32
      %pw = math.fpowi %re, %pi : f32, i32
      %mx = arith.maximumf %pw, %ninf : f32
      %mn = arith.minimumf %mx, %inf : f32
      %mxn = arith.maxnumf %mn, %nan : f32
      %mnn = arith.minnumf %mxn, %x : f32
      %neg = arith.negf %mnn : f32
      %nh = arith.negf %half : f32
      %d = arith.divf %neg, %nh : f32
      %lt = arith.cmpf olt, %d, %x : f32
      %une = arith.cmpf une, %d, %x : f32
      %uno = arith.cmpf uno, %d, %x : f32
      %one = arith.cmpf one, %d, %x : f32
      %ult = arith.cmpf ult, %d, %x : f32
      %c1 = arith.andi %lt, %une : i1
      %c2 = arith.ori %uno, %one : i1
      %c3 = arith.xori %c1, %c2 : i1
      %c4 = arith.andi %c3, %ult : i1
      %r = arith.select %c4, %d, %x : f32
      memref.store %r, %Y[%tx] : memref<16xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "math_f32"} : () -> ()
  }) : () -> ()
}

// CHECK-NOT:   #include
// CHECK:       __device__ __forceinline__ float tc_maximum(float a, float b) {
// CHECK:       __device__ __forceinline__ float tc_minimum(float a, float b) {
// CHECK:       extern "C" __global__ void math_f32(const float* __restrict__ X, float* __restrict__ Y, const float alpha) {
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const float x = X[tx];
// CHECK-NEXT:    const float d = -fminf(fmaxf(tc_minimum(tc_maximum(powf(rintf(rsqrtf(sqrtf(fmaf(atan2f(copysignf(fabsf(powf(erfcf(erff(tanhf(expf(x)))), alpha)), -0.5f), 0.1f), alpha, 0.1f)))), (float)3), -__int_as_float(0x7f800000)), __int_as_float(0x7f800000)), __int_as_float(0x7fc00000)), x) / -(-0.5f);
// CHECK-NEXT:    Y[tx] = (((d < x) & (d != x)) ^ ((d != d || x != x) | (d < x || d > x))) & !(d >= x) ? d : x;
// CHECK-NEXT:  }
