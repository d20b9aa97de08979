// --verify-diagnostics checks diagnostics against expected-* annotations, as
// mlir-opt does: this file's annotations all hold (exit 0), a file with wrong
// ones fails and every failing chunk is reported.
// RUN: tcir-opt %s --split-input-file --verify-diagnostics
// RUN: not tcir-opt %S/Inputs/wrong-expectations.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

// WRONG: wrong-expectations.mlir:4:10: error: unexpected error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2
// WRONG: wrong-expectations.mlir:4:32: error: expected error "a message it does not give" was not produced
// WRONG: wrong-expectations.mlir:11:4: error: expected error "an error that never comes" was not produced
// WRONG: wrong-expectations.mlir:20:10: error: unexpected error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2
// WRONG: wrong-expectations.mlir:19:8: error: expected warning "expected 1 subscripts" was not produced
// WRONG-NOT: error

// On the same line; a substring of the message.
tc.def @same_line(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i] // expected-error {{expected 1 subscripts}}
    tc.yield %0 : f32
  }
}

// -----

// @-N and @above point back; several annotations may share a line.
tc.def @above(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i]
    // expected-error@-1 {{rank-1 tensor}}
    tc.yield %0 : f32
  }
}

// -----

tc.def @above(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i + Q]
    // expected-error@above {{unknown size 'Q'}}
    tc.yield %0 : f32
  }
}

// -----

// @below, and a regular expression with -re.
tc.def @below(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error-re@below {{range uses unknown size '{{[A-Z]}}' (sizes of @{{[a-z]+}}: M)}}
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

// Parse errors are diagnostics too.
tc.def @parse(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    // expected-error@+1 {{use of undefined value %Z}}
    %0 = tc.read %Z[%i]
    tc.yield %0 : f32
  }
}

// -----

// A chunk without errors needs no annotation.
tc.def @fine(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
