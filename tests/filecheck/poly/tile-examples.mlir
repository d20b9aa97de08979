// RUN: tcir-opt %S/../../../examples/MLP3.tc -p 'tc-specialize{sizes="B=4,N=5,O=6,P=7,Q=3"},convert-tc-to-poly,poly-schedule{fusion=preserve3},poly-tile{sizes=2,4,4}' | filecheck %s --check-prefix=MLP3-TILE
// RUN: tcir-opt %S/../../../examples/MLP3.tc -p 'tc-specialize{sizes="B=4,N=5,O=6,P=7,Q=3"},convert-tc-to-poly,poly-schedule{fusion=preserve3},poly-tile{sizes=2,4,4},poly-sink' | filecheck %s --check-prefix=MLP3-SINK
// RUN: tcir-opt %S/../../../examples/gconv.tc -p 'convert-tc-to-poly,poly-schedule{fusion=max},poly-tile{sizes=1,2,4,8,8}' | filecheck %s --check-prefix=GCONV-TILE
// RUN: tcir-opt %S/../../../examples/gconv.tc -p 'convert-tc-to-poly,poly-schedule{fusion=max},poly-tile{sizes=1,2,4,8,8},poly-sink' | filecheck %s --check-prefix=GCONV-SINK

// MLP3 under preserve3: one fused tree per layer, each a (b, o) band over the
// reduction band. Tiling gives per layer a tile band over a marked point
// band, and again for the reduction band at depth 2; Q = 3 < 4 clamps q.
// MLP3-TILE-LABEL: tc.def @MLP3
// MLP3-TILE:         poly.domain
// MLP3-TILE-NEXT:      poly.sequence {
// MLP3-TILE-NEXT:        poly.filter "{ S0[b, o]; S1[b, o, n]; S2[b, o] }" {
// MLP3-TILE-NEXT:          poly.band "[{ {{.*}}S1[b, o, n] -> [(floor((b)/2))]{{.*}} }, { {{.*}}S1[b, o, n] -> [(floor((o)/4))]{{.*}} }]" permutable coincident = [1, 1] {
// MLP3-TILE-NEXT:            poly.mark "point" {
// MLP3-TILE-NEXT:              poly.band "[{ {{.*}}S1[b, o, n] -> [((b) mod 2)]{{.*}} }, { {{.*}}S1[b, o, n] -> [((o) mod 4)]{{.*}} }]" permutable coincident = [1, 1] {
// MLP3-TILE-NEXT:                poly.band "[{ {{.*}}S1[b, o, n] -> [(floor((n)/4))]{{.*}} }]" permutable coincident = [0] {
// MLP3-TILE-NEXT:                  poly.mark "point" {
// MLP3-TILE-NEXT:                    poly.band "[{ {{.*}}S1[b, o, n] -> [((n) mod 4)]{{.*}} }]" permutable coincident = [0] {
// MLP3-TILE-NEXT:                      poly.sequence {
// MLP3-TILE:             poly.band "[{ {{.*}}S7[b, q, p] -> [(floor((b)/2))]{{.*}} }, { {{.*}}S7[b, q, p] -> [(floor((q)/3))]{{.*}} }]" permutable coincident = [1, 1] {

// Sinking moves each layer's (b, o) point loops below its k loops, into
// each of the layer's three statements.
// MLP3-SINK-LABEL: tc.def @MLP3
// MLP3-SINK:         poly.filter "{ S0[b, o]; S1[b, o, n]; S2[b, o] }" {
// MLP3-SINK-NEXT:      poly.band "[{ {{.*}}S1[b, o, n] -> [(floor((b)/2))]{{.*}}]" permutable coincident = [1, 1] {
// MLP3-SINK-NEXT:        poly.band "[{ {{.*}}S1[b, o, n] -> [(floor((n)/4))]{{.*}} }]" permutable coincident = [0] {
// MLP3-SINK-NEXT:          poly.band "[{ {{.*}}S1[b, o, n] -> [((n) mod 4)]{{.*}} }]" permutable coincident = [0] {
// MLP3-SINK-NEXT:            poly.sequence {
// MLP3-SINK-NEXT:              poly.filter "{ S0[b, o] }" {
// MLP3-SINK-NEXT:                poly.band "[{ S0[b, o] -> [((b) mod 2)] }, { S0[b, o] -> [((o) mod 4)] }]" permutable coincident = [1, 1]
// MLP3-SINK-NEXT:              }
// MLP3-SINK-NEXT:              poly.filter "{ S1[b, o, n] }" {
// MLP3-SINK-NEXT:                poly.band "[{ S1[b, o, n] -> [((b) mod 2)] }, { S1[b, o, n] -> [((o) mod 4)] }]" permutable coincident = [1, 1]
// MLP3-SINK-NEXT:              }
// MLP3-SINK-NEXT:              poly.filter "{ S2[b, o] }" {
// MLP3-SINK-NEXT:                poly.band "[{ S2[b, o] -> [((b) mod 2)] }, { S2[b, o] -> [((o) mod 4)] }]" permutable coincident = [1, 1]
// MLP3-SINK-NOT:     poly.mark

