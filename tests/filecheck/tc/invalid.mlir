// RUN: tcir-opt %s --split-input-file --verify-diagnostics

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    // expected-error@+1 {{'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2}}
    %0 = tc.read %I[%i, %i]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    // expected-error@+1 {{'tc.read' op subscript uses unknown size 'Q' (sizes of @f: M)}}
    %0 = tc.read %I[%i + Q]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error@+1 {{'tc.comprehension' op cannot assign to input 'I': inputs are immutable}}
  tc.comprehension %I[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%I: !tc.tensor<i32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error@+1 {{'tc.comprehension' op yielded i32 but the left-hand side holds f32}}
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : i32
  }
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  // expected-error@+1 {{'tc.comprehension' op range uses unknown size 'N' (sizes of @f: M)}}
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}

// -----

// expected-error@+1 {{'tc.def' op output 'O' must be a !tc.tensor}}
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: f32) {
}

// -----

// expected-error@+1 {{'tc.def' op type of 'O' uses unknown size 'K' (sizes: M)}}
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [K]>) {
}

// -----

// expected-error@+1 {{'tc.def' op 'arith.constant' is not allowed in a tc.def body (expected tc.comprehension, tc.alloc or poly.scop)}}
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  %c = arith.constant 1.0 : f32
}

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    // expected-error@+1 {{'arith.addf' op Operation arith.addf terminates block in single-block region but is not a terminator}}
    %1 = arith.addf %0, %0 : f32
  }
}

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  // expected-error@+1 {{'tc.comprehension' op unknown assignment kind '+-' (expected one of = += *= min= max= +=! *=! min=! max=!)}}
  "tc.comprehension"(%O) <{kind = "+-", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  // expected-error@+1 {{'tc.comprehension' op expected a range for each of the 1 indices, got 2}}
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0, 0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    // expected-error@+1 {{'tc.read' op result type f64 does not match the tensor's element type f32}}
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f64
    "tc.yield"(%0) : (f64) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  // expected-error@+1 {{'tc.comprehension' op comprehension indices must be of type index}}
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: i32):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, i32) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()

// -----

// expected-error@+1 {{'tc.def' op expected 2 argument names, got 1}}
"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
}) : () -> ()

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    // expected-error@+1 {{'tc.read' op subscripts use 1 values but 2 are given}}
    %0 = "tc.read"(%I, %i, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()

// -----

%x = arith.constant 1 : index
// expected-error@+1 {{'tc.read' op operand 'tensor' at position 0 does not verify:}}
%0 = "tc.read"(%x) <{map = affine_map<() -> ()>, symbols = []}> : (index) -> f32

// -----

tc.def @f(%X: !tc.tensor<f32, [T, N]>) -> (%C: !tc.tensor<f32, [T, N]>) {
  // expected-error@+1 {{'tc.comprehension' op a comprehension of a loop reads the tensor it writes at the point it writes or at an earlier step only}}
  tc.comprehension %C[%t, %i] "=" (%t in [0, T), %i in [0, N)) loop "t" along %t {
    %0 = tc.read %C[%t, %i + 1]
    tc.yield %0 : f32
  }
}

// -----

// expected-error@+1 {{'tc.def' op the comprehensions of loop 't' must be consecutive}}
tc.def @f(%X: !tc.tensor<f32, [T]>) -> (%C: !tc.tensor<f32, [T]>, %D: !tc.tensor<f32, [T]>) {
  tc.comprehension %C[%t] "=" (%t in [0, T)) loop "t" along %t {
    %0 = tc.read %X[%t]
    tc.yield %0 : f32
  }
  tc.comprehension %D[%t] "=" (%t in [0, T)) {
    %0 = tc.read %C[%t]
    tc.yield %0 : f32
  }
  tc.comprehension %C[%t] "=" (%t in [0, T)) loop "t" along %t {
    %0 = tc.read %D[%t]
    tc.yield %0 : f32
  }
}

// -----

tc.def @f(%T: !tc.tensor<f32, [E]>, %I: !tc.tensor<i32, [B]>, %X: !tc.tensor<f32, [B]>) -> (%O: !tc.tensor<f32, [E]>) {
  // expected-error@+1 {{'tc.comprehension' op a scatter accumulates with '+=' or '+=!', not 'max=!'}}
  tc.comprehension %O[] "max=!" (%b in [0, B)) {
    %0 = tc.read %X[%b]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1] : f32
  }
}

// -----

tc.def @f(%T: !tc.tensor<f32, [E]>, %I: !tc.tensor<i32, [B]>, %X: !tc.tensor<f32, [B]>) -> (%O: !tc.tensor<f32, [E, E]>) {
  // expected-error@+1 {{'tc.comprehension' op a scatter into a rank-2 tensor yields 1 subscripts}}
  tc.comprehension %O[] "+=" (%b in [0, B)) {
    %0 = tc.read %X[%b]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1] : f32
  }
}
