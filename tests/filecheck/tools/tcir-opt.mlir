// RUN: tcir-opt %s -p canonicalize,cse --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: not tcir-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not tcir-opt %s -p 'cse{x=1=2}' 2>&1 | filecheck %s --check-prefix=SPEC
// RUN: not tcir-opt %s.missing 2>&1 | filecheck %s --check-prefix=FILE
// RUN: tcir-translate %s --target=mlir | filecheck %s --check-prefix=TRANSLATE
// RUN: xdsl-opt %s | filecheck %s --check-prefix=XDSL

// AFTER: // -----// IR Dump After canonicalize //----- //
// AFTER: tc.def @id
// AFTER: // -----// IR Dump After cse //----- //
// AFTER: tc.def @id

// PASS: tcir-opt: error: unknown pass 'no-such-pass'
// SPEC: tcir-opt: error: cse: malformed pass arguments, expected either a space or `}` here at column 8 of pipeline 'cse{x=1=2}'
// FILE: tcir-opt: error: [Errno 2] No such file or directory

// TRANSLATE: tc.def @id(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>)
// Plain xdsl-opt sees tcir's dialects through the xdsl.universe entry point.
// XDSL: tc.def @id(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>)

tc.def @id(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
