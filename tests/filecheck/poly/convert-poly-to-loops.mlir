// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=max},convert-poly-to-loops" | filecheck %s
// RUN: tcir-opt %s -p "tc-specialize{sizes=\"N=64,M=32,K=16\"},convert-tc-to-poly,poly-schedule{fusion=min},convert-poly-to-loops" | filecheck %s --check-prefix=STATIC

// Fused sgemm with symbolic sizes: the signature of convert-tc-to-loops, one
// loop nest over i, j holding both statements.
tc.def @sgemm(%a: f32, %b: f32, %A: !tc.tensor<f32, [N, M]>, %B: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f32, [N, K]>) {
  tc.comprehension %C[%i, %j] "=" (%i in [0, N), %j in [0, K)) {
    %0 = tc.read %C[%i, %j]
    %1 = arith.mulf %b, %0 : f32
    tc.yield %1 : f32
  }
  tc.comprehension %C[%i, %j] "+=" (%i in [0, N), %j in [0, K), %k in [0, M)) {
    %2 = tc.read %A[%i, %k]
    %3 = tc.read %B[%k, %j]
    %4 = arith.mulf %a, %2 : f32
    %5 = arith.mulf %4, %3 : f32
    tc.yield %5 : f32
  }
}

// CHECK-LABEL: func.func @sgemm(%a: f32, %b: f32, %A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %N: index, %M: index, %K: index) {
// CHECK:         scf.for %c0 = %{{.*}} to %N step %{{.*}} {
// CHECK:           scf.for %c1 = %{{.*}} to %K step %{{.*}} {
// CHECK-NEXT:        %{{.*}} = memref.load %C[%c0, %c1] : memref<?x?xf32>
// CHECK-NEXT:        %{{.*}} = arith.mulf %b, %{{.*}} : f32
// CHECK-NEXT:        memref.store %{{.*}}, %C[%c0, %c1] : memref<?x?xf32>
// CHECK:             scf.for %c2 = %{{.*}} to %M step %{{.*}} {
// CHECK-NEXT:          %{{.*}} = memref.load %A[%c0, %c2] : memref<?x?xf32>
// CHECK-NEXT:          %{{.*}} = memref.load %B[%c2, %c1] : memref<?x?xf32>
// CHECK:               memref.store %{{.*}}, %C[%c0, %c1] : memref<?x?xf32>
// CHECK:         func.return

// STATIC-LABEL: func.func @sgemm(%a: f32, %b: f32, %A: memref<64x32xf32>, %B: memref<32x16xf32>, %C: memref<64x16xf32>) {
// STATIC:         scf.for %c0 = %{{.*}} to %{{.*}} step
// STATIC:         scf.for %c0_{{[0-9]+}} = %{{.*}} to %{{.*}} step
// STATIC:           scf.for %c1_{{[0-9]+}} = %{{.*}} to %{{.*}} step
// STATIC:             scf.for %c2 = %{{.*}} to %{{.*}} step

// Temporaries are allocated and freed around the generated loops; a 0-d
// statement is a plain call.
tc.def @temps(%X: !tc.tensor<f32, [N]>) -> (%s: !tc.tensor<f32, []>) {
  %T = tc.alloc : !tc.tensor<f32, [N]>
  tc.comprehension %T[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    tc.yield %0 : f32
  }
  tc.comprehension %s[] "+=!" (%i in [0, N)) {
    %0 = tc.read %T[%i]
    tc.yield %0 : f32
  }
}

// CHECK-LABEL: func.func @temps(%X: memref<?xf32>, %s: memref<f32>, %N: index) {
// CHECK-NEXT:    %T = memref.alloc(%N) : memref<?xf32>
// CHECK:         memref.store %{{.*}}, %s[] : memref<f32>
// CHECK:         memref.dealloc %T : memref<?xf32>
// CHECK-NEXT:    func.return
