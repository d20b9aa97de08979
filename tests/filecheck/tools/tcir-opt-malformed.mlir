// Malformed IR gets one diagnostic line naming the op and the problem, no traceback.
// RUN: not tcir-opt %s 2>&1 | filecheck %s
// CHECK: tcir-opt: error: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2
// CHECK-NOT: Traceback

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i]
    tc.yield %0 : f32
  }
}
