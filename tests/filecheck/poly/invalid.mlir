// RUN: tcir-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{'poly.domain' op domain "{ S0[i] : 0 <= i < }" is not a valid isl union set}}
poly.domain "{ S0[i] : 0 <= i < }"

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.band' op schedule "[{ S0[i] -> [(i + )] }]" is not a valid isl multi union pw aff}}
  poly.band "[{ S0[i] -> [(i + )] }]" coincident = [1]
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.band' op options "{ unroll[ }" is not a valid isl union set}}
  poly.band "[{ S0[i] -> [(i)] }]" coincident = [1] options "{ unroll[ }"
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.context' op context "{ S0[i]; S1[j] }" is not a valid isl set}}
  poly.context "{ S0[i]; S1[j] }"
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.extension' op extension "{ [t] -> }" is not a valid isl union map}}
  poly.extension "{ [t] -> }"
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.band' op expected 1 coincident flags, got 2}}
  poly.band "[{ S0[i] -> [(i)] }]" coincident = [1, 0]
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.sequence' op child 'poly.band' is not a poly.filter}}
  poly.sequence {
    poly.band "[{ S0[i] -> [(i)] }]" coincident = [1]
  }
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.set' op expected at least one poly.filter child}}
  poly.set {
  }
}

// -----

// expected-error@+1 {{'poly.domain' op expected at most one child node, got 2}}
poly.domain "{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }" {
  poly.filter "{ S0[i] }"
  poly.filter "{ S1[i] }"
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.filter' op child 'arith.constant' is not a schedule tree node}}
  poly.filter "{ S0[i] }" {
    %0 = arith.constant 0 : index
  }
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.domain' op must be the root of a schedule tree}}
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// -----

poly.domain "{ S0[i] : 0 <= i < 8 }" {
  // expected-error@+1 {{'poly.mark' op mark id must not be empty}}
  poly.mark ""
}

// -----

poly.scop @s params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op body must have 2 block arguments (one per domain dimension), got 1}}
  poly.stmt @S0 domain "{ S0[i, j] : 0 <= i < 8 and 0 <= j < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i, j] : 0 <= i < 8 and 0 <= j < 8 }"
}

// -----

poly.scop @s params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op body block argument #0 must be of type index, got i32}}
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: i32):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// -----

poly.scop @s params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op domain tuple 'S1' does not match statement name 'S0'}}
  poly.stmt @S0 domain "{ S1[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S1[i] : 0 <= i < 8 }"
}

// -----

poly.scop @s params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op reads relation from 'S1' does not start in the 1-d domain of 'S0'}}
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ S1[i] -> A[i] }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// -----

poly.scop @s params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op writes "{ S0[i] -> A[i }" is not a valid isl union map}}
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ S0[i] -> A[i }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// -----

// expected-error@+1 {{'poly.scop' op has two statements named @S0}}
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i < 8 }"
}

// -----

// expected-error@+1 {{'poly.stmt' expects parent op 'poly.scop'}}
poly.stmt @S0 domain "{ S0[i] : 0 <= i < 8 }" reads "{ }" writes "{ }" {
^bb0(%i: index):
}

// -----

// expected-error@+1 {{'poly.scop' op params [N, M] differ from the context parameters [M, N]}}
poly.scop @s params [N, M] context "[M, N] -> { : }" {
  poly.domain "{ }"
}

// -----

// expected-error@+1 {{'poly.scop' op expected exactly one poly.domain schedule, got 0}}
poly.scop @s params [] context "{ : }" {
}

// -----

// expected-error@+1 {{'poly.scop' op body may only hold poly.stmt and poly.domain, got 'arith.constant'}}
poly.scop @s params [] context "{ : }" {
  %0 = arith.constant 0 : index
  poly.domain "{ }"
}


// -----

// The schedule covers exactly the statements' instances: no more (a loop to
// 99 over a statement of 4 iterations) ...
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  // expected-error@+1 {{'poly.domain' op domain "{ S0[i] : 0 <= i <= 99 }" differs from the union of the statements' domains "{ S0[i] : 0 <= i <= 3 }"}}
  poly.domain "{ S0[i] : 0 <= i <= 99 }"
}

// -----

// ... and no less (a statement left out of the schedule).
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.stmt @S1 domain "{ S1[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  // expected-error-re@+1 {{'poly.domain' op domain "{ S0[i] : 0 <= i <= 3 }" differs from the union of the statements' domains "{ {{S0.*S1|S1.*S0}}[i] : 0 <= i <= 3 }"}}
  poly.domain "{ S0[i] : 0 <= i <= 3 }"
}

// -----

// A filter names statements of the domain.
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i <= 3 }" {
    // expected-error@+1 {{'poly.filter' op filter "{ S9[i] }" names S9, which the schedule's domain (and the extensions above) does not hold}}
    poly.filter "{ S9[i] }"
  }
}

// -----

// The filters of a sequence cover what reaches it: S1 would disappear.
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.stmt @S1 domain "{ S1[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i <= 3; S1[i] : 0 <= i <= 3 }" {
    // expected-error@+1 {{'poly.sequence' op children's filters drop statement instances that reach it: { S1[i] : 2 <= i <= 3 }}}
    poly.sequence {
      poly.filter "{ S0[i] }"
      poly.filter "{ S1[i] : i < 2 }"
    }
  }
}

// -----

// Instances that another block or thread runs are not dropped: a mapping
// filter's parameters are projected out.
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  poly.domain "{ S0[i] : 0 <= i <= 3 }" {
    poly.context "[thread_x] -> { : 0 <= thread_x <= 1 }" {
      poly.set {
        poly.filter "[thread_x] -> { S0[i] : i mod 2 = thread_x }"
      }
    }
  }
}

// -----

poly.scop @f params [] context "{ : }" {
  // expected-error@+1 {{'poly.stmt' op loop dimension 1 is not one of the 1 of 'S0'}}
  poly.stmt @S0 domain "{ S0[t] : 0 <= t < 4 }" reads "{ }" writes "{ S0[t] -> C[t] }" loop "t" dim 1 {
  ^bb0(%t: index):
  }
  poly.domain "{ S0[t] : 0 <= t < 4 }"
}
