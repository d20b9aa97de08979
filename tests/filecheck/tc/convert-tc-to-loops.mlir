// RUN: tcir-opt %s --split-input-file -p 'tc-specialize{sizes="N=4,M=8,A=2,B=3"},convert-tc-to-loops' | filecheck %s
// RUN: tcir-opt %s --split-input-file -p convert-tc-to-loops | filecheck %s --check-prefix=SYM

// "=" stores the right-hand side, no initialization.
// CHECK-LABEL: func.func @copy(%X: memref<4xf32>, %Y: memref<4xf32>) {
// CHECK-NEXT:    %[[LO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %[[LO]] to %[[HI]] step %[[ONE]] {
// CHECK-NEXT:      %[[V:.*]] = memref.load %X[%i] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %Y[%i] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// Symbolic sizes become trailing index arguments and dynamic memrefs.
// SYM-LABEL: func.func @copy(%X: memref<?xf32>, %Y: memref<?xf32>, %N: index) {
// SYM:         scf.for %i = %{{.*}} to %N step
tc.def @copy(%X: !tc.tensor<f32, [N]>) -> (%Y: !tc.tensor<f32, [N]>) {
  tc.comprehension %Y[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    tc.yield %0 : f32
  }
}

// -----

// "+=!": fill with 0, then the reduction loop innermost.
// CHECK-LABEL: func.func @rowsum
// CHECK:         scf.for %i = {{.*}} {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[Z]], %S[%i] : memref<4xf32>
// CHECK:         scf.for %i_1 = {{.*}} {
// CHECK:           scf.for %j = {{.*}} {
// CHECK-NEXT:        %[[X:.*]] = memref.load %X[%i_1, %j] : memref<4x8xf32>
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %S[%i_1] : memref<4xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %S[%i_1] : memref<4xf32>
tc.def @rowsum(%X: !tc.tensor<f32, [N, M]>) -> (%S: !tc.tensor<f32, [N]>) {
  tc.comprehension %S[%i] "+=!" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f32
  }
}

// -----

// Identities and combiners of the other reductions.
// CHECK-LABEL: func.func @kinds
// CHECK:         arith.constant 1.000000e+00 : f64
// CHECK:         arith.mulf
// CHECK:         arith.constant 0x7ff0000000000000 : f64
// CHECK:         arith.minimumf
// CHECK:         arith.constant 0xfff0000000000000 : f64
// CHECK:         arith.maximumf
// CHECK:         arith.constant -2147483648 : i32
// CHECK:         arith.maxsi
// CHECK:         arith.constant -1 : i8
// CHECK:         arith.minui
// CHECK-NOT:     arith.constant 0 : i32
// CHECK:         arith.addi
tc.def @kinds(%X: !tc.tensor<f64, [N, M]>, %I: !tc.tensor<i32, [N, M]>, %U: !tc.tensor<ui8, [N, M]>) -> (%P: !tc.tensor<f64, [N]>, %L: !tc.tensor<f64, [N]>, %H: !tc.tensor<f64, [N]>, %IM: !tc.tensor<i32, [N]>, %UM: !tc.tensor<ui8, [N]>, %IS: !tc.tensor<i32, [N]>) {
  tc.comprehension %P[%i] "*=!" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f64
  }
  tc.comprehension %L[%i_1] "min=!" (%i_1 in [0, N), %j_1 in [0, M)) {
    %1 = tc.read %X[%i_1, %j_1]
    tc.yield %1 : f64
  }
  tc.comprehension %H[%i_2] "max=!" (%i_2 in [0, N), %j_2 in [0, M)) {
    %2 = tc.read %X[%i_2, %j_2]
    tc.yield %2 : f64
  }
  tc.comprehension %IM[%i_3] "max=!" (%i_3 in [0, N), %j_3 in [0, M)) {
    %3 = tc.read %I[%i_3, %j_3]
    tc.yield %3 : i32
  }
  tc.comprehension %UM[%i_4] "min=!" (%i_4 in [0, N), %j_4 in [0, M)) {
    %4 = tc.read %U[%i_4, %j_4]
    tc.yield %4 : i8
  }
  tc.comprehension %IS[%i_5] "+=" (%i_5 in [0, N), %j_5 in [0, M)) {
    %5 = tc.read %I[%i_5, %j_5]
    tc.yield %5 : i32
  }
}

// -----

