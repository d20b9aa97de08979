// A syntax error is reported at its location with the source line and a caret.
// RUN: not tcir-opt %s 2>&1 | filecheck %s
// CHECK: tcir-opt-parse-error.mlir:9:18: error: use of undefined value %Z
// CHECK-NEXT: %0 = tc.read %Z[%i]
// CHECK-NEXT: ^~
// CHECK-NOT: Traceback
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %Z[%i]
    tc.yield %0 : f32
  }
}
