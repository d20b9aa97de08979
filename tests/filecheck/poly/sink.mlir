// RUN: tcir-opt %s -p "poly-tile{sizes=32,32,32},poly-sink" | filecheck %s
// RUN: tcir-opt %s -p "poly-tile{sizes=32,32,32},poly-sink{sink=false}" | filecheck %s --check-prefix=KEEP

// The paper's fused sgemm (its Figure (b)) tiled and sunk: its Figure (d).
// The parallel point loops i, j move below the sequence, one copy per
// statement, and for T below the k tile band, where they join the point
// band of k (still permutable): k mod 32, then i mod 32, j mod 32 innermost.
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
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "[N, M, K] -> { S[i, j] }" {
// CHECK-NEXT:            poly.band "[N, M, K] -> [{ S[i, j] -> [((i) mod 32)] }, { S[i, j] -> [((j) mod 32)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:          }
// CHECK-NEXT:          poly.filter "[N, M, K] -> { T[i, j, k] }" {
// CHECK-NEXT:            poly.band "[N, M, K] -> [{ T[i, j, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// CHECK-NEXT:              poly.band "[N, M, K] -> [{ T[i, j, k] -> [((k) mod 32)] }, { T[i, j, k] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)] }]" permutable coincident = [0, 1, 1]
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NOT:       poly.mark

// With sink=false the point bands stay where tiling put them, unmarked: the
// point band of i and j above the sequence (where threads can map a tile's
// rows above what the statements below spread over threads).
// KEEP-LABEL: poly.scop @sgemm
// KEEP:         poly.domain
// KEEP-NEXT:      poly.band "[N, M, K] -> [{ T[i, j, k] -> [(floor((i)/32))]; S[i, j] -> [(floor((i)/32))] }, { T[i, j, k] -> [(floor((j)/32))]; S[i, j] -> [(floor((j)/32))] }]" permutable coincident = [1, 1] {
// KEEP-NEXT:        poly.band "[N, M, K] -> [{ T[i, j, k] -> [((i) mod 32)]; S[i, j] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)]; S[i, j] -> [((j) mod 32)] }]" permutable coincident = [1, 1] {
// KEEP-NEXT:          poly.sequence {
// KEEP-NEXT:            poly.filter "[N, M, K] -> { S[i, j] }"
// KEEP-NEXT:            poly.filter "[N, M, K] -> { T[i, j, k] }" {
// KEEP-NEXT:              poly.band "[N, M, K] -> [{ T[i, j, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
// KEEP-NEXT:                poly.band "[N, M, K] -> [{ T[i, j, k] -> [((k) mod 32)] }]" permutable coincident = [0]
// KEEP-NOT:       poly.mark
// KEEP-LABEL: poly.scop @mixed

// A point band with a reduction member k and a parallel member j over a
// sequence: k stays above the sequence, j alone is sunk into both filters.
poly.scop @mixed params [N, K] context "[N, K] -> { : N > 0 and K > 0 }" {
  poly.stmt @S0 domain "[N, K] -> { S0[j] : 0 <= j < N }" reads "[N, K] -> { }" writes "[N, K] -> { S0[j] -> Y[j] }" {
  ^bb0(%j: index):
  }
  poly.stmt @S1 domain "[N, K] -> { S1[k, j] : 0 <= k < K and 0 <= j < N }" reads "[N, K] -> { S1[k, j] -> Y[j]; S1[k, j] -> X[k, j] }" writes "[N, K] -> { S1[k, j] -> Y[j] }" {
  ^bb0(%k: index, %j: index):
  }
  poly.domain "[N, K] -> { S0[j] : 0 <= j < N; S1[k, j] : 0 <= k < K and 0 <= j < N }" {
    poly.band "[N, K] -> [{ S0[j] -> [(0)]; S1[k, j] -> [(k)] }, { S0[j] -> [(j)]; S1[k, j] -> [(j)] }]" permutable coincident = [0, 1] {
      poly.sequence {
        poly.filter "[N, K] -> { S0[j] }"
        poly.filter "[N, K] -> { S1[k, j] }"
      }
    }
  }
}

// CHECK-LABEL: poly.scop @mixed
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[N, K] -> [{ S0[j] -> [(0)]; S1[k, j] -> [(floor((k)/32))] }, { S0[j] -> [(floor((j)/32))]; S1[k, j] -> [(floor((j)/32))] }]" permutable coincident = [0, 1] {
// CHECK-NEXT:        poly.band "[N, K] -> [{ S0[j] -> [(0)]; S1[k, j] -> [((k) mod 32)] }]" permutable coincident = [0] {
// CHECK-NEXT:          poly.sequence {
// CHECK-NEXT:            poly.filter "[N, K] -> { S0[j] }" {
// CHECK-NEXT:              poly.band "[N, K] -> [{ S0[j] -> [((j) mod 32)] }]" permutable coincident = [1]
// CHECK-NEXT:            }
// CHECK-NEXT:            poly.filter "[N, K] -> { S1[k, j] }" {
// CHECK-NEXT:              poly.band "[N, K] -> [{ S1[k, j] -> [((j) mod 32)] }]" permutable coincident = [1]
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
