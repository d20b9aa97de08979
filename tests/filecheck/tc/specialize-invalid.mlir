// RUN: tcir-opt %s --split-input-file --verify-diagnostics -p 'tc-specialize{sizes="M=4,Q=3"}'
// RUN: not tcir-opt %s -p 'tc-specialize{sizes="M=-1"}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not tcir-opt %s -p 'tc-specialize{sizes="M=four"}' 2>&1 | filecheck %s --check-prefix=MALFORMED

// NEGATIVE: tcir-opt: error: tc-specialize: size M=-1 is negative
// MALFORMED: tcir-opt: error: tc-specialize: expected NAME=INTEGER, got 'M=four'

// A size that no def has, beside one that some def has: a warning.
// expected-warning@+1 {{tc-specialize: no tc.def has a size named 'Q' (sizes: M)}}
tc.def @some(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

// Sizes none of which any def has: the pass would do nothing, an error.
// expected-error@+1 {{tc-specialize: no tc.def has a size named 'M', 'Q' (sizes: N)}}
tc.def @none(%I: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [N]>) {
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