// Indirection: the index tensor's value becomes a subscript.
// CHECK-LABEL: func.func @gather
// CHECK:         %[[IDX:.*]] = memref.load %I[%i, %j] : memref<2x3xi32>
// CHECK-NEXT:    %[[CAST:.*]] = arith.index_cast %[[IDX]] : i32 to index
// CHECK-NEXT:    %{{.*}} = memref.load %X[%[[CAST]]] : memref<4xf32>
tc.def @gather(%X: !tc.tensor<f32, [N]>, %I: !tc.tensor<i32, [A, B]>) -> (%Z: !tc.tensor<f32, [A, B]>) {
  tc.comprehension %Z[%i, %j] "=" (%i in [0, A), %j in [0, B)) {
    %0 = tc.read %I[%i, %j]
    %1 = tc.read %X[%0]
    tc.yield %1 : f32
  }
}

// -----

// Reading the written tensor other than pointwise: the right-hand side reads a copy.
// CHECK-LABEL: func.func @shift
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[COPY]][%{{.*}}] : memref<4xf32>
// CHECK:         scf.for %i_1
// CHECK:           memref.load %[[COPY]][%{{.*}}] : memref<4xf32>
// CHECK:           memref.store %{{.*}}, %Y[%i_1] : memref<4xf32>
// CHECK:         memref.dealloc %[[COPY]] : memref<4xf32>
tc.def @shift(%X: !tc.tensor<f32, [N]>) -> (%Y: !tc.tensor<f32, [N]>) {
  tc.comprehension %Y[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    tc.yield %0 : f32
  }
  tc.comprehension %Y[%i_1] "+=" (%i_1 in [0, N - 1), %k in [0, 1)) {
    %1 = tc.read %Y[%i_1 + 1]
    tc.yield %1 : f32
  }
}

// -----

// Temporaries are allocated and freed; 0-d tensors are rank-0 memrefs; scalars pass through.
// CHECK-LABEL: func.func @temp(%a: f32, %X: memref<4xf32>, %s: memref<f32>) {
// CHECK:         %T = memref.alloc() : memref<4xf32>
// CHECK:         arith.mulf %a, %{{.*}} : f32
// CHECK:         memref.store %{{.*}}, %s[] : memref<f32>
// CHECK:         memref.dealloc %T : memref<4xf32>
// SYM-LABEL: func.func @temp(%a: f32, %X: memref<?xf32>, %s: memref<f32>, %N: index) {
// SYM:         %T = memref.alloc(%N) : memref<?xf32>
tc.def @temp(%a: f32, %X: !tc.tensor<f32, [N]>) -> (%s: !tc.tensor<f32, []>) {
  %T = tc.alloc : !tc.tensor<f32, [N]>
  tc.comprehension %T[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    %1 = arith.mulf %a, %0 : f32
    tc.yield %1 : f32
  }
  tc.comprehension %s[] "+=!" (%k in [0, N)) {
    %2 = tc.read %T[%k]
    tc.yield %2 : f32
  }
}

// -----

