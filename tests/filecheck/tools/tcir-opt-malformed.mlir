// Malformed IR gets one diagnostic naming the op and the problem at the op's
// location, the source line, a caret and MLIR's "see current operation" note;
// no traceback.
// RUN: not tcir-opt %s 2>&1 | filecheck %s
// CHECK: tcir-opt-malformed.mlir:13:10: error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2
// CHECK-NEXT: {{^}}    %0 = tc.read %I[%i, %i]
// CHECK-NEXT: {{^}}         ^
// CHECK-NEXT: tcir-opt-malformed.mlir:13:10: note: see current operation: %0 = "tc.read"(%I, %i)
// CHECK-NOT: Traceback

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i]
    tc.yield %0 : f32
  }
}
