// RUN: tcir-opt %s --split-input-file -p tc-widen-half-precision | filecheck %s

// A half matmul: the products computed in f32, summed into an f32
// temporary, rounded once into C.
// CHECK-LABEL: tc.def @tmm(
// CHECK-NEXT:    %[[ACC:.*]] = tc.alloc : !tc.tensor<f32, [M, N]>
// CHECK-NEXT:    tc.comprehension %[[ACC]][%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
// CHECK-NEXT:      %[[A:.*]] = tc.read %A[%m, %k]
// CHECK-NEXT:      %[[A32:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[B:.*]] = tc.read %B[%n, %k]
// CHECK-NEXT:      %[[B32:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[P]], %[[TWO]] : f32
// CHECK-NEXT:      tc.yield %[[Q]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    tc.comprehension %C[%[[M:.*]], %[[N:.*]]] "=" (%[[M]] in [0, M), %[[N]] in [0, N)) {
// CHECK-NEXT:      %[[V:.*]] = tc.read %[[ACC]][%[[M]], %[[N]]]
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[V]] : f32 to f16
// CHECK-NEXT:      tc.yield %[[H]] : f16
tc.def @tmm(%A: !tc.tensor<f16, [M, K]>, %B: !tc.tensor<f16, [N, K]>) -> (%C: !tc.tensor<f16, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
    %0 = tc.read %A[%m, %k]
    %1 = tc.read %B[%n, %k]
    %2 = arith.constant 2.000000e+00 : f16
    %3 = arith.mulf %0, %1 : f16
    %4 = arith.mulf %3, %2 : f16
    tc.yield %4 : f16
  }
}

// -----

// A sum onto C's values: they are copied into the temporary first. The
// maximum (exact in half) and the f32 sum stay as they are.
// CHECK-LABEL: tc.def @onto(
// CHECK-NEXT:    %[[ACC:.*]] = tc.alloc : !tc.tensor<f32, [M]>
// CHECK-NEXT:    tc.comprehension %C[%m] "=" (%m in [0, M))
// CHECK:         tc.comprehension %[[ACC]][%[[I:.*]]] "=" (%[[I]] in [0, M)) {
// CHECK-NEXT:      %[[C:.*]] = tc.read %C[%[[I]]]
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[C]] : f16 to f32
// CHECK-NEXT:      tc.yield %[[W]] : f32
// CHECK:         tc.comprehension %[[ACC]][%[[J:.*]]] "+=" (%[[J]] in [0, M), %k in [0, K))
// CHECK:           tc.yield %{{.*}} : f32
// CHECK:         tc.comprehension %C[%[[L:.*]]] "=" (%[[L]] in [0, M))
// CHECK-NEXT:      tc.read %[[ACC]]
// CHECK-NEXT:      arith.truncf %{{.*}} : f32 to f16
// CHECK:         tc.comprehension %D[%[[X:.*]]] "max=!" (%[[X]] in [0, M), %[[Y:.*]] in [0, K)) {
// CHECK-NEXT:      %[[R:.*]] = tc.read %A[%[[X]], %[[Y]]]
// CHECK-NEXT:      tc.yield %[[R]] : f16
// CHECK:         tc.comprehension %E[%{{.*}}] "+=!"
// CHECK-NOT:     arith.truncf
tc.def @onto(%A: !tc.tensor<f16, [M, K]>, %b: !tc.tensor<f16, [M]>, %F: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f16, [M]>, %D: !tc.tensor<f16, [M]>, %E: !tc.tensor<f32, [M]>) {
  tc.comprehension %C[%m] "=" (%m in [0, M)) {
    %0 = tc.read %b[%m]
    tc.yield %0 : f16
  }
  tc.comprehension %C[%m_1] "+=" (%m_1 in [0, M), %k in [0, K)) {
    %1 = tc.read %A[%m_1, %k]
    tc.yield %1 : f16
  }
  tc.comprehension %D[%m_2] "max=!" (%m_2 in [0, M), %k_1 in [0, K)) {
    %2 = tc.read %A[%m_2, %k_1]
    tc.yield %2 : f16
  }
  tc.comprehension %E[%m_3] "+=!" (%m_3 in [0, M), %k_2 in [0, K)) {
    %3 = tc.read %F[%m_3, %k_2]
    tc.yield %3 : f32
  }
}

// -----

// A mixed-precision contraction (half inputs, an f32 output): the products
// are computed in f32, nothing is rounded, no temporary.
// CHECK-LABEL: tc.def @mixed(
// CHECK-NEXT:    tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
// CHECK-NEXT:      %[[A:.*]] = tc.read %A[%m, %k]
// CHECK-NEXT:      %[[A32:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[B:.*]] = tc.read %B[%n, %k]
// CHECK-NEXT:      %[[B32:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK-NEXT:      tc.yield %[[P]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tc.def @mixed(%A: !tc.tensor<f16, [M, K]>, %B: !tc.tensor<f16, [N, K]>) -> (%C: !tc.tensor<f32, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
    %0 = tc.read %A[%m, %k]
    %1 = tc.read %B[%n, %k]
    %2 = arith.mulf %0, %1 : f16
    %3 = arith.extf %2 : f16 to f32
    tc.yield %3 : f32
  }
}

