// RUN: tcir-opt %s -p convert-tc-to-poly | filecheck %s
// RUN: tcir-opt %s -p convert-tc-to-poly | tcir-opt | filecheck %s

// The paper's sgemm: the canonical schedule tree of Figure (a), one statement
// per comprehension, accesses named by the TC tensors, bodies ending in tc.update.
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

// CHECK-LABEL: tc.def @sgemm
// CHECK-NEXT:    poly.scop @sgemm params [N, M, K] context "[N, M, K] -> {  : N > 0 and M > 0 and K > 0 }" {
// CHECK-NEXT:      poly.stmt @S0 domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K }" reads "[N, M, K] -> { S0[i, j] -> C[i, j] }" writes "[N, M, K] -> { S0[i, j] -> C[i, j] }" {
// CHECK-NEXT:      ^bb0(%i: index, %j: index):
// CHECK-NEXT:        %0 = tc.read %C[%i, %j]
// CHECK-NEXT:        %1 = arith.mulf %b, %0 : f32
// CHECK-NEXT:        tc.update %C[%i, %j] "=" %1
// CHECK-NEXT:      }
// CHECK-NEXT:      poly.stmt @S1 domain "[N, M, K] -> { S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "[N, M, K] -> { S1[i, j, k] -> C[i, j]; S1[i, j, k] -> A[i, k]; S1[i, j, k] -> B[k, j] }" writes "[N, M, K] -> { S1[i, j, k] -> C[i, j] }" {
// CHECK:             tc.update %C[%{{.*}}, %{{.*}}] "+=" %{{.*}}
// CHECK-NEXT:      }
// CHECK-NEXT:      poly.domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K; S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "[N, M, K] -> { S0[i, j] }" {
// CHECK-NEXT:            poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:          }
// CHECK-NEXT:          poly.filter "[N, M, K] -> { S1[i, j, k] }" {
// CHECK-NEXT:            poly.band "[N, M, K] -> [{ S1[i, j, k] -> [(i)] }, { S1[i, j, k] -> [(j)] }, { S1[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// An initializing reduction gives an init statement storing the identity,
// then the update.
tc.def @mm(%A: !tc.tensor<f32, [M, K]>, %B: !tc.tensor<f32, [K, N]>) -> (%C: !tc.tensor<f32, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
    %0 = tc.read %A[%m, %k]
    %1 = tc.read %B[%k, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// CHECK-LABEL: tc.def @mm
// CHECK:         poly.stmt @S0 domain "[M, K, N] -> { S0[m, n] : 0 <= m < M and 0 <= n < N }" reads "[M, K, N] -> {  }" writes "[M, K, N] -> { S0[m, n] -> C[m, n] }" {
// CHECK-NEXT:    ^bb0(%m: index, %n: index):
// CHECK-NEXT:      %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      tc.update %C[%m, %n] "=" %{{.*}}
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.stmt @S1 domain "[M, K, N] -> { S1[m, n, k] : 0 <= m < M and 0 <= n < N and 0 <= k < K }"
// CHECK:           tc.update %C[%{{.*}}, %{{.*}}] "+=" %{{.*}}
// CHECK:         poly.sequence {
// CHECK:           poly.band "[M, K, N] -> [{ S1[m, n, k] -> [(m)] }, { S1[m, n, k] -> [(n)] }, { S1[m, n, k] -> [(k)] }]" permutable coincident = [1, 1, 0]

// An indirect subscript may read the whole tensor dimension; a single
// statement's tree has no sequence.
tc.def @gather(%X: !tc.tensor<f32, [N]>, %I: !tc.tensor<i32, [A, B]>) -> (%Z: !tc.tensor<f32, [A, B]>) {
  tc.comprehension %Z[%i, %j] "=" (%i in [0, A), %j in [0, B)) {
    %0 = tc.read %I[%i, %j]
    %1 = tc.read %X[%0]
    tc.yield %1 : f32
  }
}

// CHECK-LABEL: tc.def @gather
// CHECK:         poly.stmt @S0 domain "[N, A, B] -> { S0[i, j] : 0 <= i < A and 0 <= j < B }" reads "[N, A, B] -> { S0[i, j] -> X[o0] : 0 <= o0 < N; S0[i, j] -> I[i, j] }" writes "[N, A, B] -> { S0[i, j] -> Z[i, j] }"
// CHECK:         poly.domain "[N, A, B] -> { S0[i, j] : 0 <= i < A and 0 <= j < B }" {
// CHECK-NEXT:      poly.band "[N, A, B] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:    }

// Reading the written tensor other than pointwise reads a copy made just before.
tc.def @reverse(%X: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [N]>) {
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    tc.yield %0 : f32
  }
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %O[%i]
    %1 = tc.read %O[N - 1 - %i]
    %2 = arith.subf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// CHECK-LABEL: tc.def @reverse
// CHECK-NEXT:    %O_old = tc.alloc : !tc.tensor<f32, [N]>
// CHECK:         poly.stmt @S1 domain "[N] -> { S1[a0] : 0 <= a0 < N }" reads "[N] -> { S1[a0] -> O[a0] }" writes "[N] -> { S1[a0] -> O_old[a0] }" {
// CHECK-NEXT:    ^bb0(%a0: index):
// CHECK-NEXT:      %{{.*}} = tc.read %O[%a0]
// CHECK-NEXT:      tc.update %O_old[%a0] "=" %{{.*}}
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.stmt @S2 domain "[N] -> { S2[i] : 0 <= i < N }" reads "[N] -> { S2[i] -> O_old[i]; S2[i] -> O_old[-1 + N - i] }" writes "[N] -> { S2[i] -> O[i] }" {

// A scatter through an index tensor: its "+=!" fills the whole of gE, its
// update may write any row of gE (may_writes), and only d, the one dimension
// that is a subscript of its own, is coincident.
tc.def @embedding_grad(%LUT: !tc.tensor<f32, [E, D]>, %I: !tc.tensor<i32, [B]>, %gO: !tc.tensor<f32, [B, D]>) -> (%gE: !tc.tensor<f32, [E, D]>) {
  tc.comprehension %gE[] "+=!" (%b in [0, B), %d in [0, D)) {
    %0 = tc.read %gO[%b, %d]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1, %d] : f32
  }
}
// CHECK-LABEL: tc.def @embedding_grad
// CHECK:         poly.stmt @S0 domain "[E, D, B] -> { S0[a0, a1] : 0 <= a0 < E and 0 <= a1 < D }" reads "[E, D, B] -> {  }" writes "[E, D, B] -> { S0[a0, a1] -> gE[a0, a1] }"
// CHECK:         poly.stmt @S1 domain "[E, D, B] -> { S1[b, d] : 0 <= b < B and 0 <= d < D }" reads "[E, D, B] -> { S1[b, d] -> gO[b, d]; S1[b, d] -> I[b]; S1[b, d] -> gE[o0, d] : 0 <= o0 < E }" may_writes "[E, D, B] -> { S1[b, d] -> gE[o0, d] : 0 <= o0 < E }"
// CHECK:           tc.update %gE[%{{.*}}, %d] "+=" %{{.*}}
// CHECK:         poly.band "[E, D, B] -> [{ S1[b, d] -> [(b)] }, { S1[b, d] -> [(d)] }]" permutable coincident = [0, 1]

// An affine scatter writes exactly i + x, and neither dimension is coincident.
tc.def @conv1d_grad(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>, %gO: !tc.tensor<f32, [M - N + 1]>) -> (%gI: !tc.tensor<f32, [M]>) {
  tc.comprehension %gI[] "+=" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %gO[%i]
    %1 = tc.read %K[%x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 at [%i + %x] : f32
  }
}
// CHECK-LABEL: tc.def @conv1d_grad
// CHECK:         poly.stmt @S0 {{.*}} writes "[M, N] -> { S0[i, x] -> gI[i + x] }"
// CHECK:           tc.update %gI[%i + %x] "+=" %{{.*}}
// CHECK:         poly.band "[M, N] -> [{ S0[i, x] -> [(i)] }, { S0[i, x] -> [(x)] }]" permutable coincident = [0, 0]

// A sum guarded by an affine condition whose other value is the identity
// (a "same" convolution): the domain keeps only the instances where the
// guard holds, and the body is the guarded product alone.
// CHECK-LABEL: tc.def @same
// CHECK:         poly.stmt @S1 domain "[T, K] -> { S1[t, k] : 0 <= t < T and k >= 0 and -t < k < K and k <= T - t }" reads "[T, K] -> { S1[t, k] -> X[-1 + t + k]; S1[t, k] -> W[k]; S1[t, k] -> Y[t] }"
// CHECK-NEXT:    ^bb0(%t_1: index, %k: index):
// CHECK-NEXT:      %[[X:.*]] = tc.read %X[%t_1 + %k - 1]
// CHECK-NEXT:      %[[W:.*]] = tc.read %W[%k]
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK-NEXT:      tc.update %Y[%t_1] "+=" %[[P]]
// CHECK-NEXT:    }
tc.def @same(%X: !tc.tensor<f32, [T]>, %W: !tc.tensor<f32, [K]>) -> (%Y: !tc.tensor<f32, [T]>) {
  tc.comprehension %Y[%t] "+=!" (%t in [0, T), %k in [0, K)) where ["t in 0:T", "k in 0:K"] {
    %0 = arith.index_cast %t : index to i32
    %1 = arith.index_cast %k : index to i32
    %2 = arith.addi %0, %1 : i32
    %3 = arith.constant 1 : i32
    %4 = arith.cmpi sge, %2, %3 : i32
    %5 = arith.index_cast %t : index to i32
    %6 = arith.index_cast %k : index to i32
    %7 = arith.addi %5, %6 : i32
    %8 = tc.size [T]
    %9 = arith.index_cast %8 : index to i32
    %10 = arith.cmpi sle, %7, %9 : i32
    %11 = arith.andi %4, %10 : i1
    %12 = scf.if %11 -> (f32) {
      %13 = tc.read %X[%t + %k - 1]
      %14 = tc.read %W[%k]
      %15 = arith.mulf %13, %14 : f32
      scf.yield %15 : f32
    } else {
      %16 = arith.constant 0.000000e+00 : f32
      scf.yield %16 : f32
    }
    tc.yield %12 : f32
  }
}

// A scatter's sum guarded the same way (a strided, padded convolution's
// input gradient): it writes only where the guard holds, which keeps its
// target in bounds.
// CHECK-LABEL: tc.def @guarded_scatter
// CHECK:         poly.stmt @S1 domain "[P, H] -> { S1[k, i] : 0 <= k <= 2 and 0 <= i < P and -k < 2i <= H - k }" reads "[P, H] -> { S1[k, i] -> gX[-1 + k + 2i]; S1[k, i] -> gO[i] }" writes "[P, H] -> { S1[k, i] -> gX[-1 + k + 2i] }"
// CHECK-NEXT:    ^bb0(%k: index, %i: index):
// CHECK-NEXT:      %[[V:.*]] = tc.read %gO[%i]
// CHECK-NEXT:      tc.update %gX[%k + 2 * %i - 1] "+=" %[[V]]
tc.def @guarded_scatter(%gO: !tc.tensor<f32, [P]>, %X: !tc.tensor<f32, [H]>) -> (%gX: !tc.tensor<f32, [H]>) {
  tc.comprehension %gX[] "+=!" (%k in [0, 3), %i in [0, P)) where ["k in 0:3", "i in 0:P"] {
    %0 = arith.constant 2 : i32
    %1 = arith.index_cast %i : index to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.index_cast %k : index to i32
    %4 = arith.addi %2, %3 : i32
    %5 = arith.constant 1 : i32
    %6 = arith.cmpi sge, %4, %5 : i32
    %7 = arith.constant 2 : i32
    %8 = arith.index_cast %i : index to i32
    %9 = arith.muli %7, %8 : i32
    %10 = arith.index_cast %k : index to i32
    %11 = arith.addi %9, %10 : i32
    %12 = tc.size [H]
    %13 = arith.index_cast %12 : index to i32
    %14 = arith.cmpi sle, %11, %13 : i32
    %15 = arith.andi %6, %14 : i1
    %16 = scf.if %15 -> (f32) {
      %17 = tc.read %gO[%i]
      scf.yield %17 : f32
    } else {
      %18 = arith.constant 0.000000e+00 : f32
      scf.yield %18 : f32
    }
    tc.yield %16 at [%k + 2 * %i - 1] : f32
  }
}

// A maximum whose other value (0.0) is not its identity keeps its guard.
// CHECK-LABEL: tc.def @zero_max
// CHECK:         poly.stmt @S1 domain "[T] -> { S1[t, k] : 0 <= t < T and 0 <= k <= 2 }"
// CHECK:           scf.if
// CHECK:           tc.update %Y[%t_1] "max=" %{{.*}}
tc.def @zero_max(%X: !tc.tensor<f32, [T]>) -> (%Y: !tc.tensor<f32, [T]>) {
  tc.comprehension %Y[%t] "max=!" (%t in [0, T), %k in [0, 3)) where ["t in 0:T", "k in 0:3"] {
    %0 = arith.index_cast %t : index to i32
    %1 = arith.index_cast %k : index to i32
    %2 = arith.addi %0, %1 : i32
    %3 = arith.constant 1 : i32
    %4 = arith.cmpi sge, %2, %3 : i32
    %5 = arith.index_cast %t : index to i32
    %6 = arith.index_cast %k : index to i32
    %7 = arith.addi %5, %6 : i32
    %8 = tc.size [T]
    %9 = arith.index_cast %8 : index to i32
    %10 = arith.cmpi sle, %7, %9 : i32
    %11 = arith.andi %4, %10 : i1
    %12 = scf.if %11 -> (f32) {
      %13 = tc.read %X[%t + %k - 1]
      scf.yield %13 : f32
    } else {
      %14 = arith.constant 0.000000e+00 : f32
      scf.yield %14 : f32
    }
    tc.yield %12 : f32
  }
}
