// RUN: tcir-opt %s -p poly-map-to-mma | filecheck %s

// A 16x16x8 transposed matmul on one warp (threads=[4, 8]) with A and B in
// shared tiles and C in registers: the update becomes TF32 mma.sync m16n8k8.
// A thread's statement instance now stands for its fragment: rows m and m + 8,
// k columns 2 (n mod 4) and one more, two columns of B, four accumulators.

// CHECK: poly.stmt @S1 domain "{ S1[m, n, kk = 0] : 0 <= m <= 7 and 0 <= n <= 15 and 8*floor((n)/8) >= -3 + n }"
// CHECK: %[[A0:.*]] = tc.read %A[%m_1, %kk + 2 * (%n_1 mod 4)] attributes {promoted = "shared_A_0"
// CHECK-NEXT: %[[A1:.*]] = tc.read %A[%m_1, %kk + 2 * (%n_1 mod 4) + 1]
// CHECK-NEXT: %[[A2:.*]] = tc.read %A[%m_1 + 8, %kk + 2 * (%n_1 mod 4)]
// CHECK-NEXT: %[[A3:.*]] = tc.read %A[%m_1 + 8, %kk + 2 * (%n_1 mod 4) + 1]
// CHECK-NEXT: %[[B0:.*]] = tc.read %B[%n_1 - %n_1 mod 8 + %m_1 mod 8 floordiv 2 + 4 * (%m_1 mod 8 mod 2), %kk + 2 * (%n_1 mod 4)]
// CHECK-NEXT: %[[B1:.*]] = tc.read %B[%n_1 - %n_1 mod 8 + %m_1 mod 8 floordiv 2 + 4 * (%m_1 mod 8 mod 2), %kk + 2 * (%n_1 mod 4) + 1]
// CHECK-NEXT: %[[C0:.*]] = tc.read %C[%m_1, %n_1] attributes {promoted = "private_C_0"
// CHECK-NEXT: %[[C1:.*]] = tc.read %C[%m_1, %n_1 + 4]
// CHECK-NEXT: %[[C2:.*]] = tc.read %C[%m_1 + 8, %n_1]
// CHECK-NEXT: %[[C3:.*]] = tc.read %C[%m_1 + 8, %n_1 + 4]
// CHECK-NEXT: %[[D0:.*]], %[[D1:.*]], %[[D2:.*]], %[[D3:.*]] = "nvgpu.mma.sync"(%[[A0]], %[[A2]], %[[A1]], %[[A3]], %[[B0]], %[[B1]], %[[C0]], %[[C1]], %[[C2]], %[[C3]]) <{mmaShape = [16 : i64, 8 : i64, 8 : i64], tf32Enabled
// CHECK-NEXT: tc.update %C[%m_1, %n_1] "=" %[[D0]]
// CHECK-NEXT: tc.update %C[%m_1, %n_1 + 4] "=" %[[D1]]
// CHECK-NEXT: tc.update %C[%m_1 + 8, %n_1] "=" %[[D2]]
// CHECK-NEXT: tc.update %C[%m_1 + 8, %n_1 + 4] "=" %[[D3]]
// CHECK: poly.domain "{ S0[m, n] : 0 <= m <= 15 and 0 <= n <= 15; S1[m, n, kk = 0] : 0 <= m <= 7 and 0 <= n <= 15 and 8*floor((n)/8) >= -3 + n }"

