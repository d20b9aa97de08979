// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

poly.domain "{ S0[i] : 0 <= i < }"

// CHECK: 'poly.domain' op domain "{ S0[i] : 0 <= i < }" is not a valid isl union set

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.band "[{ S0[i] -> [(i + )] }]" coincident = [1]
}

// CHECK: 'poly.band' op schedule "[{ S0[i] -> [(i + )] }]" is not a valid isl multi union pw aff

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.band "[{ S0[i] -> [(i)] }]" coincident = [1] options "{ unroll[ }"
}

// CHECK: 'poly.band' op options "{ unroll[ }" is not a valid isl union set

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.context "{ S0[i]; S1[j] }"
}

// CHECK: 'poly.context' op context "{ S0[i]; S1[j] }" is not a valid isl set

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.extension "{ [t] -> }"
}

// CHECK: 'poly.extension' op extension "{ [t] -> }" is not a valid isl union map

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.band "[{ S0[i] -> [(i)] }]" coincident = [1, 0]
}

// CHECK: 'poly.band' op expected 1 coincident flags, got 2

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.sequence {
    poly.band "[{ S0[i] -> [(i)] }]" coincident = [1]
  }
}

// CHECK: 'poly.sequence' op child 'poly.band' is not a poly.filter

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.set {
  }
}

// CHECK: 'poly.set' op expected at least one poly.filter child

// -----

poly.domain "{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }" {
  poly.filter "{ S0[i] }"
  poly.filter "{ S1[i] }"
}

// CHECK: 'poly.domain' op expected at most one child node, got 2

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.filter "{ S0[i] }" {
    %0 = arith.constant 0 : index
  }
}

// CHECK: 'poly.filter' op child 'arith.constant' is not a schedule tree node

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.domain' op must be the root of a schedule tree

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  poly.mark ""
}

// CHECK: 'poly.mark' op mark id must not be empty

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i, j] : 0 <= i < 8 and 0 <= j < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i, j] : 0 <= i < 8 and 0 <= j < 8 }"
}

// CHECK: 'poly.stmt' op body must have 2 block arguments (one per domain dimension), got 1

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: i32):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.stmt' op body block argument #0 must be of type index, got i32

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S1[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S1[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.stmt' op domain tuple 'S1' does not match statement name 'S0'

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ S1[i] -> A[i] }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.stmt' op reads relation from 'S1' does not start in the 1-d domain of 'S0'

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ S0[i] -> A[i }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.stmt' op writes "{ S0[i] -> A[i }" is not a valid isl union map

// -----

poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// CHECK: 'poly.scop' op has two statements named @S0

// -----

poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
^bb0(%i: index):
}

// CHECK: 'poly.stmt' expects parent op 'poly.scop'

// -----

poly.scop @s params [N, M] context "[M, N] -> { : }" {
  poly.domain "{ : }"
}

// CHECK: 'poly.scop' op params [N, M] differ from the context parameters [M, N]

// -----

poly.scop @s params [] context "{ : }" {
}

// CHECK: 'poly.scop' op expected exactly one poly.domain schedule, got 0

// -----

poly.scop @s params [] context "{ : }" {
  %0 = arith.constant 0 : index
  poly.domain "{ : }"
}

// CHECK: 'poly.scop' op body may only hold poly.stmt and poly.domain, got 'arith.constant'

// -----

poly.scop @f params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[t] : 0 <= t < 4 }" reads "{ }" writes "{ S0[t] -> C[t] }" loop "t" dim 1 {
  ^bb0(%t: index):
  }
  poly.domain "{ S0[t] : 0 <= t < 4 }"
}

// CHECK: 'poly.stmt' op loop dimension 1 is not one of the 1 of 'S0'
