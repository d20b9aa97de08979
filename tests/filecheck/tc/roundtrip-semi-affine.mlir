// RUN: tcir-opt %s | filecheck %s
// RUN: tcir-opt %s > %t.mlir && tcir-opt %t.mlir | diff %t.mlir -
// xDSL's generic affine_map syntax has no semi-affine maps, so this file has
// no generic round trip; it fails cleanly instead:
// RUN: tcir-opt %s --print-op-generic | not tcir-opt 2>&1 | filecheck %s --check-prefix=GENERIC
// GENERIC: tcir-opt: error: {{.*}}semi-affine

// Integer scalar inputs are sizes: strides stay semi-affine until specialized.
// CHECK-LABEL: tc.def @sconv1d
// CHECK-SAME:    -> (%O: !tc.tensor<f32, [(H - KH) floordiv sh + 1]>)
// CHECK:         tc.read %I[sh * %h + %kh]
tc.def @sconv1d(%sh: i32, %I: !tc.tensor<f32, [H]>, %W: !tc.tensor<f32, [KH]>) -> (%O: !tc.tensor<f32, [(H - KH) floordiv sh + 1]>) {
  tc.comprehension %O[%h] "+=!" (%h in [0, (H - KH) floordiv sh + 1), %kh in [0, KH)) {
    %0 = tc.read %I[sh * %h + %kh]
    %1 = tc.read %W[%kh]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}

