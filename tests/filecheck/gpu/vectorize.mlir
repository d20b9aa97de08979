// RUN: tcir-opt %s -p 'poly-vectorize{width=4}' | filecheck %s
// RUN: tcir-opt %s -p 'poly-vectorize{width=2}' | filecheck %s --check-prefix=WIDTH2

// The mapped and promoted 8x8x8 transposed matmul: the kernel's reduction
// point loop (kk mod 8) is strip-mined by the width, the steps unrolled, and
// the loop over the vectors marked for `#pragma unroll`.

// CHECK: poly.mark "unroll" {
// CHECK-NEXT: poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/4) - 2*floor((kk)/8))] }]" permutable coincident = [0] {
// CHECK-NEXT: poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 4)] }]" permutable coincident = [0] options "{ unroll[0] }" {
// CHECK-NEXT: poly.sequence {

// WIDTH2: poly.mark "unroll" {
// WIDTH2-NEXT: poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/2) - 4*floor((kk)/8))] }]" permutable coincident = [0] {
// WIDTH2-NEXT: poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 2)] }]" permutable coincident = [0] options "{ unroll[0] }" {

tc.def @tmm(%A: !tc.tensor<f32, [8, 8]>, %B: !tc.tensor<f32, [8, 8]>) -> (%C: !tc.tensor<f32, [8, 8]>) {
  poly.scop @tmm params [] context "{  :  }" attributes {buffers = {private_C_0 = memref<2x2xf32, 5 : i64>, shared_A_0 = memref<8x12xf32, 3 : i64>, shared_B_0 = memref<8x12xf32, 3 : i64>}} {
    poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 7 and 0 <= n <= 7 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
    ^bb0(%m: index, %n: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %C[%m, %n] "=" %0 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1) -> ((d0 floordiv 4), (d1 floordiv 4))>}
    }
    poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
    ^bb0(%m_1: index, %n_1: index, %kk: index):
      %1 = tc.read %A[%m_1, %kk] attributes {promoted = "shared_A_0", promoted_map = affine_map<(d0, d1, d2) -> (d0, d2)>}
      %2 = tc.read %B[%n_1, %kk] attributes {promoted = "shared_B_0", promoted_map = affine_map<(d0, d1, d2) -> (d1, d2)>}
      %3 = arith.mulf %1, %2 : f32
      tc.update %C[%m_1, %n_1] "+=" %3 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2) -> ((d0 floordiv 4), (d1 floordiv 4))>}
    }
    poly.stmt @read_shared_A_0 domain "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" reads "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] -> A[a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" writes "{  }" {
    ^bb0(%p0: index, %p1: index, %p2: index, %a0: index, %a1: index):
      %4 = tc.read %A[%a0, %a1]
      tc.update %A[%a0, %a1] "=" %4 attributes {promoted = "shared_A_0", promoted_map = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>}
    }
    poly.stmt @read_shared_B_0 domain "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" reads "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] -> B[a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" writes "{  }" {
    ^bb0(%p0_1: index, %p1_1: index, %p2_1: index, %a0_1: index, %a1_1: index):
      %5 = tc.read %B[%a0_1, %a1_1]
      tc.update %B[%a0_1, %a1_1] "=" %5 attributes {promoted = "shared_B_0", promoted_map = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>}
    }
    poly.stmt @write_private_C_0 domain "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 4 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" reads "[thread_x, thread_y] -> {  }" writes "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] -> C[a0, a1] : (-thread_y + a0) mod 4 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
    ^bb0(%p0_2: index, %p1_2: index, %t0: index, %t1: index, %a0_2: index, %a1_2: index):
      %6 = tc.read %C[%a0_2, %a1_2] attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1, d2, d3, d4, d5) -> ((((d3 * -1) + d4) floordiv 4), (((d2 * -1) + d5) floordiv 4))>}
      tc.update %C[%a0_2, %a1_2] "=" %6
    }
    poly.domain "{ S0[m, n] : 0 <= m <= 7 and 0 <= n <= 7; S1[m, n, kk] : 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" {
      poly.context "[block_x, block_y, thread_x, thread_y] -> {  : block_x = 0 and block_y = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 }" {
        poly.mark "kernel" {
          poly.filter "[block_x, block_y] -> { S0[m, n] : block_x = 0 and block_y = 0 and 0 <= m <= 7 and 0 <= n <= 7; S1[m, n, kk] : block_x = 0 and block_y = 0 and 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" {
            poly.band "[{ S0[m, n] -> [(floor((m)/8))]; S1[m, n, kk] -> [(floor((m)/8))] }, { S0[m, n] -> [(floor((n)/8))]; S1[m, n, kk] -> [(floor((n)/8))] }]" permutable coincident = [1, 1] {
              poly.extension "[thread_x, thread_y, block_x, block_y] -> { [0, 0] -> write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (thread_y - a0) mod 4 = 0 and (thread_x - a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
                poly.sequence {
                  poly.filter "[block_x, block_y] -> { S0[m, n]; S1[m, n, kk] }" {
                    poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/8))] }]" permutable coincident = [0] {
                      poly.extension "[block_x, block_y] -> { [0, 0, 0] -> sync_promote1[] : block_x = 0 and block_y = 0; [0, 0, 0] -> read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7; [0, 0, 0] -> read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7; [0, 0, 0] -> sync_promote0[] : block_x = 0 and block_y = 0 }" {
                        poly.sequence {
                          poly.filter "[block_x, block_y] -> { sync_promote1[]; read_shared_A_0[p0, p1, p2, a0, a1]; sync_promote0[]; read_shared_B_0[p0, p1, p2, a0, a1] }" {
                            poly.sequence {
                              poly.filter "{ sync_promote0[] }"
                              poly.filter "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
                                poly.filter "[thread_x, thread_y] -> { read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : (-thread_y + a0) mod 4 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
                                  poly.band "[{ read_shared_A_0[p0, p1, p2, a0, a1] -> [(a0)] }, { read_shared_A_0[p0, p1, p2, a0, a1] -> [(a1)] }]" coincident = [0, 0]
                                }
                              }
                              poly.filter "{ read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
                                poly.filter "[thread_x, thread_y] -> { read_shared_B_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : (-thread_y + a0) mod 4 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
                                  poly.band "[{ read_shared_B_0[p0, p1, p2, a0, a1] -> [(a0)] }, { read_shared_B_0[p0, p1, p2, a0, a1] -> [(a1)] }]" coincident = [0, 0]
                                }
                              }
                              poly.filter "{ sync_promote1[] }"
                            }
                          }
                          poly.filter "[block_x, block_y] -> { S0[m, n]; S1[m, n, kk] }" {
                            poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 8)] }]" permutable coincident = [0] {
                              poly.sequence {
                                poly.filter "[thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 4 = 0 and (-thread_x + n) mod 4 = 0 and thread_y <= 3 and thread_x <= 3 and 0 <= m <= 7 and 0 <= n <= 7 }" {
                                  poly.band "[{ S0[m, n] -> [((m) mod 8)] }, { S0[m, n] -> [((n) mod 8)] }]" permutable coincident = [1, 1]
                                }
                                poly.filter "[thread_y, thread_x] -> { S1[m, n, kk] : (-thread_y + m) mod 4 = 0 and (-thread_x + n) mod 4 = 0 and thread_y <= 3 and thread_x <= 3 and 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" {
                                  poly.band "[{ S1[m, n, kk] -> [((m) mod 8)] }, { S1[m, n, kk] -> [((n) mod 8)] }]" permutable coincident = [1, 1]
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
                      poly.filter "[thread_x, thread_y] -> { write_private_C_0[p0 = 0, p1 = 0, t0 = thread_x, t1 = thread_y, a0, a1] : (-thread_y + a0) mod 4 = 0 and (-thread_x + a1) mod 4 = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 and 0 <= a0 <= 7 and 0 <= a1 <= 7 }" {
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
