// RUN: tcir-opt %s | filecheck %s
// RUN: tcir-opt %s --print-op-generic | tcir-opt | filecheck %s

// The paper's canonical sgemm: one statement per comprehension, a sequence of
// two filters, each with an identity band.
poly.scop @sgemm params [N, M, K] context "[N, M, K] -> { : N > 0 and M > 0 and K > 0 }" {
  poly.stmt @S0 domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K }" reads "[N, M, K] -> {  }" writes "[N, M, K] -> { S0[i, j] -> C[i, j] }" {
  ^bb0(%i: index, %j: index):
    %zero = arith.constant 0.000000e+00 : f32
  }
  poly.stmt @S1 domain "[N, M, K] -> { S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "[N, M, K] -> { S1[i, j, k] -> C[i, j]; S1[i, j, k] -> A[i, k]; S1[i, j, k] -> B[k, j] }" writes "[N, M, K] -> { S1[i, j, k] -> C[i, j] }" {
  ^bb0(%i: index, %j: index, %k: index):
  }
  poly.domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K; S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
    poly.sequence {
      poly.filter "[N, M, K] -> { S0[i, j] }" {
        poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
      }
      poly.filter "[N, M, K] -> { S1[i, j, k] }" {
        poly.band "[N, M, K] -> [{ S1[i, j, k] -> [(i)] }, { S1[i, j, k] -> [(j)] }, { S1[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]
      }
    }
  }
}

// CHECK-LABEL: poly.scop @sgemm params [N, M, K] context "[N, M, K] -> { : N > 0 and M > 0 and K > 0 }" {
// CHECK-NEXT:    poly.stmt @S0 domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K }" reads "[N, M, K] -> {  }" writes "[N, M, K] -> { S0[i, j] -> C[i, j] }" {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.stmt @S1 domain "[N, M, K] -> { S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "[N, M, K] -> { S1[i, j, k] -> C[i, j]; S1[i, j, k] -> A[i, k]; S1[i, j, k] -> B[k, j] }" writes "[N, M, K] -> { S1[i, j, k] -> C[i, j] }" {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K; S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
// CHECK-NEXT:      poly.sequence {
// CHECK-NEXT:        poly.filter "[N, M, K] -> { S0[i, j] }" {
// CHECK-NEXT:          poly.band "[N, M, K] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable coincident = [1, 1]
// CHECK-NEXT:        }
// CHECK-NEXT:        poly.filter "[N, M, K] -> { S1[i, j, k] }" {
// CHECK-NEXT:          poly.band "[N, M, K] -> [{ S1[i, j, k] -> [(i)] }, { S1[i, j, k] -> [(j)] }, { S1[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// The fused sgemm tree: an outer band over both statements, then a sequence
// whose first filter ends in a leaf.
poly.scop @sgemm_fused params [N, M, K] context "[N, M, K] -> { : }" {
  poly.stmt @S0 domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K }" reads "{ }" writes "{ S0[i, j] -> C[i, j] }" {
  ^bb0(%i: index, %j: index):
  }
  poly.stmt @S1 domain "[N, M, K] -> { S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "{ S1[i, j, k] -> C[i, j] }" writes "{ S1[i, j, k] -> C[i, j] }" {
  ^bb0(%i: index, %j: index, %k: index):
  }
  poly.domain "[N, M, K] -> { S0[i, j] : 0 <= i < N and 0 <= j < K; S1[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
    poly.band "[{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
      poly.sequence {
        poly.filter "{ S0[i, j] }"
        poly.filter "{ S1[i, j, k] }" {
          poly.band "[{ S1[i, j, k] -> [(k)] }]" coincident = [0]
        }
      }
    }
  }
}

// CHECK-LABEL: poly.scop @sgemm_fused params [N, M, K] context "[N, M, K] -> { : }" {
// CHECK:         poly.domain
// CHECK-NEXT:      poly.band "[{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }]" permutable coincident = [1, 1] {
// CHECK-NEXT:        poly.sequence {
// CHECK-NEXT:          poly.filter "{ S0[i, j] }"
// CHECK-NEXT:          poly.filter "{ S1[i, j, k] }" {
// CHECK-NEXT:            poly.band "[{ S1[i, j, k] -> [(k)] }]" coincident = [0]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// Band AST build options (member-wise loop types), extra attributes, a
// may-write statement and a scop without parameters.
poly.scop @options params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i, j] : 0 <= i < 64 and 0 <= j < 8 }" reads "{ S0[i, j] -> A[i, j] }" may_writes "{ S0[i, j] -> B[i] }" attributes {origin = "O(i) +=! A(i, j)"} {
  ^bb0(%i: index, %j: index):
  }
  poly.domain "{ S0[i, j] : 0 <= i < 64 and 0 <= j < 8 }" {
    poly.band "[{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" coincident = [1, 0] options "{ unroll[1]; separate[0] }" attributes {note = 1 : i64}
  }
}

