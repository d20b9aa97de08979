// Three chunks whose annotations are wrong: each is reported.
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i] // expected-error {{a message it does not give}}
    tc.yield %0 : f32
  }
}

// -----

// expected-error@+1 {{an error that never comes}}
tc.def @g(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
}

// -----

tc.def @h(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    // expected-warning@+1 {{expected 1 subscripts}}
    %0 = tc.read %I[%i, %i]
    tc.yield %0 : f32
  }
}
