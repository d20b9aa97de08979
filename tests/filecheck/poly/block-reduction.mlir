// RUN: tcir-opt %s -p "poly-block-reduction" --split-input-file | filecheck %s

// poly-block-reduction: the sum's update goes to each thread's partial
// ({block_reduction}, `s` gone from its accesses), a block-wide S1_combine
// after the band over k combines the partials (poly.partial, gpu.all_reduce)
// into s[b], scheduled by the outer band like S1; the band over k becomes
// coincident (threads map it).

tc.def @rowsum(%A: !tc.tensor<f32, [16, 1024]>) -> (%s: !tc.tensor<f32, [16]>) {
  poly.scop @rowsum params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b] : 0 <= b <= 15 }" reads "{  }" writes "{ S0[b] -> s[b] }" {
    ^bb0(%b: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %s[%b] "=" %0
    }
    poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 1023 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> s[b] }" writes "{ S1[b, k] -> s[b] }" {
    ^bb0(%b_1: index, %k: index):
      %1 = tc.read %A[%b_1, %k]
      tc.update %s[%b_1] "+=" %1
    }
    poly.domain "{ S0[b] : 0 <= b <= 15; S1[b, k] : 0 <= b <= 15 and 0 <= k <= 1023 }" {
      poly.band "[{ S0[b] -> [(b)]; S1[b, k] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S0[b] -> [(0)]; S1[b, k] -> [(k)] }]" permutable coincident = [0] {
          poly.sequence {
            poly.filter "{ S0[b] }"
            poly.filter "{ S1[b, k] }"
          }
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @rowsum
// CHECK:         poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 1023 }" reads "{ S1[b, k] -> A[b, k] }" writes "{  }"
// CHECK:           tc.update %s[%{{.*}}] "+=" %{{.*}} attributes {block_reduction}
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.stmt @S1_combine domain "{ S1_combine[b] : 0 <= b <= 15 }" reads "{ S1_combine[b] -> s[b] : 0 <= b <= 15 }" writes "{ S1_combine[b] -> s[b] : 0 <= b <= 15 }" {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: index):
// CHECK-NEXT:      %[[P:.*]] = poly.partial @S1 : f32
// CHECK-NEXT:      %[[T:.*]] = "gpu.all_reduce"(%[[P]]) <{op = #gpu<all_reduce_op add>, uniform}>
// CHECK:           tc.update %s[%[[B]]] "+=" %[[T]]{{$}}
// CHECK:         poly.domain "{ S1_combine[b] : 0 <= b <= 15; S0[b] : 0 <= b <= 15; S1[b, k] : 0 <= b <= 15 and 0 <= k <= 1023 }"
// CHECK-NEXT:      poly.band "[{ S0[b] -> [(b)]; S1[b, k] -> [(b)]; S1_combine[b] -> [(b)] : 0 <= b <= 15 }]" permutable coincident = [1] {
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "{ S0[b] : 0 <= b <= 15; S1[b, k] : 0 <= b <= 15 and 0 <= k <= 1023 }" {
// CHECK-NEXT:            poly.band "[{ S0[b] -> [(0)]; S1[b, k] -> [(k)] }]" permutable coincident = [1] {
// CHECK:                 poly.filter "{ S1_combine[b] : 0 <= b <= 15 }"

// -----

// Every combinable kind: a minimum of 64-bit integers.
tc.def @rowmin(%A: !tc.tensor<i64, [16, 100]>) -> (%m: !tc.tensor<i64, [16]>) {
  poly.scop @rowmin params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b] : 0 <= b <= 15 }" reads "{  }" writes "{ S0[b] -> m[b] }" {
    ^bb0(%b: index):
      %0 = arith.constant 9223372036854775807 : i64
      tc.update %m[%b] "=" %0
    }
    poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 15 and 0 <= k <= 99 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> m[b] }" writes "{ S1[b, k] -> m[b] }" {
    ^bb0(%b_1: index, %k: index):
      %1 = tc.read %A[%b_1, %k]
      tc.update %m[%b_1] "min=" %1
    }
    poly.domain "{ S0[b] : 0 <= b <= 15; S1[b, k] : 0 <= b <= 15 and 0 <= k <= 99 }" {
      poly.band "[{ S0[b] -> [(b)]; S1[b, k] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S0[b] -> [(0)]; S1[b, k] -> [(k)] }]" permutable coincident = [0] {
          poly.sequence {
            poly.filter "{ S0[b] }"
            poly.filter "{ S1[b, k] }"
          }
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @rowmin
// CHECK:         tc.update %m[%{{.*}}] "min=" %{{.*}} attributes {block_reduction}
// CHECK:         poly.partial @S1 : i64
// CHECK-NEXT:    "gpu.all_reduce"(%{{.*}}) <{op = #gpu<all_reduce_op min>, uniform}>
// CHECK:         tc.update %m[%{{.*}}] "min=" %{{.*}}{{$}}

// -----

// Its own band over k is fused with a statement that reads the sum
// (`t(b) += s(b)` at k = 15): that one moves to a copy of the band after it
// (loop distribution), and the sum is combined in between.
tc.def @fused(%A: !tc.tensor<f32, [8, 16]>) -> (%t: !tc.tensor<f32, [8]>) {
  %s = tc.alloc : !tc.tensor<f32, [8]>
  poly.scop @fused params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b, k] : 0 <= b <= 7 and 0 <= k <= 15 }" reads "{ S0[b, k] -> A[b, k]; S0[b, k] -> s[b] }" writes "{ S0[b, k] -> s[b] }" {
    ^bb0(%b: index, %k: index):
      %0 = tc.read %A[%b, %k]
      tc.update %s[%b] "+=" %0
    }
    poly.stmt @S1 domain "{ S1[b] : 0 <= b <= 7 }" reads "{ S1[b] -> s[b] }" writes "{ S1[b] -> t[b] }" {
    ^bb0(%b_1: index):
      %1 = tc.read %s[%b_1]
      tc.update %t[%b_1] "=" %1
    }
    poly.domain "{ S0[b, k] : 0 <= b <= 7 and 0 <= k <= 15; S1[b] : 0 <= b <= 7 }" {
      poly.band "[{ S0[b, k] -> [(b)]; S1[b] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S0[b, k] -> [(k)]; S1[b] -> [(16)] }]" permutable coincident = [0]
      }
    }
  }
}
// CHECK-LABEL: tc.def @fused
// CHECK:         poly.band "[{ S0[b, k] -> [(b)]; S1[b] -> [(b)]; S0_combine[b] -> [(b)] : 0 <= b <= 7 }]" permutable coincident = [1] {
// CHECK-NEXT:      poly.sequence {
// CHECK-NEXT:        poly.filter "{ {{.*}} }" {
// CHECK-NEXT:          poly.sequence {
// CHECK-NEXT:            poly.filter "{ S0[b, k] : 0 <= b <= 7 and 0 <= k <= 15 }" {
// CHECK-NEXT:              poly.band "[{ S0[b, k] -> [(k)] }]" permutable coincident = [1]
// CHECK-NEXT:            }
// CHECK-NEXT:            poly.filter "{ S0_combine[b] : 0 <= b <= 7 }"
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        poly.filter "{ S1[b] }" {
// CHECK-NEXT:          poly.band "[{ S1[b] -> [(16)] }]" permutable coincident = [0]

// -----

// Reductions that stay serial: an atomic sum (poly-parallel-reduction's),
// and a sum whose band over k also runs its output's index (nowhere to put
// one combine per element).
tc.def @atomic(%A: !tc.tensor<f32, [4, 8]>) -> (%s: !tc.tensor<f32, [4]>) {
  poly.scop @atomic params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b, k] : 0 <= b <= 3 and 0 <= k <= 7 }" reads "{ S0[b, k] -> A[b, k]; S0[b, k] -> s[b] }" writes "{ S0[b, k] -> s[b] }" {
    ^bb0(%b: index, %k: index):
      %0 = tc.read %A[%b, %k]
      tc.update %s[%b] "+=" %0 attributes {atomic}
    }
    poly.domain "{ S0[b, k] : 0 <= b <= 3 and 0 <= k <= 7 }" {
      poly.band "[{ S0[b, k] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S0[b, k] -> [(k)] }]" permutable coincident = [0]
      }
    }
  }
}
tc.def @mixed(%A: !tc.tensor<f32, [4, 8]>) -> (%s: !tc.tensor<f32, [4]>) {
  poly.scop @mixed params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b, k] : 0 <= b <= 3 and 0 <= k <= 7 }" reads "{ S0[b, k] -> A[b, k]; S0[b, k] -> s[b] }" writes "{ S0[b, k] -> s[b] }" {
    ^bb0(%b: index, %k: index):
      %0 = tc.read %A[%b, %k]
      tc.update %s[%b] "+=" %0
    }
    poly.domain "{ S0[b, k] : 0 <= b <= 3 and 0 <= k <= 7 }" {
      poly.band "[{ S0[b, k] -> [(k)] }, { S0[b, k] -> [(b)] }]" permutable coincident = [0, 1]
    }
  }
}
// CHECK-LABEL: tc.def @atomic
// CHECK-NOT:     block_reduction
// CHECK:         coincident = [0]
// CHECK-LABEL: tc.def @mixed
// CHECK-NOT:     block_reduction
// CHECK:         coincident = [0, 1]

