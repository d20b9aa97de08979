// RUN: tcir-opt %s -t cuda | filecheck %s

// f16 is __half from cuda_fp16.h: operators for arithmetic and comparisons,
// math functions computed in float, conversions through the intrinsics.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    func.func private @erfc(f16) -> f16
    "gpu.func"() <{function_type = (memref<8xf16>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%H: memref<8xf16>, %F: memref<8xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %h = memref.load %H[%tx] : memref<8xf16>
      %c = arith.constant 1.5 : f16
      %s = arith.addf %h, %c : f16
      %e = math.exp %s : f16
      %m = arith.maximumf %e, %c : f16
      %x = func.call @erfc(%m) : (f16) -> f16
      %lt = arith.cmpf olt, %x, %c : f16
      %y = arith.select %lt, %x, %c : f16
      %w = arith.extf %y : f16 to f32
      %i = arith.fptosi %y : f16 to i32
      %hi = arith.sitofp %i : i32 to f16
      %back = arith.truncf %w : f32 to f16
      %z = arith.mulf %back, %hi : f16
      memref.store %z, %H[%tx] : memref<8xf16>
      memref.store %w, %F[%tx] : memref<8xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "halves"} : () -> ()
  }) : () -> ()
}

// CHECK:       #include <cuda_fp16.h>
// CHECK:       extern "C" __global__ void halves(__half* __restrict__ H, float* __restrict__ F) {
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const __half x = __float2half(erfcf(__half2float(__float2half(tc_maximum(__half2float(__float2half(expf(__half2float(H[tx] + __float2half(1.5f))))), __half2float(__float2half(1.5f)))))));
// CHECK-NEXT:    const __half y = x < __float2half(1.5f) ? x : __float2half(1.5f);
// CHECK-NEXT:    const float w = __half2float(y);
// CHECK-NEXT:    H[tx] = __float2half(w) * __float2half((float)(int)__half2float(y));
// CHECK-NEXT:    F[tx] = w;
// CHECK-NEXT:  }
