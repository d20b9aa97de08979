// RUN: tcir-opt %s -t cuda | filecheck %s

// nvgpu.subgroup_reduce: the threads of each warp get the combination of
// the warp's values (`tc_warp_reduce`, xor shuffles); nvgpu.subgroup_barrier
// is `__syncwarp()`.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4x32xf32>) -> (), kernel}> ({
    ^bb0(%F: memref<4x32xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %f = memref.load %F[%ty, %tx] : memref<4x32xf32>
      %fs = nvgpu.subgroup_reduce add %f : (f32) -> f32
      %fm = nvgpu.subgroup_reduce max %fs : (f32) -> f32
      nvgpu.subgroup_barrier
      memref.store %fm, %F[%ty, %tx] : memref<4x32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "rows", gpu.known_block_size = array<i32: 32, 4, 1>} : () -> ()
  }) : () -> ()
}
// CHECK:       template <typename T, typename F>
// CHECK-NEXT:  __device__ __forceinline__ T tc_warp_reduce(T value, F combine) {
// CHECK-NEXT:    for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
// CHECK-LABEL: void __launch_bounds__(128) rows(
// CHECK:         const float fs = tc_warp_reduce(F[ty * 32 + tx], [](float a, float b) { return a + b; });
// CHECK-NEXT:    const float fm = tc_warp_reduce(fs, [](float a, float b) { return tc_maximum(a, b); });
// CHECK-NEXT:    __syncwarp();
// CHECK-NEXT:    F[ty * 32 + tx] = fm;