// -----

// An elementwise statement in half: computed in f32, rounded once where it
// is stored; a copy (no arithmetic in half) stays as it is.
// CHECK-LABEL: tc.def @elementwise(
// CHECK-NEXT:    tc.comprehension %Y[%i] "=" (%i in [0, N)) {
// CHECK-NEXT:      %[[X:.*]] = tc.read %X[%i]
// CHECK-NEXT:      %[[X32:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[X32]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %[[X32]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT:      tc.yield %[[H]] : f16
// CHECK-NEXT:    }
// CHECK-NEXT:    tc.comprehension %Z[%{{.*}}] "=" (%{{.*}} in [0, N)) {
// CHECK-NEXT:      %[[C:.*]] = tc.read %X[%{{.*}}]
// CHECK-NEXT:      tc.yield %[[C]] : f16
tc.def @elementwise(%X: !tc.tensor<f16, [N]>) -> (%Y: !tc.tensor<f16, [N]>, %Z: !tc.tensor<f16, [N]>) {
  tc.comprehension %Y[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    %1 = math.exp %0 : f16
    %2 = arith.addf %1, %0 : f16
    tc.yield %2 : f16
  }
  tc.comprehension %Z[%j] "=" (%j in [0, N)) {
    %3 = tc.read %X[%j]
    tc.yield %3 : f16
  }
}

// -----

// A half temporary of the def (a row's maximum, then the row less it)
// holds f32: its reads give f32, the maximum of half reads is widened into
// it, and only the output's store rounds.
// CHECK-LABEL: tc.def @shifted(
// CHECK-NEXT:    %[[MX:.*]] = tc.alloc : !tc.tensor<f32, [B]>
// CHECK-NEXT:    tc.comprehension %[[MX]][%b] "max=!" (%b in [0, B), %n in [0, N)) {
// CHECK-NEXT:      %[[X:.*]] = tc.read %X[%b, %n]
// CHECK-NEXT:      %[[X32:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      tc.yield %[[X32]] : f32
// CHECK:         tc.comprehension %Y[%[[B:.*]], %[[N:.*]]] "=" (%[[B]] in [0, B), %[[N]] in [0, N)) {
// CHECK-NEXT:      %[[X:.*]] = tc.read %X[%[[B]], %[[N]]]
// CHECK-NEXT:      %[[X32:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = tc.read %[[MX]][%[[B]]]
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X32]], %[[M]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT:      tc.yield %[[H]] : bf16
tc.def @shifted(%X: !tc.tensor<bf16, [B, N]>) -> (%Y: !tc.tensor<bf16, [B, N]>) {
  %mx = tc.alloc : !tc.tensor<bf16, [B]>
  tc.comprehension %mx[%b] "max=!" (%b in [0, B), %n in [0, N)) {
    %0 = tc.read %X[%b, %n]
    tc.yield %0 : bf16
  }
  tc.comprehension %Y[%b, %n] "=" (%b in [0, B), %n in [0, N)) {
    %0 = tc.read %X[%b, %n]
    %1 = tc.read %mx[%b]
    %2 = arith.subf %0, %1 : bf16
    tc.yield %2 : bf16
  }
}

// -----

// A pointwise sum onto a half output of a half temporary's value: the
// temporary holds f32, so the statement computes nothing in half, but what
// it yields is rounded where it is stored (a half layernorm's backward).
// CHECK-LABEL: tc.def @onto_temporary(
// CHECK:         tc.comprehension %Y[%[[B:.*]], %[[N:.*]]] "+=" (%[[B]] in [0, B), %[[N]] in [0, N)) {
// CHECK-NEXT:      %[[T:.*]] = tc.read %t[%[[B]], %[[N]]]
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[T]] : f32 to f16
// CHECK-NEXT:      tc.yield %[[H]] : f16
tc.def @onto_temporary(%X: !tc.tensor<f16, [B, N]>) -> (%Y: !tc.tensor<f16, [B, N]>) {
  %t = tc.alloc : !tc.tensor<f16, [B, N]>
  tc.comprehension %t[%b, %n] "=" (%b in [0, B), %n in [0, N)) {
    %0 = tc.read %X[%b, %n]
    %1 = tc.read %X[%b, %n]
    %2 = arith.mulf %0, %1 : f16
    tc.yield %2 : f16
  }
  tc.comprehension %Y[%b, %n] "+=" (%b in [0, B), %n in [0, N)) {
    %0 = tc.read %t[%b, %n]
    tc.yield %0 : f16
  }
}
