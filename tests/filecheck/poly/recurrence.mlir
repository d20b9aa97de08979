// RUN: tcir-opt %s -p convert-tc-to-poly | filecheck %s
// RUN: tcir-opt %s -p convert-tc-to-poly | tcir-opt | filecheck %s
// RUN: tcir-opt %s -p 'tc-specialize{sizes="M=6,N=4"},convert-tc-to-poly,poly-schedule' | filecheck %s --check-prefix=SCHED

// A stepped loop (a recurrence along t): its statements keep the loop and
// the dimension of its steps, and the canonical tree runs them step by step
// (a band over the steps, not coincident, above their sequence; the
// dimension less its lower bound: t starts at 1).
// CHECK-LABEL: poly.scop @cell
// CHECK:         poly.stmt @S0 domain "[M, N] -> { S0[t, i] : 0 < t < M and 0 <= i < N }" reads "[M, N] -> {  }" writes "[M, N] -> { S0[t, i] -> A[t, i] }" loop "t" dim 0 {
// CHECK:         poly.stmt @S1 {{.*}} reads "[M, N] -> { S1[t, i, k] -> H[-1 + t, k]; S1[t, i, k] -> A[t, i] }" {{.*}} loop "t" dim 0 {
// CHECK:         poly.stmt @S2 {{.*}} loop "t" dim 0 {
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[M, N] -> [{ S0[t, i] -> [(-1 + t)]; S2[t, i] -> [(-1 + t)]; S1[t, i, k] -> [(-1 + t)] }]" permutable coincident = [0] {
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "[M, N] -> { S0[t, i] }" {
// CHECK-NEXT:            poly.band "[M, N] -> [{ S0[t, i] -> [(i)] }]" permutable coincident = [1]
// CHECK-NEXT:          }
// CHECK-NEXT:          poly.filter "[M, N] -> { S1[t, i, k] }" {
// CHECK-NEXT:            poly.band "[M, N] -> [{ S1[t, i, k] -> [(i)] }, { S1[t, i, k] -> [(k)] }]" permutable coincident = [1, 0]
// CHECK-NEXT:          }
// CHECK-NEXT:          poly.filter "[M, N] -> { S2[t, i] }" {
// CHECK-NEXT:            poly.band "[M, N] -> [{ S2[t, i] -> [(i)] }]" permutable coincident = [1]

// The dependences (in that order) keep t sequential and outermost; i, a
// statement's output dimension that no step reads at another point of the
// same step, stays parallel.
// SCHED:      poly.domain
// SCHED-NEXT:   poly.band "[{ S0[t, i] -> [(t)]; S1[t, i, k] -> [(t)]; S2[t, i] -> [(t)] }]" permutable coincident = [0] {
// SCHED-NEXT:     poly.band "[{ S0[t, i] -> [(i)]; S1[t, i, k] -> [(i)]; S2[t, i] -> [(i)] }]" permutable coincident = [1] {
tc.def @cell(%X: !tc.tensor<f32, [M, N]>) -> (%H: !tc.tensor<f32, [M, N]>) {
  %A = tc.alloc : !tc.tensor<f32, [M, N]>
  tc.comprehension %A[%t, %i] "+=!" (%t in [1, M), %i in [0, N), %k in [0, N)) loop "t" along %t {
    %0 = tc.read %H[%t - 1, %k]
    tc.yield %0 : f32
  }
  tc.comprehension %H[%t, %i] "=" (%t in [1, M), %i in [0, N)) loop "t" along %t {
    %0 = tc.read %A[%t, %i]
    %1 = tc.read %X[%t, %i]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
}
