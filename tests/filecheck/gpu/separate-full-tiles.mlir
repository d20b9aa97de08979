// RUN: tcir-opt %s -p 'poly-separate-full-tiles' | filecheck %s
// RUN: tcir-opt %s -p 'poly-separate-full-tiles{max-kernels=0}' | filecheck %s --check-prefix=NONE

// A 40 x 72 output on 32 x 32 tiles accumulated in a register tile
// (private_C_0, 4 x 2 a thread), a block a tile: blocks (0, 0) and (0, 1)
// run full tiles. The block band goes under a sequence of their instances
// and the others', each over a copy of the subtree (the promotion copies'
// extension with it), whose thread loops are scaled to the thread's points
// first (rows 8 apart, columns 16 apart).

// CHECK:      poly.mark "kernel" {
// CHECK-NEXT:   poly.filter "[block_y, block_x] -> { S0[m, n] : block_y <= 1 and block_x <= 2
// CHECK-NEXT:     poly.sequence {
// CHECK-NEXT:       poly.filter "[block_x, block_y] -> { S0[m, n] : block_y = 0 and 0 <= block_x <= 1 and 0 <= m <= 31 and 32block_x <= n <= 31 + 32block_x; S1[m, n, kk] : block_y = 0 and 0 <= block_x <= 1 and 0 <= m <= 31 and 32block_x <= n <= 31 + 32block_x and 0 <= kk <= 3 }" {
// CHECK-NEXT:         poly.band "[block_x, block_y] -> [{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(0)] }, { S0[m, n] -> [(block_x)]; S1[m, n, kk] -> [(block_x)] }]"
// CHECK-NEXT:           poly.extension {{.*}}write_private_C_0
// CHECK:                  poly.band "[thread_x, thread_y, block_y, block_x] -> [{ S1[m, n, kk] -> [(floor((m)/8))] }, { S1[m, n, kk] -> [(-2block_x + floor((n)/16))] }]"
// CHECK:            poly.filter "[block_x, block_y] -> { S0[m, n] : 0 <= m <= 39 and n <= 71 and ((block_y = 1 and block_x >= 0 and m >= 32 and 32block_x <= n <= 31 + 32block_x) or (block_x = 2 and block_y = 0 and m <= 31 and n >= 64));
// CHECK-NEXT:         poly.band "[block_x, block_y] -> [{ S0[m, n] -> [(block_y)]; S1[m, n, kk] -> [(block_y)] }, { S0[m, n] -> [(block_x)]; S1[m, n, kk] -> [(block_x)] }]"
// CHECK-NEXT:           poly.extension {{.*}}write_private_C_0
// CHECK:                  poly.band "[thread_x, thread_y, block_y, block_x] -> [{ S1[m, n, kk] -> [(-4block_y + floor((m)/8))] }, { S1[m, n, kk] -> [(-2block_x + floor((n)/16))] }]"

