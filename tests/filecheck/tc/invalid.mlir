// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i, %i]
    tc.yield %0 : f32
  }
}
// CHECK: 'tc.read' op expected 1 subscripts for a rank-1 tensor, got 2

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i + Q]
    tc.yield %0 : f32
  }
}
// CHECK: 'tc.read' op subscript uses unknown size 'Q' (sizes of @f: M)

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %I[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
// CHECK: 'tc.comprehension' op cannot assign to input 'I': inputs are immutable

// -----

tc.def @f(%I: !tc.tensor<i32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : i32
  }
}
// CHECK: 'tc.comprehension' op yielded i32 but the left-hand side holds f32

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %I[%i]
    tc.yield %0 : f32
  }
}
// CHECK: 'tc.comprehension' op range uses unknown size 'N' (sizes of @f: M)

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: f32) {
}
// CHECK: 'tc.def' op output 'O' must be a !tc.tensor

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [K]>) {
}
// CHECK: 'tc.def' op type of 'O' uses unknown size 'K' (sizes: M)

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  %c = arith.constant 1.0 : f32
}
// CHECK: 'tc.def' op 'arith.constant' is not allowed in a tc.def body (expected tc.comprehension, tc.alloc or poly.scop)

// -----

tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    %1 = arith.addf %0, %0 : f32
  }
}
// CHECK: 'arith.addf' op Operation arith.addf terminates block in single-block region but is not a terminator

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "+-", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()
// CHECK: 'tc.comprehension' op unknown assignment kind '+-' (expected one of = += *= min= max= +=! *=! min=! max=!)

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0, 0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()
// CHECK: 'tc.comprehension' op expected a range for each of the 1 indices, got 2

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index) -> f64
    "tc.yield"(%0) : (f64) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()
// CHECK: 'tc.read' op result type f64 does not match the tensor's element type f32

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: i32):
    %0 = "tc.read"(%I, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, i32) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()
// CHECK: 'tc.comprehension' op comprehension indices must be of type index

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
}) : () -> ()
// CHECK: 'tc.def' op expected 2 argument names, got 1

// -----

"tc.def"() <{sym_name = "f", num_inputs = #builtin.int<1>, arg_names = ["I", "O"]}> ({
^bb0(%I: !tc.tensor<f32, [M]>, %O: !tc.tensor<f32, [M]>):
  "tc.comprehension"(%O) <{kind = "=", bounds = affine_map<()[s0] -> (0, s0)>, bound_symbols = ["M"]}> ({
  ^bb1(%i: index):
    %0 = "tc.read"(%I, %i, %i) <{map = affine_map<(d0) -> (d0)>, symbols = []}> : (!tc.tensor<f32, [M]>, index, index) -> f32
    "tc.yield"(%0) : (f32) -> ()
  }) : (!tc.tensor<f32, [M]>) -> ()
}) : () -> ()
// CHECK: 'tc.read' op subscripts use 1 values but 2 are given

// -----

%x = arith.constant 1 : index
%0 = "tc.read"(%x) <{map = affine_map<() -> ()>, symbols = []}> : (index) -> f32
// CHECK: 'tc.read' op operand 'tensor' at position 0 does not verify

// -----

tc.def @f(%T: !tc.tensor<f32, [E]>, %I: !tc.tensor<i32, [B]>, %X: !tc.tensor<f32, [B]>) -> (%O: !tc.tensor<f32, [E]>) {
  tc.comprehension %O[] "max=!" (%b in [0, B)) {
    %0 = tc.read %X[%b]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1] : f32
  }
}
// CHECK: 'tc.comprehension' op a scatter accumulates with '+=' or '+=!', not 'max=!'

// -----

tc.def @f(%T: !tc.tensor<f32, [E]>, %I: !tc.tensor<i32, [B]>, %X: !tc.tensor<f32, [B]>) -> (%O: !tc.tensor<f32, [E, E]>) {
  tc.comprehension %O[] "+=" (%b in [0, B)) {
    %0 = tc.read %X[%b]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1] : f32
  }
}
// CHECK: 'tc.comprehension' op a scatter into a rank-2 tensor yields 1 subscripts