tc.def @tmm(%A: !tc.tensor<f32, [16, 8]>, %B: !tc.tensor<f32, [16, 8]>) -> (%C: !tc.tensor<f32, [16, 16]>) {
  poly.scop @tmm params [] context "{  :  }" attributes {buffers = {private_C_0 = memref<2x4xf32, 5 : i64>, shared_A_0 = memref<16x9xf32, 3 : i64>, shared_B_0 = memref<16x9xf32, 3 : i64>}} {
    poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 15 and 0 <= n <= 15 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
    ^bb0(%m: index, %n: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %C[%m, %n] "=" %0 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1) -> ((d0 floordiv 8), (d1 floordiv 4))>}
    }
    poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 15 and 0 <= n <= 15 and 0 <= kk <= 7 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
    ^bb0(%m_1: index, %n_1: index, %kk: index):
      %1 = tc.read %A[%m_1, %kk] attributes {promoted = "shared_A_0", promoted_map = affine_map<(d0, d1, d2) -> (d0, d2)>}
      %2 = tc.read %B[%n_1, %kk] attributes {promoted = "shared_B_0", promoted_map = affine_map<(d0, d1, d2) -> (d1, d2)>}
      %3 = arith.mulf %1, %2 : f32
      tc.update %C[%m_1, %n_1] "+=" %3 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2) -> ((d0 floordiv 8), (d1 floordiv 4))>}
    }
    poly.stmt @read_shared_A_0 domain "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" reads "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] -> A[a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" writes "{  }" {
    ^bb0(%p0: index, %p1: index, %p2: index, %a0: index, %a1: index):
      %4 = tc.read %A[%a0, %a1]
      tc.update %A[%a0, %a1] "=" %4 attributes {promoted = "shared_A_0", promoted_map = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>}
    }
    poly.stmt @read_shared_B_0 domain "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" reads "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] -> B[a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" writes "{  }" {
    ^bb0(%p0_1: index, %p1_1: index, %p2_1: index, %a0_1: index, %a1_1: index):
      %5 = tc.read %B[%a0_1, %a1_1]
      tc.update %B[%a0_1, %a1_1] "=" %5 attributes {promoted = "shared_B_0", promoted_map = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>}
    }
    poly.stmt @write_private_C_0 domain "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 and 0 <= a0 <= 15 and 0 <= a1 <= 15 }" reads "[thread_x, thread_y] -> {  }" writes "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] -> C[a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 and 0 <= a0 <= 15 and 0 <= a1 <= 15 }" {
    ^bb0(%p0_2: index, %p1_2: index, %t0: index, %t1: index, %a0_2: index, %a1_2: index):
      %6 = tc.read %C[%a0_2, %a1_2] attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2, d3, d4, d5) -> ((((d3 * -1) + d4) floordiv 8), (((d2 * -1) + d5) floordiv 4))>}
      tc.update %C[%a0_2, %a1_2] "=" %6
    }
    poly.domain "{ S0[m, n] : 0 <= m <= 15 and 0 <= n <= 15; S1[m, n, kk] : 0 <= m <= 15 and 0 <= n <= 15 and 0 <= kk <= 7 }" {
      poly.context "[block_x, block_y, thread_x, thread_y] -> {  : block_x = 0 and block_y = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 }" {
        poly.mark "kernel" {
          poly.filter "[block_x, block_y] -> { S0[m, n] : block_x = 0 and block_y = 0 and 0 <= m <= 15 and 0 <= n <= 15; S1[m, n, kk] : block_x = 0 and block_y = 0 and 0 <= m <= 15 and 0 <= n <= 15 and 0 <= kk <= 7 }" {
            poly.band "[{ S0[m, n] -> [(floor((m)/16))]; S1[m, n, kk] -> [(floor((m)/16))] }, { S0[m, n] -> [(floor((n)/16))]; S1[m, n, kk] -> [(floor((n)/16))] }]" permutable coincident = [1, 1] {
              poly.extension "[thread_x, thread_y, block_x, block_y] -> { [0, 0] -> write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (thread_y - a0) mod 8 = 0 and (thread_x - a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 and 0 <= a0 <= 15 and 0 <= a1 <= 15 }" {
                poly.sequence {
                  poly.filter "[block_x, block_y] -> { S0[m, n]; S1[m, n, kk] }" {
                    poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/8))] }]" permutable coincident = [0] {
                      poly.extension "[block_x, block_y] -> { [0, 0, 0] -> sync_promote1[] : block_x = 0 and block_y = 0; [0, 0, 0] -> read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7; [0, 0, 0] -> read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7; [0, 0, 0] -> sync_promote0[] : block_x = 0 and block_y = 0 }" {
                        poly.sequence {
                          poly.filter "[block_x, block_y] -> { sync_promote1[]; read_shared_A_0[p0, p1, p2, a0, a1]; sync_promote0[]; read_shared_B_0[p0, p1, p2, a0, a1] }" {
                            poly.sequence {
                              poly.filter "{ sync_promote0[] }"
                              poly.filter "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" {
                                poly.filter "[thread_x, thread_y] -> { read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= a0 <= 15 and 0 <= a1 <= 7 }" {
                                  poly.band "[{ read_shared_A_0[p0, p1, p2, a0, a1] -> [(a0)] }, { read_shared_A_0[p0, p1, p2, a0, a1] -> [(a1)] }]" coincident = [0, 0]
                                }
                              }
                              poly.filter "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 15 and 0 <= a1 <= 7 }" {
                                poly.filter "[thread_x, thread_y] -> { read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= a0 <= 15 and 0 <= a1 <= 7 }" {
                                  poly.band "[{ read_shared_B_0[p0, p1, p2, a0, a1] -> [(a0)] }, { read_shared_B_0[p0, p1, p2, a0, a1] -> [(a1)] }]" coincident = [0, 0]
                                }
                              }
                              poly.filter "{ sync_promote1[] }"
                            }
                          }
                          poly.filter "[block_x, block_y] -> { S0[m, n]; S1[m, n, kk] }" {
                            poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 8)] }]" permutable coincident = [0] {
                              poly.sequence {
                                poly.filter "[thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 4 = 0 and thread_y <= 7 and thread_x <= 3 and 0 <= m <= 15 and 0 <= n <= 15 }" {
                                  poly.band "[{ S0[m, n] -> [((m) mod 16)] }, { S0[m, n] -> [((n) mod 16)] }]" permutable coincident = [1, 1]
                                }
                                poly.filter "[thread_y, thread_x] -> { S1[m, n, kk] : (-thread_y + m) mod 8 = 0 and (-thread_x + n) mod 4 = 0 and thread_y <= 7 and thread_x <= 3 and 0 <= m <= 15 and 0 <= n <= 15 and 0 <= kk <= 7 }" {
                                  poly.band "[{ S1[m, n, kk] -> [((m) mod 16)] }, { S1[m, n, kk] -> [((n) mod 16)] }]" permutable coincident = [1, 1]
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                  poly.filter "[thread_x, thread_y, block_x, block_y] -> { write_private_C_0[p0, p1, t0, t1, a0, a1] }" {
                    poly.sequence {
                      poly.filter "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 8 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 7 and 0 <= a0 <= 15 and 0 <= a1 <= 15 }" {
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
