// Passes that need a schedule mapped to the GPU refuse one that is not.
// RUN: tcir-opt %s --verify-diagnostics -p poly-promote
// RUN: tcir-opt %s --verify-diagnostics -p convert-poly-to-gpu

tc.def @copy(%A: !tc.tensor<f32, [8]>) -> (%B: !tc.tensor<f32, [8]>) {
  // expected-error-re@+1 {{{{poly-promote|convert-poly-to-gpu}}: the schedule of @copy is not mapped to the GPU: run poly-map-to-gpu first}}
  poly.scop @copy params [] context "{ : }" {
    poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 7 }" reads "{ S0[i] -> A[i] }" writes "{ S0[i] -> B[i] }" {
    ^bb0(%i: index):
      %0 = tc.read %A[%i]
      tc.update %B[%i] "=" %0
    }
    poly.domain "{ S0[i] : 0 <= i <= 7 }" {
      poly.band "[{ S0[i] -> [(i)] }]" permutable coincident = [1]
    }
  }
}