// CHECK-LABEL: poly.scop @options params [] context "{ : }" {
// CHECK-NEXT:    poly.stmt @S0 domain "{ S0[i, j] : 0 <= i < 64 and 0 <= j < 8 }" reads "{ S0[i, j] -> A[i, j] }" may_writes "{ S0[i, j] -> B[i] }" attributes {origin = "O(i) +=! A(i, j)"} {
// CHECK:         poly.domain "{ S0[i, j] : 0 <= i < 64 and 0 <= j < 8 }" {
// CHECK-NEXT:      poly.band "[{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" coincident = [1, 0] options "{ unroll[1]; separate[0] }" attributes {note = 1 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// Mark, context and set nodes, as used when mapping to a GPU.
poly.scop @mapped params [N] context "[N] -> { : N >= 0 }" {
  poly.stmt @S0 domain "[N] -> { S0[i] : 0 <= i < N }" reads "{ }" writes "{ S0[i] -> O[i] }" {
  ^bb0(%i: index):
  }
  poly.stmt @S1 domain "[N] -> { S1[i] : 0 <= i < N }" reads "{ }" writes "{ S1[i] -> P[i] }" {
  ^bb0(%i: index):
  }
  poly.domain "[N] -> { S0[i] : 0 <= i < N; S1[i] : 0 <= i < N }" {
    poly.context "[N, b0, t0] -> { : 0 <= b0 < 32 and 0 <= t0 < 16 }" {
      poly.mark "kernel" {
        poly.set {
          poly.filter "{ S0[i] }" {
            poly.band "[{ S0[i] -> [(i)] }]" permutable coincident = [1]
          }
          poly.filter "{ S1[i] }"
        }
      }
    }
  }
}

// CHECK-LABEL: poly.scop @mapped params [N] context "[N] -> { : N >= 0 }" {
// CHECK:         poly.domain "[N] -> { S0[i] : 0 <= i < N; S1[i] : 0 <= i < N }" {
// CHECK-NEXT:      poly.context "[N, b0, t0] -> { : 0 <= b0 < 32 and 0 <= t0 < 16 }" {
// CHECK-NEXT:        poly.mark "kernel" {
// CHECK-NEXT:          poly.set {
// CHECK-NEXT:            poly.filter "{ S0[i] }" {
// CHECK-NEXT:              poly.band "[{ S0[i] -> [(i)] }]" permutable coincident = [1]
// CHECK-NEXT:            }
// CHECK-NEXT:            poly.filter "{ S1[i] }"
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// An extension node adding copy statements (as memory promotion does).
poly.scop @extension params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 128 }" reads "{ S0[i] -> A[i] }" writes "{ S0[i] -> O[i] }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 128 }" {
    poly.band "[{ S0[i] -> [(floor((i)/32))] }]" permutable coincident = [1] {
      poly.extension "{ [t] -> CopyA[t, j] : 0 <= j < 32 }" {
        poly.sequence {
          poly.filter "{ CopyA[t, j] }"
          poly.filter "{ S0[i] }"
        }
      }
    }
  }
}

// CHECK-LABEL: poly.scop @extension params [] context "{ : }" {
// CHECK:           poly.band "[{ S0[i] -> [(floor((i)/32))] }]" permutable coincident = [1] {
// CHECK-NEXT:        poly.extension "{ [t] -> CopyA[t, j] : 0 <= j < 32 }" {
// CHECK-NEXT:          poly.sequence {
// CHECK-NEXT:            poly.filter "{ CopyA[t, j] }"
// CHECK-NEXT:            poly.filter "{ S0[i] }"
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }

// A schedule tree on its own, reduced to its root and an implicit leaf.
poly.domain "{ S0[i] : 0 <= i < 4 }"

// CHECK-LABEL: poly.domain "{ S0[i] : 0 <= i < 4 }"{{$}}

// A 0-d statement (a scalar output) has a body without block arguments.
poly.scop @scalar params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[] }" reads "{ }" writes "{ S0[] -> O[] }" {
  }
  poly.domain "{ S0[] }"
}

// CHECK-LABEL: poly.scop @scalar params [] context "{ : }" {
// CHECK-NEXT:    poly.stmt @S0 domain "{ S0[] }" reads "{ }" writes "{ S0[] -> O[] }" {
// CHECK-NEXT:    }
// CHECK-NEXT:    poly.domain "{ S0[] }"
// CHECK-NEXT:  }

// Extra (discardable) attributes on any node, e.g. for later passes.
poly.domain "{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }" {
  poly.sequence attributes {fusion = "min"} {
    poly.filter "{ S0[i] }" attributes {tag}
    poly.filter "{ S1[i] }"
  }
}

// CHECK-LABEL: poly.domain "{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }" {
// CHECK-NEXT:    poly.sequence attributes {fusion = "min"} {
// CHECK-NEXT:      poly.filter "{ S0[i] }" attributes {tag}
// CHECK-NEXT:      poly.filter "{ S1[i] }"
// CHECK-NEXT:    }
// CHECK-NEXT:  }
