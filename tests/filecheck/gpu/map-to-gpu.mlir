// RUN: tcir-opt %s -p 'poly-map-to-gpu{blocks=4,2 threads=16,8}' | filecheck %s
// RUN: tcir-opt %s -p 'poly-map-to-gpu{blocks=4,2 threads=16,8},convert-poly-to-gpu' | filecheck %s --check-prefix=GPU
// RUN: tcir-opt %s -p 'poly-map-to-gpu{blocks=4,2 threads=4,8 warps=2,2}' | filecheck %s --check-prefix=WARPS
// RUN: not tcir-opt %s -p 'poly-map-to-gpu{threads=4,8,2 warps=2}' 2>&1 | filecheck %s --check-prefix=ERROR-WARPS

// tmm after max fusion: an outer parallel band (m, n) over both statements,
// the reduction band (kk), then the init and update statements.
// The outer band is strip-mined by the thread sizes; tiles go round-robin to
// blocks (n, innermost, to x), points to threads; kk is never mapped.
// CHECK-LABEL: poly.scop @tmm
// CHECK:       poly.context "[block_x, block_y, thread_x, thread_y] -> {  : 0 <= block_x <= 3 and 0 <= block_y <= 1 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 }"
// CHECK-NEXT:    poly.mark "kernel"
// CHECK-NEXT:      poly.filter "[block_y, block_x] -> { S0[m, n] : {{.*}}block_x{{.*}}block_y
// CHECK-NEXT:        poly.band "[{ S0[m, n] -> [(m - (m) mod 8)]; S1[m, n, kk] -> [(m - (m) mod 8)] }, { S0[m, n] -> [(n - (n) mod 16)]; S1[m, n, kk] -> [(n - (n) mod 16)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:          poly.filter "[thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 16 = 0
// CHECK-NEXT:            poly.band "[{ S0[m, n] -> [((m) mod 8)]; S1[m, n, kk] -> [((m) mod 8)] }, { S0[m, n] -> [((n) mod 16)]; S1[m, n, kk] -> [((n) mod 16)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:              poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(kk)] }]" permutable coincident = [0]

// warps=2,2: the band is strip-mined by 8x16 (threads times warps), the
// 2x2 sub-tiles (4 columns by 8 rows each) numbered by thread_z, x fastest:
// thread_z = 2 * (m mod 16 >= 8) + (n mod 8 >= 4), while thread_x and
// thread_y deal each sub-tile's points.
// WARPS-LABEL: poly.scop @tmm
// WARPS:       poly.context "[block_x, block_y, thread_x, thread_y, thread_z] -> {  : 0 <= block_x <= 3 and 0 <= block_y <= 1 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 and 0 <= thread_z <= 3 }"
// WARPS:       poly.band "[{ S0[m, n] -> [(m - (m) mod 16)]; S1[m, n, kk] -> [(m - (m) mod 16)] }, { S0[m, n] -> [(n - (n) mod 8)]; S1[m, n, kk] -> [(n - (n) mod 8)] }]"
// WARPS-NEXT:    poly.filter "[thread_z, thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 4 = 0 and 0 <= thread_z <= 3 and {{.*}} -8 + 4thread_z - n - 8*floor((thread_z)/2) <= 8*floor((-1 - n)/8) <= -5 + 4thread_z - n - 8*floor((thread_z)/2) and 16*floor((-1 - m)/16) >= -16 - m + 8*floor((thread_z)/2)
// WARPS-NEXT:      poly.band "[{ S0[m, n] -> [((m) mod 16)]; S1[m, n, kk] -> [((m) mod 16)] }, { S0[m, n] -> [((n) mod 8)]; S1[m, n, kk] -> [((n) mod 8)] }]"

// ERROR-WARPS: error: poly-map-to-gpu: warps must be positive counts for 1 or 2 given thread sizes, got warps=[2] threads=[4, 8, 2]

// One kernel: blocks loop over the m tiles with the grid stride, threads pick
// their point; the init and the update of a point run on the same thread,
// so no barrier is needed between them.
// GPU:       "gpu.module"() <{sym_name = "kernels"}>
// GPU:         "gpu.func"() <{function_type = (memref<64x32xf32>, memref<48x32xf32>, memref<64x48xf32>) -> (), kernel}>
// GPU:           %[[BX:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// GPU:           %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// GPU:           %[[BY:.*]] = "gpu.block_id"() <{dimension = #gpu<dim y>}>
// GPU:           %[[TY:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim y>}>
// GPU:           scf.if
// GPU:             %[[LO:.*]] = arith.muli %{{.*}}, %[[BY]] : index
// GPU:             %[[STEP:.*]] = arith.constant 16 : index
// GPU:             scf.for %c0 = %[[LO]] to %{{.*}} step %[[STEP]] {
// GPU:               memref.store
// GPU-NOT:           "gpu.barrier"()
// GPU:               scf.for %c4 =
// GPU:                 arith.addf
// GPU:           "gpu.return"()
// GPU:         }) {sym_name = "tmm_kernel0"}
// GPU-LABEL: func.func @tmm(%A: memref<64x32xf32>, %B: memref<48x32xf32>, %C: memref<64x48xf32>)
// GPU:         "gpu.launch_func"(%{{.*}}, %A, %B, %C) <{kernel = @kernels::@tmm_kernel0
builtin.module {
  tc.def @tmm(%A: !tc.tensor<f32, [64, 32]>, %B: !tc.tensor<f32, [48, 32]>) -> (%C: !tc.tensor<f32, [64, 48]>) {
    poly.scop @tmm params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 63 and 0 <= n <= 47 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = arith.constant 0.000000e+00 : f32
        tc.update %C[%m, %n] "=" %0
      }
      poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 63 and 0 <= n <= 47 and 0 <= kk <= 31 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
      ^bb0(%m_1: index, %n_1: index, %kk: index):
        %1 = tc.read %A[%m_1, %kk]
        %2 = tc.read %B[%n_1, %kk]
        %3 = arith.mulf %1, %2 : f32
        tc.update %C[%m_1, %n_1] "+=" %3
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 63 and 0 <= n <= 47; S1[m, n, kk] : 0 <= m <= 63 and 0 <= n <= 47 and 0 <= kk <= 31 }" {
        poly.band "[{ S0[m, n] -> [(m)]; S1[m, n, kk] -> [(m)] }, { S0[m, n] -> [(n)]; S1[m, n, kk] -> [(n)] }]" permutable coincident = [1, 1] {
          poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(kk)] }]" permutable coincident = [0] {
            poly.sequence {
              poly.filter "{ S0[m, n] }"
              poly.filter "{ S1[m, n, kk] }"
            }
          }
        }
      }
    }
  }
}
