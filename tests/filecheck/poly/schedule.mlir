// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=max}" | filecheck %s --check-prefix=MAX
// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=min}" | filecheck %s --check-prefix=MIN
// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=preserve3}" | filecheck %s --check-prefix=P3
// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=outer}" | filecheck %s --check-prefix=OUTER

tc.def @sgemm(%a: f32, %b: f32, %A: !tc.tensor<f32, [N, M]>, %B: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f32, [N, K]>) {
  tc.comprehension %C[%i, %j] "=" (%i in [0, N), %j in [0, K)) {
    %0 = tc.read %C[%i, %j]
    %1 = arith.mulf %b, %0 : f32
    tc.yield %1 : f32
  }
  tc.comprehension %C[%i, %j] "+=" (%i in [0, N), %j in [0, K), %k in [0, M)) {
    %2 = tc.read %A[%i, %k]
    %3 = tc.read %B[%k, %j]
    %4 = arith.mulf %a, %2 : f32
    %5 = arith.mulf %4, %3 : f32
    tc.yield %5 : f32
  }
}

// Max fusion of sgemm: the paper's Figure (b), an outer parallel band over i, j
// for both statements (the reduction member split into a band of its own).
// MAX-LABEL: tc.def @sgemm
// MAX:         poly.domain
// MAX-NEXT:      poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
// MAX-NEXT:        poly.band "[N, M, K] -> [{ S0[i, j] -> [(0)]; S1[i, j, k] -> [(k)] }]" permutable coincident = [0] {
// MAX-NEXT:          poly.sequence {
// MAX-NEXT:            poly.filter "[N, M, K] -> { S0[i, j] }"
// MAX-NEXT:            poly.filter "[N, M, K] -> { S1[i, j, k] }"
// MAX-NEXT:          }

// Min fusion keeps one band per statement, in a sequence.
// MIN-LABEL: tc.def @sgemm
// MIN:         poly.domain
// MIN-NEXT:      poly.sequence {
// MIN-NEXT:        poly.filter "[N, M, K] -> { S0[i, j] }" {
// MIN-NEXT:          poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
// MIN-NEXT:        }
// MIN-NEXT:        poly.filter "[N, M, K] -> { S1[i, j, k] }" {
// MIN-NEXT:          poly.band "[N, M, K] -> [{ S1[i, j, k] -> [(i)] }, { S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
// MIN-NEXT:            poly.band "[N, M, K] -> [{ S1[i, j, k] -> [(k)] }]" permutable coincident = [0]

// preserve3 fuses sgemm as max does: both outer members stay parallel.
// P3-LABEL: tc.def @sgemm
// P3:         poly.domain
// P3-NEXT:      poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {

