// RUN: tcir-opt %s -t cuda | filecheck %s

// bf16 is __nv_bfloat16 from cuda_bf16.h, as f16 is __half: operators for arithmetic and comparisons,
// math functions computed in float, conversions through the intrinsics.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    func.func private @erfc(bf16) -> bf16
    "gpu.func"() <{function_type = (memref<8xbf16>, memref<8xf32>) -> (), kernel}> ({
    ^bb0(%H: memref<8xbf16>, %F: memref<8xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %h = memref.load %H[%tx] : memref<8xbf16>
      %c = arith.constant 1.5 : bf16
      %s = arith.addf %h, %c : bf16
      %e = math.exp %s : bf16
      %m = arith.maximumf %e, %c : bf16
      %x = func.call @erfc(%m) : (bf16) -> bf16
      %lt = arith.cmpf olt, %x, %c : bf16
      %y = arith.select %lt, %x, %c : bf16
      %w = arith.extf %y : bf16 to f32
      %i = arith.fptosi %y : bf16 to i32
      %hi = arith.sitofp %i : i32 to bf16
      %back = arith.truncf %w : f32 to bf16
      %z = arith.mulf %back, %hi : bf16
      memref.store %z, %H[%tx] : memref<8xbf16>
      memref.store %w, %F[%tx] : memref<8xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "bhalves"} : () -> ()
  }) : () -> ()
}

// CHECK:       #include <cuda_bf16.h>
// CHECK:       extern "C" __global__ void bhalves(__nv_bfloat16* __restrict__ H, float* __restrict__ F) {
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const __nv_bfloat16 x = __float2bfloat16(erfcf(__bfloat162float(__float2bfloat16(tc_maximum(__bfloat162float(__float2bfloat16(expf(__bfloat162float(H[tx] + __float2bfloat16(1.5f))))), __bfloat162float(__float2bfloat16(1.5f)))))));
// CHECK-NEXT:    const __nv_bfloat16 y = x < __float2bfloat16(1.5f) ? x : __float2bfloat16(1.5f);
// CHECK-NEXT:    const float w = __bfloat162float(y);
// CHECK-NEXT:    H[tx] = __float2bfloat16(w) * __float2bfloat16((float)(int)__bfloat162float(y));
// CHECK-NEXT:    F[tx] = w;
// CHECK-NEXT:  }