// -----

// A sum over two dimensions (an image plane): isl fuses the initialization
// S0 into the loop over h, so the bands over h and w are two. S0 is ordered
// before the sum and the bands become one, both members coincident: threads
// map h and w.
tc.def @planesum(%X: !tc.tensor<f32, [4, 6, 8]>) -> (%s: !tc.tensor<f32, [4]>) {
  poly.scop @planesum params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b] : 0 <= b <= 3 }" reads "{  }" writes "{ S0[b] -> s[b] }" {
    ^bb0(%b: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %s[%b] "=" %0
    }
    poly.stmt @S1 domain "{ S1[b, h, w] : 0 <= b <= 3 and 0 <= h <= 5 and 0 <= w <= 7 }" reads "{ S1[b, h, w] -> s[b]; S1[b, h, w] -> X[b, h, w] }" writes "{ S1[b, h, w] -> s[b] }" {
    ^bb0(%b_1: index, %h: index, %w: index):
      %1 = tc.read %X[%b_1, %h, %w]
      tc.update %s[%b_1] "+=" %1
    }
    poly.domain "{ S1[b, h, w] : 0 <= b <= 3 and 0 <= h <= 5 and 0 <= w <= 7; S0[b] : 0 <= b <= 3 }" {
      poly.band "[{ S1[b, h, w] -> [(b)]; S0[b] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S1[b, h, w] -> [(h)]; S0[b] -> [(0)] }]" permutable coincident = [0] {
          poly.sequence {
            poly.filter "{ S0[b] }"
            poly.filter "{ S1[b, h, w] }" {
              poly.band "[{ S1[b, h, w] -> [(w)] }]" coincident = [0]
            }
          }
        }
      }
    }
  }
}