tc.def @MLP3(%I: !tc.tensor<f32, [B, M]>, %W2: !tc.tensor<f32, [O, M]>, %B2: !tc.tensor<f32, [O]>, %W3: !tc.tensor<f32, [P, O]>, %B3: !tc.tensor<f32, [P]>, %W4: !tc.tensor<f32, [Q, P]>, %B4: !tc.tensor<f32, [Q]>) -> (%O2: !tc.tensor<f32, [B, O]>, %O3: !tc.tensor<f32, [B, P]>, %O4: !tc.tensor<f32, [B, Q]>) {
  tc.comprehension %O2[%b, %o] "+=!" (%b in [0, B), %o in [0, O), %n in [0, M)) {
    %0 = tc.read %I[%b, %n]
    %1 = tc.read %W2[%o, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O2[%b, %o] "=" (%b in [0, B), %o in [0, O)) {
    %0 = tc.read %O2[%b, %o]
    %1 = tc.read %B2[%o]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O2[%b, %o] "=" (%b in [0, B), %o in [0, O)) {
    %0 = tc.read %O2[%b, %o]
    %z = arith.constant 0.0 : f32
    %1 = arith.maximumf %0, %z : f32
    tc.yield %1 : f32
  }

  tc.comprehension %O3[%b, %o] "+=!" (%b in [0, B), %o in [0, P), %n in [0, O)) {
    %0 = tc.read %O2[%b, %n]
    %1 = tc.read %W3[%o, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O3[%b, %o] "=" (%b in [0, B), %o in [0, P)) {
    %0 = tc.read %O3[%b, %o]
    %1 = tc.read %B3[%o]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O3[%b, %o] "=" (%b in [0, B), %o in [0, P)) {
    %0 = tc.read %O3[%b, %o]
    %z = arith.constant 0.0 : f32
    %1 = arith.maximumf %0, %z : f32
    tc.yield %1 : f32
  }

  tc.comprehension %O4[%b, %o] "+=!" (%b in [0, B), %o in [0, Q), %n in [0, P)) {
    %0 = tc.read %O3[%b, %n]
    %1 = tc.read %W4[%o, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O4[%b, %o] "=" (%b in [0, B), %o in [0, Q)) {
    %0 = tc.read %O4[%b, %o]
    %1 = tc.read %B4[%o]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O4[%b, %o] "=" (%b in [0, B), %o in [0, Q)) {
    %0 = tc.read %O4[%b, %o]
    %z = arith.constant 0.0 : f32
    %1 = arith.maximumf %0, %z : f32
    tc.yield %1 : f32
  }
}

// Max fusion of MLP3: a single outer band over the batch dimension, for all
// twelve statements.
// MAX-LABEL: tc.def @MLP3
// MAX:         poly.domain
// MAX-NEXT:      poly.band "[B, M, O, P, Q] -> [{ {{(S[0-9]+\[b, o(, n)?\] -> \[\(b\)\]; ){11}S[0-9]+\[b, o(, n)?\] -> \[\(b\)\]}} }]" permutable coincident = [1] {

// Min fusion of MLP3: a sequence of one band per statement.
// MIN-LABEL: tc.def @MLP3
// MIN:         poly.domain
// MIN-NEXT:      poly.sequence {
// MIN-COUNT-12:    poly.band "[B, M, O, P, Q] -> [{ S{{[0-9]+}}[b, o{{(, n)?}}] -> [(b)] }, { S{{[0-9]+}}[b, o{{(, n)?}}] -> [(o)] }]" permutable coincident = [1, 1]

// preserve3 fuses each layer (a sequence of three bands over b and o, both
// parallel), not the whole MLP, which would leave only b parallel.
// P3-LABEL: tc.def @MLP3
// P3:         poly.domain
// P3-NEXT:      poly.sequence {
// P3-NEXT:        poly.filter "[B, M, O, P, Q] -> { {{.*}} }" {
// P3-NEXT:          poly.band "{{.*}}" permutable coincident = [1, 1] {
// P3:             poly.band "{{.*}}" permutable coincident = [1, 1] {
// P3:             poly.band "{{.*}}" permutable coincident = [1, 1] {

// outer fuses MLP3's layers (preserve3's sequence) along the batch only: one
// band over b above the sequence, each layer keeping its band over its outputs.
// OUTER-LABEL: tc.def @MLP3
// OUTER:         poly.domain
// OUTER-NEXT:      poly.band "[B, M, O, P, Q] -> [{ {{(S[0-9]+\[b, o(, n)?\] -> \[\(b\)\]; ){11}S[0-9]+\[b, o(, n)?\] -> \[\(b\)\]}} }]" permutable coincident = [1] {
// OUTER-NEXT:        poly.sequence {
// OUTER-NEXT:          poly.filter "[B, M, O, P, Q] -> { {{.*}} }" {
// OUTER-NEXT:            poly.band "[B, M, O, P, Q] -> [{ {{(S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]; ){3}S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]}} }]" permutable coincident = [1] {
// OUTER:                 poly.band "[B, M, O, P, Q] -> [{ {{(S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]; ){3}S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]}} }]" permutable coincident = [1] {
// OUTER:                 poly.band "[B, M, O, P, Q] -> [{ {{(S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]; ){3}S[0-9]+\[b, o(, n)?\] -> \[\(o\)\]}} }]" permutable coincident = [1] {

// A sum over every row of B: fusing the two statements' rows would break the
// dependence, so outer keeps preserve3's sequence of bands.
// OUTER-LABEL: tc.def @rows
// OUTER:         poly.domain
// OUTER-NEXT:      poly.sequence {
// OUTER-NEXT:        poly.filter "[N, M] -> { S0[i, j] }" {
// OUTER-NEXT:          poly.band "[N, M] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
tc.def @rows(%A: !tc.tensor<f32, [N, M]>) -> (%B: !tc.tensor<f32, [N, M]>, %C: !tc.tensor<f32, [N, M]>) {
  tc.comprehension %B[%i, %j] "=" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %A[%i, %j]
    tc.yield %0 : f32
  }
  tc.comprehension %C[%i, %j] "+=!" (%i in [0, N), %j in [0, M), %k in [0, N)) {
    %0 = tc.read %B[%k, %j]
    tc.yield %0 : f32
  }
}
