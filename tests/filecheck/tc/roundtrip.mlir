// RUN: tcir-opt %s | filecheck %s
// RUN: tcir-opt %s > %t.mlir && tcir-opt %t.mlir | diff %t.mlir -
// RUN: tcir-opt %s --print-op-generic | tcir-opt | filecheck %s

// CHECK-LABEL: tc.def @mm(%A: !tc.tensor<f32, [M, K]>, %B: !tc.tensor<f32, [K, N]>) -> (%C: !tc.tensor<f32, [M, N]>) {
// CHECK-NEXT:    tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %kk in [0, K)) {
// CHECK-NEXT:      %0 = tc.read %A[%m, %kk]
// CHECK-NEXT:      %1 = tc.read %B[%kk, %n]
// CHECK-NEXT:      %2 = arith.mulf %0, %1 : f32
// CHECK-NEXT:      tc.yield %2 : f32
tc.def @mm(%A: !tc.tensor<f32, [M, K]>, %B: !tc.tensor<f32, [K, N]>) -> (%C: !tc.tensor<f32, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %kk in [0, K)) {
    %0 = tc.read %A[%m, %kk]
    %1 = tc.read %B[%kk, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// Sizes are affine in the size names: conv1d's output has M - N + 1 elements.
// CHECK-LABEL: tc.def @conv1d
// CHECK-SAME:    -> (%O: !tc.tensor<f32, [M - N + 1]>)
// CHECK:         tc.comprehension %O[%i] "=" (%i in [0, M - N + 1), %x in [0, N))
// CHECK:           tc.read %I[%i + %x]
tc.def @conv1d(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [M - N + 1]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %K[%x]
    %1 = tc.read %I[%i + %x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// Scalar inputs are used directly; "=" then "+=" as in the paper's sgemm.
// CHECK-LABEL: tc.def @sgemm(%a: f32, %b: f32, %A: !tc.tensor<f32, [N, M]>, %B: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f32, [N, K]>)
// CHECK:         tc.comprehension %C[%i, %j] "=" (%i in [0, N), %j in [0, K))
// CHECK:           arith.mulf %b, %{{.*}} : f32
// CHECK:         tc.comprehension %C[%i_1, %j_1] "+=" (%i_1 in [0, N), %j_1 in [0, K), %k in [0, M))
tc.def @sgemm(%a: f32, %b: f32, %A: !tc.tensor<f32, [N, M]>, %B: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f32, [N, K]>) {
  tc.comprehension %C[%i, %j] "=" (%i in [0, N), %j in [0, K)) {
    %0 = tc.read %C[%i, %j]
    %1 = arith.mulf %b, %0 : f32
    tc.yield %1 : f32
  }
  tc.comprehension %C[%i_1, %j_1] "+=" (%i_1 in [0, N), %j_1 in [0, K), %k in [0, M)) {
    %2 = tc.read %A[%i_1, %k]
    %3 = tc.read %B[%k, %j_1]
    %4 = arith.mulf %a, %2 : f32
    %5 = arith.mulf %4, %3 : f32
    tc.yield %5 : f32
  }
}

// Every reduction kind, plain and initializing.
// CHECK-LABEL: tc.def @kinds
// CHECK:         tc.comprehension %S[%i] "*=" (%i in [0, N), %j in [0, M))
// CHECK:         tc.comprehension %S[%i_1] "*=!" (%i_1 in [0, N), %j_1 in [0, M))
// CHECK:         tc.comprehension %S[%i_2] "min=" (%i_2 in [0, N), %j_2 in [0, M))
// CHECK:         tc.comprehension %S[%i_3] "min=!" (%i_3 in [0, N), %j_3 in [0, M))
// CHECK:         tc.comprehension %S[%i_4] "max=" (%i_4 in [0, N), %j_4 in [0, M))
// CHECK:         tc.comprehension %S[%i_5] "max=!" (%i_5 in [0, N), %j_5 in [0, M))
// CHECK:         tc.comprehension %S[%i_6] "+=" (%i_6 in [0, N), %j_6 in [0, M))
tc.def @kinds(%X: !tc.tensor<f64, [N, M]>) -> (%S: !tc.tensor<f64, [N]>) {
  tc.comprehension %S[%i] "*=" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f64
  }
  tc.comprehension %S[%i_1] "*=!" (%i_1 in [0, N), %j_1 in [0, M)) {
    %1 = tc.read %X[%i_1, %j_1]
    tc.yield %1 : f64
  }
  tc.comprehension %S[%i_2] "min=" (%i_2 in [0, N), %j_2 in [0, M)) {
    %2 = tc.read %X[%i_2, %j_2]
    tc.yield %2 : f64
  }
  tc.comprehension %S[%i_3] "min=!" (%i_3 in [0, N), %j_3 in [0, M)) {
    %3 = tc.read %X[%i_3, %j_3]
    tc.yield %3 : f64
  }
  tc.comprehension %S[%i_4] "max=" (%i_4 in [0, N), %j_4 in [0, M)) {
    %4 = tc.read %X[%i_4, %j_4]
    tc.yield %4 : f64
  }
  tc.comprehension %S[%i_5] "max=!" (%i_5 in [0, N), %j_5 in [0, M)) {
    %5 = tc.read %X[%i_5, %j_5]
    tc.yield %5 : f64
  }
  tc.comprehension %S[%i_6] "+=" (%i_6 in [0, N), %j_6 in [0, M)) {
    %6 = tc.read %X[%i_6, %j_6]
    tc.yield %6 : f64
  }
}

// Where-clauses are kept; floordiv appears in inferred ranges.
// CHECK-LABEL: tc.def @maxpool2x2
// CHECK-SAME:    -> (%out: !tc.tensor<f32, [B, C, (H - 2) floordiv 2 + 1, (W - 2) floordiv 2 + 1]>)
// CHECK:         "max=!" (%b in [0, B), %c in [0, C), %i in [0, (H - 2) floordiv 2 + 1), %j in [0, (W - 2) floordiv 2 + 1), %kw in [0, 2), %kh in [0, 2)) where ["kw in 0:2", "kh in 0:2"] {
// CHECK:           tc.read %in[%b, %c, 2 * %i + %kw, 2 * %j + %kh]
tc.def @maxpool2x2(%in: !tc.tensor<f32, [B, C, H, W]>) -> (%out: !tc.tensor<f32, [B, C, (H - 2) floordiv 2 + 1, (W - 2) floordiv 2 + 1]>) {
  tc.comprehension %out[%b, %c, %i, %j] "max=!" (%b in [0, B), %c in [0, C), %i in [0, (H - 2) floordiv 2 + 1), %j in [0, (W - 2) floordiv 2 + 1), %kw in [0, 2), %kh in [0, 2)) where ["kw in 0:2", "kh in 0:2"] {
    %0 = tc.read %in[%b, %c, 2 * %i + %kw, 2 * %j + %kh]
    tc.yield %0 : f32
  }
}

// Indirection: a value read from an index tensor is a subscript operand.
// CHECK-LABEL: tc.def @gather
// CHECK:         %0 = tc.read %I[%i, %j]
// CHECK-NEXT:    %1 = tc.read %X[%0]
tc.def @gather(%X: !tc.tensor<f32, [N]>, %I: !tc.tensor<i32, [A, B]>) -> (%Z: !tc.tensor<f32, [A, B]>) {
  tc.comprehension %Z[%i, %j] "=" (%i in [0, A), %j in [0, B)) {
    %0 = tc.read %I[%i, %j]
    %1 = tc.read %X[%0]
    tc.yield %1 : f32
  }
}

// Temporaries, 0-d tensors, several outputs, constant sizes, unsigned elements.
// CHECK-LABEL: tc.def @temps(%X: !tc.tensor<ui8, [4, 8]>) -> (%s: !tc.tensor<i32, []>, %Y: !tc.tensor<i32, [4]>)
// CHECK:         %T = tc.alloc : !tc.tensor<i32, [4, 8]>
// CHECK:         tc.comprehension %T[%i, %j] "=" (%i in [0, 4), %j in [0, 8))
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK:         tc.comprehension %Y[%i_1] "max=!" (%i_1 in [0, 4), %j_1 in [0, 8)) equivalent "torch.amax(T, 1)"
// CHECK:         tc.comprehension %s[] "+=!" (%i_2 in [0, 4), %j_2 in [0, 8))
// CHECK:           tc.read %T[%i_2, %j_2]
tc.def @temps(%X: !tc.tensor<ui8, [4, 8]>) -> (%s: !tc.tensor<i32, []>, %Y: !tc.tensor<i32, [4]>) {
  %T = tc.alloc : !tc.tensor<i32, [4, 8]>
  tc.comprehension %T[%i, %j] "=" (%i in [0, 4), %j in [0, 8)) {
    %0 = tc.read %X[%i, %j]
    %1 = arith.extui %0 : i8 to i32
    tc.yield %1 : i32
  }
  tc.comprehension %Y[%i_1] "max=!" (%i_1 in [0, 4), %j_1 in [0, 8)) equivalent "torch.amax(T, 1)" {
    %2 = tc.read %T[%i_1, %j_1]
    tc.yield %2 : i32
  }
  tc.comprehension %s[] "+=!" (%i_2 in [0, 4), %j_2 in [0, 8)) {
    %3 = tc.read %T[%i_2, %j_2]
    tc.yield %3 : i32
  }
}

// A stepped loop (a recurrence): the comprehension names its loop and the
// left-hand side index of its steps, and reads its tensor a step before.
// CHECK-LABEL: tc.def @cumsum
// CHECK:         tc.comprehension %C[%t] "=" (%t in [0, T)) loop "t" along %t where ["t in 0:T"] {
// CHECK:           tc.read %C[%t - 1]
tc.def @cumsum(%X: !tc.tensor<f32, [T]>) -> (%C: !tc.tensor<f32, [T]>) {
  tc.comprehension %C[%t] "=" (%t in [0, T)) loop "t" along %t where ["t in 0:T"] {
    %0 = tc.read %X[%t]
    %1 = arith.index_cast %t : index to i32
    %2 = arith.constant 0 : i32
    %3 = arith.cmpi sgt, %1, %2 : i32
    %4 = scf.if %3 -> (f32) {
      %5 = tc.read %C[%t - 1]
      scf.yield %5 : f32
    } else {
      %6 = arith.constant 0.000000e+00 : f32
      scf.yield %6 : f32
    }
    %7 = arith.addf %0, %4 : f32
    tc.yield %7 : f32
  }
}

// A scatter: the yield names the element each point adds to (an embedding's
// gradient); there are no left-hand side indices.
// CHECK-LABEL: tc.def @embedding_grad
// CHECK:         tc.comprehension %gE[] "+=!" (%b in [0, B), %d in [0, D)) {
// CHECK-NEXT:      %0 = tc.read %gO[%b, %d]
// CHECK-NEXT:      %1 = tc.read %I[%b]
// CHECK-NEXT:      tc.yield %0 at [%1, %d] : f32
tc.def @embedding_grad(%LUT: !tc.tensor<f32, [E, D]>, %I: !tc.tensor<i32, [B]>, %gO: !tc.tensor<f32, [B, D]>) -> (%gE: !tc.tensor<f32, [E, D]>) {
  tc.comprehension %gE[] "+=!" (%b in [0, B), %d in [0, D)) {
    %0 = tc.read %gO[%b, %d]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1, %d] : f32
  }
}
