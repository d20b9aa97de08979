// RUN: tcir-opt %S/../../../examples/sgemm.tc -p 'tc-specialize{sizes="N=6,M=5,K=8"},convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,4,4},poly-sink,poly-unroll{factor=4}' | filecheck %s --check-prefix=TREE
// RUN: tcir-opt %S/../../../examples/sgemm.tc -p 'tc-specialize{sizes="N=6,M=5,K=8"},convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,4,4},poly-sink,poly-unroll{factor=16}' | filecheck %s --check-prefix=TREE16
// RUN: tcir-opt %S/../../../examples/sgemm.tc -p 'convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,4,4},poly-sink,poly-unroll{factor=64}' | filecheck %s --check-prefix=SYMBOLIC
// RUN: tcir-opt %S/../../../examples/sgemm.tc -p 'tc-specialize{sizes="N=6,M=5,K=8"},convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,4,4},poly-sink,poly-unroll{factor=4},convert-poly-to-loops' | filecheck %s --check-prefix=LOOPS
// RUN: tcir-opt %S/../../../examples/mv.tc -p 'tc-specialize{sizes="M=8,K=16"},convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,8},poly-sink,poly-unroll{factor=8}' | filecheck %s --check-prefix=PARTIAL
// RUN: tcir-opt %S/../../../examples/mv.tc -p 'tc-specialize{sizes="M=8,K=16"},convert-tc-to-poly,poly-schedule{fusion=min},poly-tile{sizes=4,8},poly-sink,poly-unroll{factor=4}' | filecheck %s --check-prefix=NOPARTIAL
// RUN: tcir-opt %s -p 'poly-unroll{factor=8}' | filecheck %s --check-prefix=IR8
// RUN: tcir-opt %s -p 'poly-unroll{factor=2}' | filecheck %s --check-prefix=IR2
// RUN: tcir-opt %s -p 'poly-unroll{factor=64}' | filecheck %s --check-prefix=IR64

// Tiled and sunk sgemm (min fusion): the innermost point bands are
// (i mod 4, j mod 4) for S0 and (k mod 4, i mod 4, j mod 4) for S1; with 4
// instances only their last member (j, 4 values) is unrolled, the tile bands
// never are.
// TREE-LABEL: tc.def @sgemm
// TREE:         poly.band "[{ S0[i, j] -> [(floor((i)/4))] }, { S0[i, j] -> [(floor((j)/4))] }]" permutable coincident = [1, 1] {
// TREE-NEXT:      poly.band "[{ S0[i, j] -> [((i) mod 4)] }, { S0[i, j] -> [((j) mod 4)] }]" permutable coincident = [1, 1] options "{ unroll[1] }"
// TREE:         poly.band "[{ S1[i, j, k] -> [(floor((k)/4))] }]" permutable coincident = [0] {
// TREE-NEXT:      poly.band "[{ S1[i, j, k] -> [((k) mod 4)] }, { S1[i, j, k] -> [((i) mod 4)] }, { S1[i, j, k] -> [((j) mod 4)] }]" permutable coincident = [0, 1, 1] options "{ unroll[2] }"

// 16 instances: the last two members (4 x 4; isl writes the set of members
// in its own form).
// TREE16-LABEL: tc.def @sgemm
// TREE16:         poly.band "[{ S0[i, j] -> [((i) mod 4)] }, { S0[i, j] -> [((j) mod 4)] }]" permutable coincident = [1, 1] options "{ unroll[i0] : 0 <= i0 <= 1 }"
// TREE16:         poly.band "[{ S1[i, j, k] -> [((k) mod 4)] }, { S1[i, j, k] -> [((i) mod 4)] }, { S1[i, j, k] -> [((j) mod 4)] }]" permutable coincident = [0, 1, 1] options "{ unroll[i0] : 0 < i0 <= 2 }"

// Symbolic sizes: the point loops still have 4 values at most, and are
// unrolled (4 x 4 x 4 = 64 for S1, with guards for partial tiles).
// SYMBOLIC-LABEL: tc.def @sgemm
// SYMBOLIC:         poly.band "[N, M, K] -> [{ S0[i, j] -> [((i) mod 4)] }, { S0[i, j] -> [((j) mod 4)] }]" permutable coincident = [1, 1] options "{ unroll[i0] : 0 <= i0 <= 1 }"
// SYMBOLIC:         poly.band "[N, M, K] -> [{ S1[i, j, k] -> [((k) mod 4)] }, {{.*}}]" permutable coincident = [0, 1, 1] options "{ unroll[i0] : 0 <= i0 <= 2 }"

