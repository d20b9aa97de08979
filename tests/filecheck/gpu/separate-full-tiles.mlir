// RUN: tcir-opt %s -p 'poly-separate-full-tiles' | filecheck %s
// RUN: tcir-opt %s -p 'poly-separate-full-tiles{max-kernels=0}' | filecheck %s --check-prefix=NONE

// A 40 x 72 output on 32 x 32 tiles, a block a tile: blocks (0, 0) and
// (0, 1) run full tiles. The block band goes under a sequence of their
// instances and the others', each over a copy of the subtree (whose thread
// loops are scaled to the thread's points first: rows 8 apart).

// CHECK:      poly.mark "kernel" {
// CHECK-NEXT:   poly.filter "[block_y, block_x] -> { S0[m, n] : 32block_y <= m <= 31 + 32block_y and 32block_x <= n <= 31 + 32block_x }" {
// CHECK-NEXT:     poly.sequence {
// CHECK-NEXT:       poly.filter "[block_x, block_y] -> { S0[m, n] : block_y = 0 and 0 <= block_x <= 1 and 0 <= m <= 31 and 32block_x <= n <= 31 + 32block_x }" {
// CHECK-NEXT:         poly.band "[block_x, block_y] -> [{ S0[m, n] -> [(0)] }, { S0[m, n] -> [(block_x)] }]"
// CHECK-NEXT:           poly.filter
// CHECK-NEXT:             poly.band "[block_x, block_y, thread_y, thread_x] -> [{ S0[m, n] -> [(floor((m)/8))] }, { S0[m, n] -> [(-32block_x + n)] }]"
// CHECK:            poly.filter "[block_x, block_y] -> { S0[m, n] : 0 <= m <= 39 and n <= 71 and ((block_y = 1 and block_x >= 0 and m >= 32 and 32block_x <= n <= 31 + 32block_x) or (block_x = 2 and block_y = 0 and m <= 31 and n >= 64)) }" {
// CHECK-NEXT:         poly.band "[block_x, block_y] -> [{ S0[m, n] -> [(block_y)] }, { S0[m, n] -> [(block_x)] }]"

// NONE:      poly.mark "kernel" {
// NONE-NEXT:   poly.filter
// NONE-NEXT:     poly.band "[{ S0[m, n] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))] }]"
builtin.module {
  tc.def @add(%A: !tc.tensor<f32, [40, 72]>) -> (%C: !tc.tensor<f32, [40, 72]>) {
    poly.scop @add params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 39 and 0 <= n <= 71 }" reads "{ S0[m, n] -> A[m, n] }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = tc.read %A[%m, %n]
        %1 = arith.constant 1.000000e+00 : f32
        %2 = arith.addf %0, %1 : f32
        tc.update %C[%m, %n] "=" %2
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 39 and 0 <= n <= 71 }" {
        poly.context "[block_x, block_y, thread_x, thread_y] -> {  : 0 <= block_x <= 2 and 0 <= block_y <= 1 and 0 <= thread_x <= 31 and 0 <= thread_y <= 7 }" {
          poly.mark "kernel" {
            poly.filter "[block_y, block_x] -> { S0[m, n] : block_y = floor(m/32) and block_x = floor(n/32) }" {
              poly.band "[{ S0[m, n] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))] }]" permutable coincident = [1, 1] {
                poly.filter "[thread_y, thread_x] -> { S0[m, n] : (m - thread_y) mod 8 = 0 and (n - thread_x) mod 32 = 0 }" {
                  poly.band "[{ S0[m, n] -> [((m) mod 32)] }, { S0[m, n] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
                }
              }
            }
          }
        }
      }
    }
  }
}
