// RUN: tcir-opt %s -p finalize-memref-to-llvm | filecheck %s

// Loads and stores: row-major linear index, `getelementptr inbounds`.
func.func @load_store(%A: memref<4x8x16xf32>, %B: memref<f64>, %i: index, %j: index, %k: index) {
  %v = memref.load %A[%i, %j, %k] : memref<4x8x16xf32>
  memref.store %v, %A[%k, %j, %i] : memref<4x8x16xf32>
  %w = memref.load %B[] : memref<f64>
  memref.store %w, %B[] : memref<f64>
  func.return
}
// CHECK-LABEL: func.func @load_store
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %A : memref<4x8x16xf32> to !llvm.ptr
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-NEXT:    %[[J:.*]] = builtin.unrealized_conversion_cast %j : index to i64
// CHECK-NEXT:    %[[K:.*]] = builtin.unrealized_conversion_cast %k : index to i64
// CHECK-NEXT:    %[[C8:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[T0:.*]] = llvm.mul %[[I]], %[[C8]] : i64
// CHECK-NEXT:    %[[T1:.*]] = llvm.add %[[T0]], %[[J]] : i64
// CHECK-NEXT:    %[[C16:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[T2:.*]] = llvm.mul %[[T1]], %[[C16]] : i64
// CHECK-NEXT:    %[[T3:.*]] = llvm.add %[[T2]], %[[K]] : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[T3]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %v = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK:         %[[Q:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %v, %[[Q]] : f32, !llvm.ptr
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %B : memref<f64> to !llvm.ptr
// CHECK-NEXT:    %w = llvm.load %[[B]] : !llvm.ptr -> f64
// CHECK-NEXT:    %[[B2:.*]] = builtin.unrealized_conversion_cast %B : memref<f64> to !llvm.ptr
// CHECK-NEXT:    llvm.store %w, %[[B2]] : f64, !llvm.ptr

// Temporaries: malloc/free for alloc, llvm.alloca for alloca.
func.func @temporaries() {
  %t = memref.alloc() : memref<3x5xf64>
  memref.dealloc %t : memref<3x5xf64>
  %s = memref.alloca() : memref<7xi32>
  func.return
}
// CHECK:       llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-NEXT:  llvm.func @free(!llvm.ptr)
// CHECK-LABEL: func.func @temporaries
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(120) : i64
// CHECK-NEXT:    %[[M:.*]] = llvm.call @malloc(%[[SIZE]]) : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[T:.*]] = builtin.unrealized_conversion_cast %[[M]] : !llvm.ptr to memref<3x5xf64>
// CHECK-NEXT:    %[[F:.*]] = builtin.unrealized_conversion_cast %[[T]] : memref<3x5xf64> to !llvm.ptr
// CHECK-NEXT:    llvm.call @free(%[[F]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.mlir.constant(7) : i64
// CHECK-NEXT:    %{{.*}} = llvm.alloca %[[COUNT]] x i32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