// A stepped loop: one scf.for over the steps, and inside it each
// comprehension's nest over its other indices in order, its step index at
// its lower bound plus the step (A's initialization, its sum reading H a
// step before, then H).
// CHECK-LABEL: func.func @cell
// CHECK:         %[[LO:.*]] = arith.constant 1 : index
// CHECK:         %[[HI:.*]] = arith.constant 8 : index
// CHECK:         %[[STEPS:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:         scf.for %t = %{{.*}} to %[[STEPS]] step %{{.*}} {
// CHECK:           %[[T:.*]] = arith.addi %{{.*}}, %t : index
// CHECK:           scf.for %i = {{.*}} {
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %[[Z]], %A[%[[T]], %i] : memref<8x4xf32>
// CHECK-NEXT:      }
// CHECK:           scf.for %i_1 = {{.*}} {
// CHECK-NEXT:        %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:        scf.for %k = {{.*}} {
// CHECK-NEXT:          %[[M1:.*]] = arith.constant -1 : index
// CHECK-NEXT:          %[[PREV:.*]] = arith.addi %[[T]], %[[M1]] : index
// CHECK-NEXT:          %{{.*}} = memref.load %H[%[[PREV]], %k] : memref<8x4xf32>
// CHECK:             memref.store %{{.*}}, %A[%[[T]], %i_1] : memref<8x4xf32>
// CHECK:           %[[T2:.*]] = arith.addi %{{.*}}, %t : index
// CHECK:           scf.for %i_2 = {{.*}} {
// CHECK:             memref.store %{{.*}}, %H[%[[T2]], %i_2] : memref<8x4xf32>
// CHECK:         memref.dealloc %A
tc.def @cell(%X: !tc.tensor<f32, [M, N]>) -> (%H: !tc.tensor<f32, [M, N]>) {
  %A = tc.alloc : !tc.tensor<f32, [M, N]>
  tc.comprehension %A[%t, %i] "+=!" (%t in [1, M), %i in [0, N), %k in [0, N)) loop "t" along %t {
    %0 = tc.read %H[%t - 1, %k]
    tc.yield %0 : f32
  }
  tc.comprehension %H[%t, %i] "=" (%t in [1, M), %i in [0, N)) loop "t" along %t {
    %0 = tc.read %A[%t, %i]
    %1 = tc.read %X[%t, %i]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
}

// -----

// A scatter "+=!" first fills the whole tensor, then adds each point's value
// to the element its tc.yield names (here through an index tensor).
// CHECK-LABEL: func.func @embedding_grad
// CHECK:         scf.for %[[A0:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           scf.for %[[A1:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.store %{{.*}}, %gE[%[[A0]], %[[A1]]] : memref<4x8xf32>
// CHECK:         scf.for %b = {{.*}} {
// CHECK:           scf.for %d = {{.*}} {
// CHECK-NEXT:        %[[V:.*]] = memref.load %gO[%b, %d] : memref<3x8xf32>
// CHECK-NEXT:        %[[I:.*]] = memref.load %I[%b] : memref<3xi32>
// CHECK-NEXT:        %[[E:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %gE[%[[E]], %d] : memref<4x8xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %gE[%[[E]], %d] : memref<4x8xf32>
tc.def @embedding_grad(%LUT: !tc.tensor<f32, [N, M]>, %I: !tc.tensor<i32, [B]>, %gO: !tc.tensor<f32, [B, M]>) -> (%gE: !tc.tensor<f32, [N, M]>) {
  tc.comprehension %gE[] "+=!" (%b in [0, B), %d in [0, M)) {
    %0 = tc.read %gO[%b, %d]
    %1 = tc.read %I[%b]
    tc.yield %0 at [%1, %d] : f32
  }
}

// -----

// A scatter of a guarded sum `c ? v : 0` updates its element only where
// the guard holds: elsewhere it adds nothing, and the element may be out
// of bounds (2 * i + k - 1 at i = k = 0).
// CHECK-LABEL: func.func @guarded_scatter
// CHECK:         %[[C:.*]] = arith.andi
// CHECK-NEXT:    %[[V:.*]] = scf.if %[[C]] -> (f32) {
// CHECK:         scf.if %[[C]] {
// CHECK:           %[[OLD:.*]] = memref.load %gX[%{{.*}}] : memref<8xf32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:      memref.store %[[NEW]], %gX[%{{.*}}] : memref<8xf32>
tc.def @guarded_scatter(%gO: !tc.tensor<f32, [N]>, %X: !tc.tensor<f32, [M]>) -> (%gX: !tc.tensor<f32, [M]>) {
  tc.comprehension %gX[] "+=!" (%k in [0, 3), %i in [0, N)) where ["k in 0:3", "i in 0:N"] {
    %0 = arith.constant 2 : i32
    %1 = arith.index_cast %i : index to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.index_cast %k : index to i32
    %4 = arith.addi %2, %3 : i32
    %5 = arith.constant 1 : i32
    %6 = arith.cmpi sge, %4, %5 : i32
    %7 = arith.constant 2 : i32
    %8 = arith.index_cast %i : index to i32
    %9 = arith.muli %7, %8 : i32
    %10 = arith.index_cast %k : index to i32
    %11 = arith.addi %9, %10 : i32
    %12 = tc.size [M]
    %13 = arith.index_cast %12 : index to i32
    %14 = arith.cmpi sle, %11, %13 : i32
    %15 = arith.andi %6, %14 : i1
    %16 = scf.if %15 -> (f32) {
      %17 = tc.read %gO[%i]
      scf.yield %17 : f32
    } else {
      %18 = arith.constant 0.000000e+00 : f32
      scf.yield %18 : f32
    }
    tc.yield %16 at [%k + 2 * %i - 1] : f32
  }
}

// -----

// An affine scatter "+=" (no fill): the element is i + x.
// CHECK-LABEL: func.func @conv1d_grad
// CHECK-NOT:     arith.constant 0.000000e+00
// CHECK:         scf.for %i = {{.*}} {
// CHECK:           scf.for %x = {{.*}} {
// CHECK:             %[[S:.*]] = arith.addi %i, %x : index
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %gI[%[[S]]] : memref<8xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK-NEXT:        memref.store %[[NEW]], %gI[%[[S]]] : memref<8xf32>
tc.def @conv1d_grad(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>, %gO: !tc.tensor<f32, [M - N + 1]>) -> (%gI: !tc.tensor<f32, [M]>) {
  tc.comprehension %gI[] "+=" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %gO[%i]
    %1 = tc.read %K[%x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 at [%i + %x] : f32
  }
}
