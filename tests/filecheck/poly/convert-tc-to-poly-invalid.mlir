// RUN: tcir-opt %s --split-input-file --verify-diagnostics -p convert-tc-to-poly

// An access outside its tensor's extent.
// expected-error@+1 {{convert-tc-to-poly: @oob: out-of-bounds access to 'I' in S0: elements { I[8] } are outside its extent}}
tc.def @oob(%I: !tc.tensor<f32, [8]>) -> (%O: !tc.tensor<f32, [8]>) {
  tc.comprehension %O[%i] "=" (%i in [0, 8)) {
    %0 = tc.read %I[%i + 1]
    tc.yield %0 : f32
  }
}

// -----

// A size that isl cannot express until it is specialized.
// expected-error@+1 {{convert-tc-to-poly: @symbolic: a size of 'I' is not affine in the sizes (product 's0 * s0' of non-constants); specialize the sizes first}}
tc.def @symbolic(%I: !tc.tensor<f32, [M * M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
