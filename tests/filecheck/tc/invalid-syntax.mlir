// RUN: tcir-opt %s --split-input-file --verify-diagnostics

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    // expected-error@+1 {{use of undefined value %Z}}
    %0 = tc.read %Z[%i]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error@+1 {{left-hand side indices must be the first indices of the range list}}
  tc.comprehension %O[%i] "=" (%k in [0, M), %i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error@+1 {{unknown assignment kind '+-'}}
  tc.comprehension %O[%i] "+-" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

// expected-error@+1 {{floordiv by zero}}
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M floordiv 0]>) {
}

// -----

// expected-error@+1 {{expected an affine expression}}
tc.def @f(%I: !tc.tensor<f32, [M +]>) -> (%O: !tc.tensor<f32, [M]>) {
}

// -----

tc.def @f(%X: !tc.tensor<f32, [T, N]>) -> (%S: !tc.tensor<f32, [T]>) {
  // expected-error@+1 {{the step index must be a left-hand side index}}
  tc.comprehension %S[%t] "+=!" (%t in [0, T), %i in [0, N)) loop "t" along %i {
    %0 = tc.read %X[%t, %i]
    tc.yield %0 : f32
  }
}
