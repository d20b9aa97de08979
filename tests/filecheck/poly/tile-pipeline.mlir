// RUN: tcir-opt %S/../../../examples/sgemm.tc -p 'tc-specialize{sizes="N=64,M=40,K=48"},convert-tc-to-poly,poly-schedule{fusion=max},poly-tile{sizes=32,32,32},poly-sink' --print-ir-after-all 2>&1 >/dev/null | filecheck %s

// sgemm from its TC source through the paper's steps, one IR dump per pass:
// canonical (a), fused (b: here the k band spans both statements, S0 at 0),
// tiled (c, point bands marked) and sunk (d: i, j point loops innermost
// below the k loops, one copy per statement). M = 40 gives k a partial tile.

// CHECK-LABEL: IR Dump After convert-tc-to-poly
// CHECK:         poly.domain
// CHECK-NEXT:      poly.sequence {
// CHECK-NEXT:        poly.filter "{ S0[i, j] }" {
// CHECK-NEXT:          poly.band "[{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:        }
// CHECK-NEXT:        poly.filter "{ S1[i, j, k] }" {
// CHECK-NEXT:          poly.band "[{ S1[i, j, k] -> [(i)] }, { S1[i, j, k] -> [(j)] }, { S1[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]

// CHECK-LABEL: IR Dump After poly-schedule
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.band "[{ S0[i, j] -> [(0)]; S1[i, j, k] -> [(k)] }]" permutable coincident = [0] {
// CHECK-NEXT:          poly.sequence {
// CHECK-NEXT:            poly.filter "{ S0[i, j] }"
// CHECK-NEXT:            poly.filter "{ S1[i, j, k] }"

// CHECK-LABEL: IR Dump After poly-tile
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S0[i, j] -> [(floor((i)/32))]; S1[i, j, k] -> [(floor((i)/32))] }, { S0[i, j] -> [(floor((j)/32))]; S1[i, j, k] -> [(floor((j)/32))] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.mark "point" {
// CHECK-NEXT:          poly.band "[{ S0[i, j] -> [((i) mod 32)]; S1[i, j, k] -> [((i) mod 32)] }, { S0[i, j] -> [((j) mod 32)]; S1[i, j, k] -> [((j) mod 32)] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:            poly.band "[{ S0[i, j] -> [(0)]; S1[i, j, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:              poly.mark "point" {
// CHECK-NEXT:                poly.band "[{ S0[i, j] -> [(0)]; S1[i, j, k] -> [((k) mod 32)] }]" permutable coincident = [0] {
// CHECK-NEXT:                  poly.sequence {

// CHECK-LABEL: IR Dump After poly-sink
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S0[i, j] -> [(floor((i)/32))]; S1[i, j, k] -> [(floor((i)/32))] }, { S0[i, j] -> [(floor((j)/32))]; S1[i, j, k] -> [(floor((j)/32))] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.band "[{ S0[i, j] -> [(0)]; S1[i, j, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:          poly.band "[{ S0[i, j] -> [(0)]; S1[i, j, k] -> [((k) mod 32)] }]" permutable coincident = [0] {
// CHECK-NEXT:            poly.sequence {
// CHECK-NEXT:              poly.filter "{ S0[i, j] }" {
// CHECK-NEXT:                poly.band "[{ S0[i, j] -> [((i) mod 32)] }, { S0[i, j] -> [((j) mod 32)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:              }
// CHECK-NEXT:              poly.filter "{ S1[i, j, k] }" {
// CHECK-NEXT:                poly.band "[{ S1[i, j, k] -> [((i) mod 32)] }, { S1[i, j, k] -> [((j) mod 32)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NOT:       poly.mark
