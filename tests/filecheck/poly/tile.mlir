// RUN: tcir-opt %s -p "poly-tile{sizes=32,32,32}" | filecheck %s

// The paper's fused sgemm (its Figure (b): an outer band over i, j for both
// statements, the k band for T alone) tiled by 32: its Figure (c). Each band
// becomes a tile band (floor(i/32)) over a point band (i mod 32), marked; the
// k band sits at schedule depth 2 and takes the third size.
poly.scop @sgemm params [N, M, K] context "[N, M, K] -> { : N > 0 and M > 0 and K > 0 }" {
  poly.stmt @S domain "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K }" reads "[N, M, K] -> { S[i, j] -> C[i, j] }" writes "[N, M, K] -> { S[i, j] -> O[i, j] }" {
  ^bb0(%i: index, %j: index):
  }
  poly.stmt @T domain "[N, M, K] -> { T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "[N, M, K] -> { T[i, j, k] -> O[i, j]; T[i, j, k] -> A[i, k]; T[i, j, k] -> B[k, j] }" writes "[N, M, K] -> { T[i, j, k] -> O[i, j] }" {
  ^bb0(%i: index, %j: index, %k: index):
  }
  poly.domain "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K; T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
    poly.band "[N, M, K] -> [{ S[i, j] -> [(i)]; T[i, j, k] -> [(i)] }, { S[i, j] -> [(j)]; T[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
      poly.sequence {
        poly.filter "[N, M, K] -> { S[i, j] }"
        poly.filter "[N, M, K] -> { T[i, j, k] }" {
          poly.band "[N, M, K] -> [{ T[i, j, k] -> [(k)] }]" permutable coincident = [0]
        }
      }
    }
  }
}

// CHECK-LABEL: poly.scop @sgemm
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[N, M, K] -> [{ T[i, j, k] -> [(floor((i)/32))]; S[i, j] -> [(floor((i)/32))] }, { T[i, j, k] -> [(floor((j)/32))]; S[i, j] -> [(floor((j)/32))] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.mark "point" {
// CHECK-NEXT:          poly.band "[N, M, K] -> [{ T[i, j, k] -> [((i) mod 32)]; S[i, j] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)]; S[i, j] -> [((j) mod 32)] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:            poly.sequence {
// CHECK-NEXT:              poly.filter "[N, M, K] -> { S[i, j] }"
// CHECK-NEXT:              poly.filter "[N, M, K] -> { T[i, j, k] }" {
// CHECK-NEXT:                poly.band "[N, M, K] -> [{ T[i, j, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:                  poly.mark "point" {
// CHECK-NEXT:                    poly.band "[N, M, K] -> [{ T[i, j, k] -> [((k) mod 32)] }]" permutable coincident = [0]
// CHECK-NEXT:                  }
// CHECK-NEXT:                }
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }

// Known extents: j (20 values) is clamped to one tile of 20, i (100 values)
// gets a partial last tile, and the fourth member, beyond the sizes, stays
// untiled in the tile band with no point member.
poly.scop @clamp params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i, j, k, l] : 0 <= i < 100 and 0 <= j < 20 and 0 <= k < 64 and 0 <= l < 64 }" reads "{ }" writes "{ S0[i, j, k, l] -> X[i, j, k, l] }" {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
  }
  poly.domain "{ S0[i, j, k, l] : 0 <= i < 100 and 0 <= j < 20 and 0 <= k < 64 and 0 <= l < 64 }" {
    poly.band "[{ S0[i, j, k, l] -> [(i)] }, { S0[i, j, k, l] -> [(j)] }, { S0[i, j, k, l] -> [(k)] }, { S0[i, j, k, l] -> [(l)] }]" permutable coincident = [1, 1, 1, 1]
  }
}

// CHECK-LABEL: poly.scop @clamp
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S0[i, j, k, l] -> [(floor((i)/32))] }, { S0[i, j, k, l] -> [(floor((j)/20))] }, { S0[i, j, k, l] -> [(floor((k)/32))] }, { S0[i, j, k, l] -> [(l)] }]" permutable coincident = [1, 1, 1, 1] {
// CHECK-NEXT:        poly.mark "point" {
// CHECK-NEXT:          poly.band "[{ S0[i, j, k, l] -> [((i) mod 32)] }, { S0[i, j, k, l] -> [((j) mod 20)] }, { S0[i, j, k, l] -> [((k) mod 32)] }]" permutable coincident = [1, 1, 1]
// CHECK-NEXT:        }
// CHECK-NEXT:      }

// Bands that are not permutable are left alone.
poly.scop @sequential params [N] context "[N] -> { : N > 0 }" {
  poly.stmt @S0 domain "[N] -> { S0[i] : 0 <= i < N }" reads "[N] -> { S0[i] -> X[i - 1] : i > 0 }" writes "[N] -> { S0[i] -> X[i] }" {
  ^bb0(%i: index):
  }
  poly.domain "[N] -> { S0[i] : 0 <= i < N }" {
    poly.band "[N] -> [{ S0[i] -> [(i)] }]" coincident = [0]
  }
}

// CHECK-LABEL: poly.scop @sequential
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[N] -> [{ S0[i] -> [(i)] }]" coincident = [0]
// CHECK-NEXT:    }
