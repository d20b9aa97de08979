// RUN: tcir-opt %s -p "poly-parallel-reduction" | filecheck %s

// A scop (written by hand: TC's frontend reads a copy of the old values)
// whose sum reads its own output at another point: a self-dependence between
// instances that update different elements, which atomics would not keep.
// The sum's reduction member stays serial and its update plain.
builtin.module {
  tc.def @chain(%A: !tc.tensor<f32, [8, 8]>) -> (%s: !tc.tensor<f32, [8]>) {
    poly.scop @chain params [] context "{  :  }" {
      poly.stmt @S1 domain "{ S1[b, k] : 0 <= b <= 7 and 0 <= k <= 7 }" reads "{ S1[b, k] -> A[b, k]; S1[b, k] -> s[k]; S1[b, k] -> s[b] }" writes "{ S1[b, k] -> s[b] }" {
      ^bb0(%b: index, %k: index):
        %1 = tc.read %A[%b, %k]
        %2 = tc.read %s[%k]
        %3 = arith.mulf %1, %2 : f32
        tc.update %s[%b] "+=" %3
      }
      poly.domain "{ S1[b, k] : 0 <= b <= 7 and 0 <= k <= 7 }" {
        poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]
      }
    }
  }
}
// CHECK-LABEL: tc.def @chain
// CHECK-NOT:     atomic
// CHECK:         poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]
