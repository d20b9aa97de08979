// RUN: tcir-opt %s --split-input-file --parsing-diagnostics | filecheck %s

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %Z[%i]
    tc.yield %0 : f32
  }
}
// CHECK: use of undefined value %Z

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%k in [0, M), %i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
// CHECK: left-hand side indices must be the first indices of the range list

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "+-" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
// CHECK: unknown assignment kind '+-'

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M floordiv 0]>) {
}
// CHECK: floordiv by zero

// -----

tc.def @f(%I: !tc.tensor<f32, [M +]>) -> (%O: !tc.tensor<f32, [M]>) {
}
// CHECK: expected an affine expression


// -----

tc.def @f(%X: !tc.tensor<f32, [T, N]>) -> (%S: !tc.tensor<f32, [T]>) {
  tc.comprehension %S[%t] "+=!" (%t in [0, T), %i in [0, N)) loop "t" along %i {
    %0 = tc.read %X[%t, %i]
    tc.yield %0 : f32
  }
}
// CHECK: the step index must be a left-hand side index