// NONE:      poly.mark "kernel" {
// NONE-NEXT:   poly.filter
// NONE-NEXT:     poly.band "[{ S0[m, n] -> [(floor((m)/32))]; S1[m, n, kk] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))]; S1[m, n, kk] -> [(floor((n)/32))] }]"
builtin.module {
  tc.def @tmm(%A: !tc.tensor<f32, [40, 4]>, %B: !tc.tensor<f32, [72, 4]>) -> (%C: !tc.tensor<f32, [40, 72]>) {
    poly.scop @tmm params [] context "{  :  }" attributes {buffers = {private_C_0 = memref<4x2xf32, 5 : i64>}} {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 39 and 0 <= n <= 71 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = arith.constant 0.000000e+00 : f32
        tc.update %C[%m, %n] "=" %0 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1) -> (((d0 floordiv 8) + ((d0 floordiv 32) * -4)), ((d1 floordiv 16) + ((d1 floordiv 32) * -2)))>}
      }
      poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 39 and 0 <= n <= 71 and 0 <= kk <= 3 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
      ^bb0(%m_1: index, %n_1: index, %kk: index):
        %1 = tc.read %A[%m_1, %kk]
        %2 = tc.read %B[%n_1, %kk]
        %3 = arith.mulf %1, %2 : f32
        tc.update %C[%m_1, %n_1] "+=" %3 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2) -> (((d0 floordiv 8) + ((d0 floordiv 32) * -4)), ((d1 floordiv 16) + ((d1 floordiv 32) * -2)))>}
      }
      poly.stmt @write_private_C_0 domain "[thread_x, thread_y] -> { write_private_C_0[p0, p1, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 16 = 0 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 and 0 <= p0 <= 1 and p1 >= 0 and 32p1 <= 71 - thread_x and 32p0 <= a0 <= 39 and a0 <= 31 + 32p0 and 32p1 <= a1 <= 71 and a1 <= 31 + 32p1 }" reads "[thread_x, thread_y] -> {  }" writes "[thread_x, thread_y] -> { write_private_C_0[p0, p1, t0 = thread_x, t1 = thread_y, a0, a1] -> C[a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 16 = 0 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 and 0 <= p0 <= 1 and p1 >= 0 and 32p1 <= 71 - thread_x and 32p0 <= a0 <= 39 and a0 <= 31 + 32p0 and 32p1 <= a1 <= 71 and a1 <= 31 + 32p1 }" {
      ^bb0(%p0: index, %p1: index, %t0: index, %t1: index, %a0: index, %a1: index):
        %4 = tc.read %C[%a0, %a1] attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2, d3, d4, d5) -> (((d0 * -4) + (((d3 * -1) + d4) floordiv 8)), ((d1 * -2) + (((d2 * -1) + d5) floordiv 16)))>}
        tc.update %C[%a0, %a1] "=" %4
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 39 and 0 <= n <= 71; S1[m, n, kk] : 0 <= m <= 39 and 0 <= n <= 71 and 0 <= kk <= 3 }" {
        poly.context "[block_x, block_y, thread_x, thread_y] -> {  : 0 <= block_x <= 2 and 0 <= block_y <= 1 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 }" {
          poly.mark "kernel" {
            poly.filter "[block_y, block_x] -> { S0[m, n] : block_y <= 1 and block_x <= 2 and 0 <= m <= 39 and 0 <= n <= 71 and -127 - 32block_x + n <= 96*floor((-1 - block_x)/3) <= -96 - 32block_x + n and -31 + 32block_y + m <= 64*floor((1 + block_y)/2) <= 32block_y + m; S1[m, n, kk] : block_y <= 1 and block_x <= 2 and 0 <= m <= 39 and 0 <= n <= 71 and 0 <= kk <= 3 and -127 - 32block_x + n <= 96*floor((-1 - block_x)/3) <= -96 - 32block_x + n and -31 + 32block_y + m <= 64*floor((1 + block_y)/2) <= 32block_y + m }" {
              poly.band "[{ S0[m, n] -> [(floor((m)/32))]; S1[m, n, kk] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))]; S1[m, n, kk] -> [(floor((n)/32))] }]" permutable coincident = [1, 1] {
                poly.extension "[thread_x, thread_y, block_y, block_x] -> { [i0, i1] -> write_private_C_0[p0 = i0, p1 = i1, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 16 = 0 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 and 0 <= i0 <= 1 and i1 >= 0 and 32i1 <= 71 - thread_x and 32i0 <= a0 <= 39 and a0 <= 31 + 32i0 and 32i1 <= a1 <= 71 and a1 <= 31 + 32i1 }" {
                  poly.sequence {
                    poly.filter "[block_y, block_x] -> { S0[m, n]; S1[m, n, kk] }" {
                      poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/4))] }]" permutable coincident = [0] {
                        poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 4)] }]" permutable coincident = [0] {
                          poly.sequence {
                            poly.filter "[thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 16 = 0 and thread_y <= 7 and thread_x <= 15 and 0 <= m <= 39 and 0 <= n <= 71 }" {
                              poly.band "[{ S0[m, n] -> [((m) mod 32)] }, { S0[m, n] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
                            }
                            poly.filter "[thread_y, thread_x] -> { S1[m, n, kk] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 16 = 0 and thread_y <= 7 and thread_x <= 15 and 0 <= m <= 39 and 0 <= n <= 71 and 0 <= kk <= 3 }" {
                              poly.band "[{ S1[m, n, kk] -> [((m) mod 32)] }, { S1[m, n, kk] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
                            }
                          }
                        }
                      }
                    }
                    poly.filter "[thread_x, thread_y, block_y, block_x] -> { write_private_C_0[p0, p1, t0, t1, a0, a1] }" {
                      poly.sequence {
                        poly.filter "[thread_x, thread_y] -> { write_private_C_0[p0, p1, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 16 = 0 and 0 <= thread_x <= 15 and 0 <= thread_y <= 7 and 0 <= p0 <= 1 and p1 >= 0 and 32p1 <= 71 - thread_x and 32p0 <= a0 <= 39 and a0 <= 31 + 32p0 and 32p1 <= a1 <= 71 and a1 <= 31 + 32p1 }" {
                          poly.band "[{ write_private_C_0[p0, p1, t0, t1, a0, a1] -> [(a0)] }, { write_private_C_0[p0, p1, t0, t1, a0, a1] -> [(a1)] }]" coincident = [0, 0]
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

