// RUN: tcir-opt %s --split-input-file -p "poly-split-k{slices=4}" | filecheck %s
// RUN: tcir-opt %s --split-input-file -p "poly-split-k{slices=1}" | filecheck %s --check-prefix=ONE

// poly-split-k: in the outermost band of an atomic sum, a leading slice
// member over its k member (the loop over k tiles), the band split before
// the k member; the point band puts its k points outside its output points.
// Inputs as `poly-parallel-reduction{coincident-reductions=false}`,
// `poly-tile` and `poly-sink` leave them.

// A matmul tiled by 32x32x32 with K = 1024: 32 k tiles, 8 a slice. The
// initialization S0 is no sum: its band stays.
builtin.module {
  tc.def @tmm(%A: !tc.tensor<f32, [64, 1024]>, %B: !tc.tensor<f32, [32, 1024]>) -> (%C: !tc.tensor<f32, [64, 32]>) {
    poly.scop @tmm params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 63 and 0 <= n <= 31 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = arith.constant 0.000000e+00 : f32
        tc.update %C[%m, %n] "=" %0
      }
      poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 63 and 0 <= n <= 31 and 0 <= kk <= 1023 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[n, kk] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
      ^bb0(%m_1: index, %n_1: index, %kk: index):
        %1 = tc.read %A[%m_1, %kk]
        %2 = tc.read %B[%n_1, %kk]
        %3 = arith.mulf %1, %2 : f32
        tc.update %C[%m_1, %n_1] "+=" %3 attributes {atomic}
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 63 and 0 <= n <= 31; S1[m, n, kk] : 0 <= m <= 63 and 0 <= n <= 31 and 0 <= kk <= 1023 }" {
        poly.sequence {
          poly.filter "{ S0[m, n] }" {
            poly.band "[{ S0[m, n] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))] }]" permutable coincident = [1, 1] {
              poly.band "[{ S0[m, n] -> [((m) mod 32)] }, { S0[m, n] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
            }
          }
          poly.filter "{ S1[m, n, kk] }" {
            poly.band "[{ S1[m, n, kk] -> [(floor((m)/32))] }, { S1[m, n, kk] -> [(floor((n)/32))] }, { S1[m, n, kk] -> [(floor((kk)/32))] }]" permutable coincident = [1, 1, 0] {
              poly.band "[{ S1[m, n, kk] -> [((m) mod 32)] }, { S1[m, n, kk] -> [((n) mod 32)] }, { S1[m, n, kk] -> [((kk) mod 32)] }]" permutable coincident = [1, 1, 0]
            }
          }
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @tmm
// CHECK:         poly.filter "{ S0[m, n] }" {
// CHECK-NEXT:      poly.band "[{ S0[m, n] -> [(floor((m)/32))] }, { S0[m, n] -> [(floor((n)/32))] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.band "[{ S0[m, n] -> [((m) mod 32)] }, { S0[m, n] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
// CHECK:         poly.filter "{ S1[m, n, kk] }" {
// CHECK-NEXT:      poly.band "[{ S1[m, n, kk] -> [(floor((kk)/256))] }, { S1[m, n, kk] -> [(floor((m)/32))] }, { S1[m, n, kk] -> [(floor((n)/32))] }]" permutable coincident = [1, 1, 1] {
// CHECK-NEXT:        poly.band "[{ S1[m, n, kk] -> [(floor((kk)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:          poly.band "[{ S1[m, n, kk] -> [((kk) mod 32)] }]" permutable coincident = [0] {
// CHECK-NEXT:            poly.band "[{ S1[m, n, kk] -> [((m) mod 32)] }, { S1[m, n, kk] -> [((n) mod 32)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }

// ONE-LABEL: tc.def @tmm
// ONE:         poly.band "[{ S1[m, n, kk] -> [(floor((m)/32))] }, { S1[m, n, kk] -> [(floor((n)/32))] }, { S1[m, n, kk] -> [(floor((kk)/32))] }]" permutable coincident = [1, 1, 0] {
// ONE-NEXT:      poly.band "[{ S1[m, n, kk] -> [((m) mod 32)] }, { S1[m, n, kk] -> [((n) mod 32)] }, { S1[m, n, kk] -> [((kk) mod 32)] }]" permutable coincident = [1, 1, 0]

// -----

// Ragged: K = 900 gives 29 k tiles, the last partial; the slices take
// ceil(29 / 4) = 8 k tiles (256 points) each, the last 5.
builtin.module {
  tc.def @ragged(%A: !tc.tensor<f32, [16, 900]>) -> (%s: !tc.tensor<f32, [16]>) {
    poly.scop @ragged params [] context "{  :  }" {
      poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 899 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> s[b] }" writes "{ S1[b, k] -> s[b] }" {
      ^bb0(%b: index, %k: index):
        %0 = tc.read %A[%b, %k]
        tc.update %s[%b] "+=" %0 attributes {atomic}
      }
      poly.domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 899 }" {
        poly.band "[{ S1[b, k] -> [(floor((b)/16))] }, { S1[b, k] -> [(floor((k)/32))] }]" permutable coincident = [1, 0] {
          poly.band "[{ S1[b, k] -> [((b) mod 16)] }, { S1[b, k] -> [((k) mod 32)] }]" permutable coincident = [1, 0]
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @ragged
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S1[b, k] -> [(floor((k)/256))] }, { S1[b, k] -> [(floor((b)/16))] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.band "[{ S1[b, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:          poly.band "[{ S1[b, k] -> [((k) mod 32)] }]" permutable coincident = [0] {
// CHECK-NEXT:            poly.band "[{ S1[b, k] -> [((b) mod 16)] }]" permutable coincident = [1]

// -----

// Untiled, a reduction from k = 4: the k member itself takes 97 values,
// 25 a slice (the last 22), counted from 4.
builtin.module {
  tc.def @tail(%A: !tc.tensor<f32, [16, 101]>) -> (%s: !tc.tensor<f32, [16]>) {
    poly.scop @tail params [] context "{  :  }" {
      poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 4 <= k <= 100 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> s[b] }" writes "{ S1[b, k] -> s[b] }" {
      ^bb0(%b: index, %k: index):
        %0 = tc.read %A[%b, %k]
        tc.update %s[%b] "+=" %0 attributes {atomic}
      }
      poly.domain "{ S1[b, k] : 0 <= b <= 15 and 4 <= k <= 100 }" {
        poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]
      }
    }
  }
}
// CHECK-LABEL: tc.def @tail
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S1[b, k] -> [(floor((-4 + k)/25))] }, { S1[b, k] -> [(b)] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.band "[{ S1[b, k] -> [(k)] }]" permutable coincident = [0]
// CHECK-NEXT:      }

// -----

// A sum that is not atomic (as `poly-schedule` leaves it) and a maximum keep
// their bands: their reductions must stay in order.
builtin.module {
  tc.def @serial(%A: !tc.tensor<f32, [16, 1000]>) -> (%s: !tc.tensor<f32, [16]>, %x: !tc.tensor<f32, [16]>) {
    poly.scop @serial params [] context "{  :  }" {
      poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 999 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> s[b] }" writes "{ S1[b, k] -> s[b] }" {
      ^bb0(%b: index, %k: index):
        %0 = tc.read %A[%b, %k]
        tc.update %s[%b] "+=" %0
      }
      poly.stmt @S2 domain "{ S2[b, k] : 0 <= b <= 15 and 0 <= k <= 999 }" reads "{ S2[b, k] -> A[b, k]; S2[b, k] -> x[b] }" writes "{ S2[b, k] -> x[b] }" {
      ^bb0(%b_1: index, %k_1: index):
        %1 = tc.read %A[%b_1, %k_1]
        tc.update %x[%b_1] "max=" %1
      }
      poly.domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 999; S2[b, k] : 0 <= b <= 15 and 0 <= k <= 999 }" {
        poly.sequence {
          poly.filter "{ S1[b, k] }" {
            poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]
          }
          poly.filter "{ S2[b, k] }" {
            poly.band "[{ S2[b, k] -> [(b)] }, { S2[b, k] -> [(k)] }]" permutable coincident = [1, 0]
          }
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @serial
// CHECK:         poly.filter "{ S1[b, k] }" {
// CHECK-NEXT:      poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]
// CHECK:         poly.filter "{ S2[b, k] }" {
// CHECK-NEXT:      poly.band "[{ S2[b, k] -> [(b)] }, { S2[b, k] -> [(k)] }]" permutable coincident = [1, 0]
