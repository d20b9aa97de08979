// RUN: tcir-opt %s -p convert-func-to-llvm | filecheck %s

// Memref arguments become bare `noalias` pointers, index becomes i64.
func.func @kernel(%A: memref<4x8xf32>, %s: f32, %n: index, %B: memref<f64>) {
  %v = memref.load %A[%n, %n] : memref<4x8xf32>
  memref.store %v, %A[%n, %n] : memref<4x8xf32>
  func.return
}
// CHECK-LABEL: llvm.func @kernel(%A: !llvm.ptr {llvm.noalias}, %s: f32, %n: i64, %B: !llvm.ptr {llvm.noalias}) {
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %A : !llvm.ptr to memref<4x8xf32>
// CHECK-NEXT:    %[[N:.*]] = builtin.unrealized_conversion_cast %n : i64 to index
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %B : !llvm.ptr to memref<f64>
// CHECK-NEXT:    %v = memref.load %[[A]][%[[N]], %[[N]]] : memref<4x8xf32>
// CHECK-NEXT:    memref.store %v, %[[A]][%[[N]], %[[N]]] : memref<4x8xf32>
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }

// Declarations and calls (as emitted by convert-math-to-libm).
func.func private @tanhf(f32) -> f32
func.func private @helper(%x: f32) -> f32 {
  %y = func.call @tanhf(%x) : (f32) -> f32
  func.return %y : f32
}
// CHECK-LABEL: llvm.func @tanhf(f32) -> f32
// CHECK-LABEL: llvm.func internal @helper(%x: f32) -> f32 {
// CHECK-NEXT:    %y = llvm.call @tanhf(%x) : (f32) -> f32
// CHECK-NEXT:    llvm.return %y : f32
