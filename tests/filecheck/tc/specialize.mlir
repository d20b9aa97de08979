// RUN: tcir-opt %s --split-input-file -p 'tc-specialize{sizes="M=10,N=3,sh=2"}' | filecheck %s
// RUN: tcir-opt %s --split-input-file -p 'tc-specialize{sizes="M=10"}' | filecheck %s --check-prefix=PARTIAL
// RUN: not tcir-opt %s --split-input-file -p 'tc-specialize{sizes="M=ten"}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK-LABEL: tc.def @conv1d(%I: !tc.tensor<f32, [10]>, %K: !tc.tensor<f32, [3]>) -> (%O: !tc.tensor<f32, [8]>)
// CHECK:         tc.comprehension %O[%i] "+=!" (%i in [0, 8), %x in [0, 3))
// CHECK:           tc.read %I[%i + %x]
// PARTIAL-LABEL: tc.def @conv1d(%I: !tc.tensor<f32, [10]>, %K: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [-N + 11]>)
// PARTIAL:         (%i in [0, -N + 11), %x in [0, N))
// BAD: error: tc-specialize: expected NAME=INTEGER, got 'M=ten'
tc.def @conv1d(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [M - N + 1]>) {
  tc.comprehension %O[%i] "+=!" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %K[%x]
    %1 = tc.read %I[%i + %x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// -----

// Integer scalar sizes specialize strides; floordiv folds.
// CHECK-LABEL: tc.def @strided(%sh: i32, %I: !tc.tensor<f32, [10]>) -> (%O: !tc.tensor<f32, [5]>)
// CHECK:         (%h in [0, 5), %k in [0, 2))
// CHECK:           tc.read %I[2 * %h + %k]
// PARTIAL-LABEL: tc.def @strided(%sh: i32, %I: !tc.tensor<f32, [10]>) -> (%O: !tc.tensor<f32, [8 floordiv sh + 1]>)
// PARTIAL:           tc.read %I[sh * %h + %k]
tc.def @strided(%sh: i32, %I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [(M - 2) floordiv sh + 1]>) {
  tc.comprehension %O[%h] "max=!" (%h in [0, (M - 2) floordiv sh + 1), %k in [0, 2)) {
    %0 = tc.read %I[sh * %h + %k]
    tc.yield %0 : f32
  }
}

// -----

// Range bounds that are products and quotients of sizes (`j in 0:N*M/2`)
// become constants, so that convert-tc-to-poly gets affine sets.
// CHECK-LABEL: tc.def @flatten_half(%A: !tc.tensor<f32, [3, 10]>) -> (%O: !tc.tensor<f32, [15]>)
// CHECK:         tc.comprehension %O[%j] "=" (%j in [0, 15))
// PARTIAL-LABEL: tc.def @flatten_half(%A: !tc.tensor<f32, [N, 10]>) -> (%O: !tc.tensor<f32, [10 * N floordiv 2]>)
// PARTIAL:         tc.read %A[%j floordiv 10, %j mod 10]
tc.def @flatten_half(%A: !tc.tensor<f32, [N, M]>) -> (%O: !tc.tensor<f32, [N * M floordiv 2]>) {
  tc.comprehension %O[%j] "=" (%j in [0, N * M floordiv 2)) {
    %0 = tc.read %A[%j floordiv M, %j mod M]
    tc.yield %0 : f32
  }
}
