// RUN: tcir-opt %s -p poly-promote | filecheck %s
// RUN: tcir-opt %s -p 'poly-promote{private=false}' | filecheck %s --check-prefix=SHARED
// RUN: tcir-opt %s -p 'poly-promote{shared=false}' | filecheck %s --check-prefix=PRIVATE

// An 8x8x8 transposed matmul mapped to one block of 4x4 threads: A and B are
// promoted to shared tiles (rows padded to 9 against bank conflicts), copied
// by all threads before the k loop between two barriers; each thread's 2x2
// elements of C live in registers and are written back after the kernel's loops.

// CHECK-LABEL: poly.scop @tmm
// CHECK-SAME: attributes {buffers = {private_C_0 = memref<2x2xf32, 5 : i64>, shared_A_0 = memref<8x9xf32, 3 : i64>, shared_B_0 = memref<8x9xf32, 3 : i64>}}
// CHECK: tc.update %C[%m, %n] "=" %0 attributes {promoted = "private_C_0", promoted_map = affine_map<(d0, d1) -> ((d0 floordiv 4), (d1 floordiv 4))>}
// CHECK: tc.read %A[%m_1, %kk] attributes {promoted = "shared_A_0", promoted_map = affine_map<(d0, d1, d2) -> (d0, d2)>}
// CHECK-NEXT: tc.read %B[%n_1, %kk] attributes {promoted = "shared_B_0", promoted_map = affine_map<(d0, d1, d2) -> (d1, d2)>}
// CHECK: poly.stmt @read_shared_A_0 domain "{ read_shared_A_0[p0 = 0, p1 = 0, p2 = 0, a0, a1] : 0 <= a0 <= 7 and 0 <= a1 <= 7 }"
// CHECK: poly.stmt @read_shared_B_0
// CHECK: poly.stmt @write_private_C_0
// CHECK: poly.extension "{{.*}}write_private_C_0
// CHECK: poly.extension "{{.*}}sync_promote1[]
// CHECK: poly.filter "{ sync_promote0[] }"
// CHECK-NEXT: poly.filter "{ read_shared_A_0
// CHECK: poly.filter "{ read_shared_B_0
// CHECK: poly.filter "{ sync_promote1[] }"

// SHARED: attributes {buffers = {shared_A_0 = memref<8x9xf32, 3 : i64>, shared_B_0 = memref<8x9xf32, 3 : i64>}}
// SHARED-NOT: private_C

// PRIVATE: attributes {buffers = {private_C_0 = memref<2x2xf32, 5 : i64>}}
// PRIVATE-NOT: shared_

tc.def @tmm(%A: !tc.tensor<f32, [8, 8]>, %B: !tc.tensor<f32, [8, 8]>) -> (%C: !tc.tensor<f32, [8, 8]>) {
  poly.scop @tmm params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 7 and 0 <= n <= 7 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
    ^bb0(%m: index, %n: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %C[%m, %n] "=" %0
    }
    poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
    ^bb0(%m_1: index, %n_1: index, %kk: index):
      %1 = tc.read %A[%m_1, %kk]
      %2 = tc.read %B[%n_1, %kk]
      %3 = arith.mulf %1, %2 : f32
      tc.update %C[%m_1, %n_1] "+=" %3
    }
    poly.domain "{ S0[m, n] : 0 <= m <= 7 and 0 <= n <= 7; S1[m, n, kk] : 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" {
      poly.context "[block_x, block_y, thread_x, thread_y] -> {  : block_x = 0 and block_y = 0 and 0 <= thread_x <= 3 and 0 <= thread_y <= 3 }" {
        poly.mark "kernel" {
          poly.filter "[block_x, block_y] -> { S0[m, n] : block_x = 0 and block_y = 0 and 0 <= m <= 7 and 0 <= n <= 7; S1[m, n, kk] : block_x = 0 and block_y = 0 and 0 <= m <= 7 and 0 <= n <= 7 and 0 <= kk <= 7 }" {
            poly.band "[{ S0[m, n] -> [(floor((m)/8))]; S1[m, n, kk] -> [(floor((m)/8))] }, { S0[m, n] -> [(floor((n)/8))]; S1[m, n, kk] -> [(floor((n)/8))] }]" permutable coincident = [1, 1] {
              poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [(floor((kk)/8))] }]" permutable coincident = [0] {
                poly.band "[{ S0[m, n] -> [(0)]; S1[m, n, kk] -> [((kk) mod 8)] }]" permutable coincident = [0] {
                  poly.sequence {
                    poly.filter "{ S0[m, n] }" {
                      poly.filter "[thread_y, thread_x] -> { S0[m, n] : (-thread_y + m) mod 4 = 0 and (-thread_x + n) mod 4 = 0 and thread_y <= 3 and thread_x <= 3 and 0 <= m <= 7 and 0 <= n <= 7 }" {
                        poly.band "[{ S0[m, n] -> [((m) mod 8)] }, { S0[m, n] -> [((n) mod 8)] }]" permutable coincident = [1, 1]
                      }
                    }
                    poly.filter "{ S1[m, n, kk] }" {
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
      }
    }
  }
}
