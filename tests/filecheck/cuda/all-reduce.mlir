// RUN: tcir-opt %s -t cuda | filecheck %s

// gpu.all_reduce: every thread of the block gets the combination of all
// their values (`tc_all_reduce<threads>`, its combine a lambda per site):
// sums, products, NaN-propagating float maxima and minima (as
// arith.maximumf), integer maxima and minima.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<96xf32>, memref<96xf64>, memref<96xi32>, memref<96xi64>) -> (), kernel}> ({
    ^bb0(%F: memref<96xf32>, %D: memref<96xf64>, %I: memref<96xi32>, %L: memref<96xi64>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %f = memref.load %F[%tx] : memref<96xf32>
      %d = memref.load %D[%tx] : memref<96xf64>
      %i = memref.load %I[%tx] : memref<96xi32>
      %l = memref.load %L[%tx] : memref<96xi64>
      %fs = "gpu.all_reduce"(%f) <{op = #gpu<all_reduce_op add>, uniform}> ({}) : (f32) -> f32
      %fm = "gpu.all_reduce"(%fs) <{op = #gpu<all_reduce_op max>, uniform}> ({}) : (f32) -> f32
      %dm = "gpu.all_reduce"(%d) <{op = #gpu<all_reduce_op min>, uniform}> ({}) : (f64) -> f64
      %ip = "gpu.all_reduce"(%i) <{op = #gpu<all_reduce_op mul>, uniform}> ({}) : (i32) -> i32
      %lm = "gpu.all_reduce"(%l) <{op = #gpu<all_reduce_op max>, uniform}> ({}) : (i64) -> i64
      memref.store %fm, %F[%tx] : memref<96xf32>
      memref.store %dm, %D[%tx] : memref<96xf64>
      memref.store %ip, %I[%tx] : memref<96xi32>
      memref.store %lm, %L[%tx] : memref<96xi64>
      "gpu.return"() : () -> ()
    }) {sym_name = "reduce", gpu.known_block_size = array<i32: 32, 3, 1>} : () -> ()
  }) : () -> ()
}
// CHECK:       template <int THREADS, typename T, typename F>
// CHECK-NEXT:  __device__ __forceinline__ T tc_all_reduce(T value, F combine) {
// CHECK-LABEL: void __launch_bounds__(96) reduce(
// CHECK:         const float fs = tc_all_reduce<96>(F[tx], [](float a, float b) { return a + b; });
// CHECK-NEXT:    const float fm = tc_all_reduce<96>(fs, [](float a, float b) { return tc_maximum(a, b); });
// CHECK-NEXT:    const double dm = tc_all_reduce<96>(d, [](double a, double b) { return tc_minimum(a, b); });
// CHECK-NEXT:    const int ip = tc_all_reduce<96>(i, [](int a, int b) { return a * b; });
// CHECK-NEXT:    const long long lm = tc_all_reduce<96>(l, [](long long a, long long b) { return a > b ? a : b; });