// The generated loops: for S0, the tile loops and the i point loop remain;
// the j point loop is replaced by 4 copies of the statement, at 4 * c1 + 0..3.
// LOOPS-LABEL: func.func @sgemm
// LOOPS:         scf.for %c0 = {{.*}} {
// LOOPS-NEXT:      {{.*}} = arith.constant 0 : index
// LOOPS:           scf.for %c1 = {{.*}} {
// LOOPS:             scf.for %c2 = {{.*}} {
// LOOPS-NOT:           scf.for
// LOOPS:               memref.store {{.*}}, %O[{{.*}}] : memref<6x8xf32>
// LOOPS-NOT:           scf.for
// LOOPS:               arith.constant 1 : index
// LOOPS:               memref.store {{.*}}, %O[{{.*}}] : memref<6x8xf32>
// LOOPS-NOT:           scf.for
// LOOPS:               arith.constant 2 : index
// LOOPS:               memref.store {{.*}}, %O[{{.*}}] : memref<6x8xf32>
// LOOPS-NOT:           scf.for
// LOOPS:               arith.constant 3 : index
// LOOPS:               memref.store {{.*}}, %O[{{.*}}] : memref<6x8xf32>
// LOOPS-NEXT:        }

// Partial unrolling: mv's S1 point band is (k mod 8, i mod 4), k sequential.
// With 8 instances, i (4 values) is unrolled fully and k, whose 8 values do
// not fit the 2 instances left, is strip-mined by 2: floor(k/2) stays a loop,
// k mod 2 is unrolled, in the band's order.
// PARTIAL-LABEL: tc.def @mv
// PARTIAL:         poly.band "[{ S1[i, k] -> [(floor((k)/8))] }]" permutable coincident = [0] {
// PARTIAL-NEXT:      poly.band "[{ S1[i, k] -> [(floor((k)/2) - 4*floor((k)/8))] }]" permutable coincident = [0] {
// PARTIAL-NEXT:        poly.band "[{ S1[i, k] -> [((k) mod 2)] }]" permutable coincident = [0] options "{ unroll[0] }" {
// PARTIAL-NEXT:          poly.band "[{ S1[i, k] -> [((i) mod 4)] }]" permutable coincident = [1] options "{ unroll[0] }"

// With 4 instances, i takes them all: k is not split (a split by 1 unrolls nothing).
// NOPARTIAL-LABEL: tc.def @mv
// NOPARTIAL:         poly.band "[{ S1[i, k] -> [((k) mod 8)] }, { S1[i, k] -> [((i) mod 4)] }]" permutable coincident = [0, 1] options "{ unroll[1] }"

// Hand-written: a tiled scop whose point band has a parallel member (i mod 4)
// and a sequential one (k mod 8).
// 8 instances: the sequential innermost member is unrolled, the parallel one
// (left to the threads) is not.
// IR8-LABEL: poly.scop @points
// IR8: poly.band "[{ S0[i, k] -> [((i) mod 4)] }, { S0[i, k] -> [((k) mod 8)] }]" permutable coincident = [1, 0] options "{ unroll[1] }"
// 2 instances: k mod 8 is strip-mined by 2 and the 2 steps unrolled.
// IR2-LABEL: poly.scop @points
// IR2: poly.band "[{ S0[i, k] -> [((i) mod 4)] }]" permutable coincident = [1] {
// IR2-NEXT: poly.band "[{ S0[i, k] -> [(floor((k)/2) - 4*floor((k)/8))] }]" permutable coincident = [0] {
// IR2-NEXT: poly.band "[{ S0[i, k] -> [((k) mod 2)] }]" permutable coincident = [0] options "{ unroll[0] }"
// 64 instances: both members.
// IR64-LABEL: poly.scop @points
// IR64: options "{ unroll[i0] : 0 <= i0 <= 1 }"
poly.scop @points params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i, k] : 0 <= i <= 7 and 0 <= k <= 7 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index, %k: index):
  }
  poly.domain "{ S0[i, k] : 0 <= i <= 7 and 0 <= k <= 7 }" {
    poly.band "[{ S0[i, k] -> [(floor((i)/4))] }, { S0[i, k] -> [(floor((k)/8))] }]" permutable coincident = [1, 0] {
      poly.band "[{ S0[i, k] -> [((i) mod 4)] }, { S0[i, k] -> [((k) mod 8)] }]" permutable coincident = [1, 0]
    }
  }
}