// CHECK-LABEL: tc.def @planesum
// CHECK:         tc.update %s[%{{.*}}] "+=" %{{.*}} attributes {block_reduction}
// CHECK:         poly.sequence {
// CHECK-NEXT:      poly.filter "{ S0[b] }" {
// CHECK-NEXT:        poly.band "[{ S0[b] -> [(0)] }]"
// CHECK-NEXT:      }
// CHECK-NEXT:      poly.filter "{ S1_combine[b] : 0 <= b <= 3; S1[b, h, w] }" {
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "{ S1[b, h, w] : 0 <= b <= 3 and 0 <= h <= 5 and 0 <= w <= 7 }" {
// CHECK-NEXT:            poly.band "[{ S1[b, h, w] -> [(h)] }, { S1[b, h, w] -> [(w)] }]" coincident = [1, 1]
// CHECK-NEXT:          }
// CHECK-NEXT:          poly.filter "{ S1_combine[b] : 0 <= b <= 3 }"

// -----

// A mean (`m(b) +=! X(b,n) / N`): the divisor is the same at every n, so the
// partials add the X's and S1_combine divides their total once.
tc.def @rowmean(%X: !tc.tensor<f32, [4, 64]>) -> (%m: !tc.tensor<f32, [4]>) {
  poly.scop @rowmean params [] context "{  :  }" {
    poly.stmt @S0 domain "{ S0[b] : 0 <= b <= 3 }" reads "{  }" writes "{ S0[b] -> m[b] }" {
    ^bb0(%b: index):
      %0 = arith.constant 0.000000e+00 : f32
      tc.update %m[%b] "=" %0
    }
    poly.stmt @S1 domain "{ S1[b, n] : 0 <= b <= 3 and 0 <= n <= 63 }" reads "{ S1[b, n] -> m[b]; S1[b, n] -> X[b, n] }" writes "{ S1[b, n] -> m[b] }" {
    ^bb0(%b_1: index, %n: index):
      %1 = tc.read %X[%b_1, %n]
      %2 = tc.size [64]
      %3 = arith.index_cast %2 : index to i32
      %4 = arith.sitofp %3 : i32 to f32
      %5 = arith.divf %1, %4 : f32
      tc.update %m[%b_1] "+=" %5
    }
    poly.domain "{ S0[b] : 0 <= b <= 3; S1[b, n] : 0 <= b <= 3 and 0 <= n <= 63 }" {
      poly.band "[{ S0[b] -> [(b)]; S1[b, n] -> [(b)] }]" permutable coincident = [1] {
        poly.band "[{ S0[b] -> [(0)]; S1[b, n] -> [(n)] }]" permutable coincident = [0] {
          poly.sequence {
            poly.filter "{ S0[b] }"
            poly.filter "{ S1[b, n] }"
          }
        }
      }
    }
  }
}
// CHECK-LABEL: tc.def @rowmean
// CHECK:         poly.stmt @S1 domain
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[X:.*]] = tc.read %X
// CHECK-NEXT:      tc.update %m[%{{.*}}] "+=" %[[X]] attributes {block_reduction}
// CHECK-NEXT:    }
// CHECK:           %[[T:.*]] = "gpu.all_reduce"
// CHECK:           tc.size [64]
// CHECK:           %[[D:.*]] = arith.sitofp
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[T]], %[[D]] : f32
// CHECK-NEXT:      tc.update %m[%{{.*}}] "+=" %[[Q]]{{$}}