// gconv, symbolic sizes: the outer band over n, g, o, h, w of the three
// statements; n (size 1) stays untiled in the tile band, g, o, h, w are
// tiled. The bands of the reduction dimensions are not permutable.
// GCONV-TILE-LABEL: tc.def @gconv
// GCONV-TILE:         poly.domain
// GCONV-TILE-NEXT:      poly.band "[N, G, C, H, W, F, KH, KW] -> [{ {{.*}} -> [(n)]{{.*}} }, { {{.*}} -> [(floor((g)/2))]{{.*}} }, { {{.*}} -> [(floor((o)/4))]{{.*}} }, { {{.*}} -> [(floor((h)/8))]{{.*}} }, { {{.*}} -> [(floor((w)/8))]{{.*}} }]" permutable coincident = [1, 1, 1, 1, 1] {
// GCONV-TILE-NEXT:        poly.mark "point" {
// GCONV-TILE-NEXT:          poly.band "[N, G, C, H, W, F, KH, KW] -> [{ {{.*}} -> [((g) mod 2)]{{.*}} }, { {{.*}} -> [((o) mod 4)]{{.*}} }, { {{.*}} -> [((h) mod 8)]{{.*}} }, { {{.*}} -> [((w) mod 8)]{{.*}} }]" permutable coincident = [1, 1, 1, 1] {

// After sinking, each statement has its own point band innermost; that of
// the convolution sits below its kh and kw loops.
// GCONV-SINK-LABEL: tc.def @gconv
// GCONV-SINK:         poly.sequence {
// GCONV-SINK-NEXT:      poly.filter "[N, G, C, H, W, F, KH, KW] -> { S0[n, g, o, h, w] }" {
// GCONV-SINK-NEXT:        poly.band "[N, G, C, H, W, F, KH, KW] -> [{ S0[n, g, o, h, w] -> [((g) mod 2)] }, { S0[n, g, o, h, w] -> [((o) mod 4)] }, { S0[n, g, o, h, w] -> [((h) mod 8)] }, { S0[n, g, o, h, w] -> [((w) mod 8)] }]" permutable coincident = [1, 1, 1, 1]
// GCONV-SINK-NEXT:      }
// GCONV-SINK-NEXT:      poly.filter "[N, G, C, H, W, F, KH, KW] -> { S1[n, g, o, h, w, i, kh, kw] }" {
// GCONV-SINK-NEXT:        poly.band "[N, G, C, H, W, F, KH, KW] -> [{ S1[n, g, o, h, w, i, kh, kw] -> [(kh)] }]" coincident = [0] {
// GCONV-SINK-NEXT:          poly.band "[N, G, C, H, W, F, KH, KW] -> [{ S1[n, g, o, h, w, i, kh, kw] -> [(kw)] }]" coincident = [0] {
// GCONV-SINK-NEXT:            poly.band "[N, G, C, H, W, F, KH, KW] -> [{ S1[n, g, o, h, w, i, kh, kw] -> [((g) mod 2)] }, {{.*}}]" permutable coincident = [1, 1, 1, 1]
// GCONV-SINK:           poly.filter "[N, G, C, H, W, F, KH, KW] -> { S2[n, g, o, h, w] }" {
// GCONV-SINK-NEXT:        poly.band "[N, G, C, H, W, F, KH, KW] -> [{ S2[n, g, o, h, w] -> [((g) mod 2)] }, {{.*}}]" permutable coincident = [1, 1, 1, 1]
// GCONV-SINK-NOT:     poly.mark
