// RUN: tcir-opt %s --split-input-file -p 'poly-pad-tiles{sizes=32,32,16}' | filecheck %s

// A scheduled matmul whose 100 x 90 output the 32 x 32 tiles do not divide:
// both statements' output indices are padded (m to 127, n to 95), the
// reduction kk is not; A's rows and B's columns are clamped where they may
// pass the shapes, C's updates clipped.

// CHECK-LABEL: poly.scop @matmul
// CHECK:         poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 127 and 0 <= n <= 95 }"
// CHECK:           tc.update %C[%m, %n] "=" %{{.*}} attributes {clip = [0 : i64, 1 : i64]}
// CHECK:         poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 127 and 0 <= n <= 95 and 0 <= kk <= 69 }"
// CHECK:           tc.read %A[%m_1, %kk] attributes {clamp = [0 : i64]}
// CHECK-NEXT:      tc.read %B[%kk, %n_1] attributes {clamp = [1 : i64]}
// CHECK:           tc.update %C[%m_1, %n_1] "+=" %{{.*}} attributes {clip = [0 : i64, 1 : i64]}
// CHECK:         poly.domain "{ S0[m, n] : 0 <= m <= 127 and 0 <= n <= 95; S1[m, n, kk] : 0 <= m <= 127 and 0 <= n <= 95 and 0 <= kk <= 69 }"
builtin.module {
  tc.def @matmul(%A: !tc.tensor<f32, [100, 70]>, %B: !tc.tensor<f32, [70, 90]>) -> (%C: !tc.tensor<f32, [100, 90]>) {
    poly.scop @matmul params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 99 and 0 <= n <= 89 }" reads "{  }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = arith.constant 0.000000e+00 : f32
        tc.update %C[%m, %n] "=" %0
      }
      poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 99 and 0 <= n <= 89 and 0 <= kk <= 69 }" reads "{ S1[m, n, kk] -> C[m, n]; S1[m, n, kk] -> A[m, kk]; S1[m, n, kk] -> B[kk, n] }" writes "{ S1[m, n, kk] -> C[m, n] }" {
      ^bb0(%m_1: index, %n_1: index, %kk: index):
        %1 = tc.read %A[%m_1, %kk]
        %2 = tc.read %B[%kk, %n_1]
        %3 = arith.mulf %1, %2 : f32
        tc.update %C[%m_1, %n_1] "+=" %3
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 99 and 0 <= n <= 89; S1[m, n, kk] : 0 <= m <= 99 and 0 <= n <= 89 and 0 <= kk <= 69 }" {
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

// -----

// A ReLU of what the band's first statement wrote: S1's read of C is
// clipped, not clamped (where C stays in memory, a padded point's clamped
// read would race with the thread that writes the element).

// CHECK-LABEL: poly.scop @relu
// CHECK:         poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 127 and 0 <= n <= 95 }"
// CHECK:           tc.read %A[%m, %n] attributes {clamp = [0 : i64, 1 : i64]}
// CHECK:         poly.stmt @S1 domain "{ S1[m, n] : 0 <= m <= 127 and 0 <= n <= 95 }"
// CHECK:           tc.read %C[%m_1, %n_1] attributes {clip = [0 : i64, 1 : i64]}
builtin.module {
  tc.def @relu(%A: !tc.tensor<f32, [100, 90]>) -> (%C: !tc.tensor<f32, [100, 90]>) {
    poly.scop @relu params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, n] : 0 <= m <= 99 and 0 <= n <= 89 }" reads "{ S0[m, n] -> A[m, n] }" writes "{ S0[m, n] -> C[m, n] }" {
      ^bb0(%m: index, %n: index):
        %0 = tc.read %A[%m, %n]
        %1 = arith.constant 2.000000e+00 : f32
        %2 = arith.mulf %0, %1 : f32
        tc.update %C[%m, %n] "=" %2
      }
      poly.stmt @S1 domain "{ S1[m, n] : 0 <= m <= 99 and 0 <= n <= 89 }" reads "{ S1[m, n] -> C[m, n] }" writes "{ S1[m, n] -> C[m, n] }" {
      ^bb0(%m_1: index, %n_1: index):
        %3 = tc.read %C[%m_1, %n_1]
        %4 = arith.constant 0.000000e+00 : f32
        %5 = arith.maxnumf %3, %4 : f32
        tc.update %C[%m_1, %n_1] "=" %5
      }
      poly.domain "{ S0[m, n] : 0 <= m <= 99 and 0 <= n <= 89; S1[m, n] : 0 <= m <= 99 and 0 <= n <= 89 }" {
        poly.band "[{ S0[m, n] -> [(m)]; S1[m, n] -> [(m)] }, { S0[m, n] -> [(n)]; S1[m, n] -> [(n)] }]" permutable coincident = [1, 1] {
          poly.sequence {
            poly.filter "{ S0[m, n] }"
            poly.filter "{ S1[m, n] }"
          }
        }
      }
    }
  }
}

// -----

// A sum into C that no statement sets first: a register tile of it would
// copy C's values in, clamped past the edge, while the threads that own
// them store them back. The band is left as it is.

// CHECK-LABEL: poly.scop @acc
// CHECK:         poly.stmt @S0 domain "{ S0[m, kk] : 0 <= m <= 99 and 0 <= kk <= 89 }"
// CHECK-NOT:     clamp
// CHECK-NOT:     clip
// CHECK:         poly.domain "{ S0[m, kk] : 0 <= m <= 99 and 0 <= kk <= 89 }"
builtin.module {
  tc.def @acc(%A: !tc.tensor<f32, [100, 90]>) -> (%C: !tc.tensor<f32, [100]>) {
    poly.scop @acc params [] context "{  :  }" {
      poly.stmt @S0 domain "{ S0[m, kk] : 0 <= m <= 99 and 0 <= kk <= 89 }" reads "{ S0[m, kk] -> C[m]; S0[m, kk] -> A[m, kk] }" writes "{ S0[m, kk] -> C[m] }" {
      ^bb0(%m: index, %kk: index):
        %0 = tc.read %A[%m, %kk]
        tc.update %C[%m] "+=" %0
      }
      poly.domain "{ S0[m, kk] : 0 <= m <= 99 and 0 <= kk <= 89 }" {
        poly.band "[{ S0[m, kk] -> [(m)] }]" permutable coincident = [1] {
          poly.band "[{ S0[m, kk] -> [(kk)] }]" permutable coincident = [0]
        }
      }
    }
  }
}
