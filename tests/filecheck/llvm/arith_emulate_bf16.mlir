// RUN: tcir-opt %s -p arith-emulate-bf16 | filecheck %s
// RUN: tcir-opt %s -p arith-emulate-bf16 | filecheck %s --check-prefix=NONE

// bf16 tensors become i16 bit patterns; a load widens to the f32 of the same
// value, arithmetic is f32, a store rounds to nearest even (a NaN to the
// quiet NaN 0x7FC0), an explicit truncf rounds where it is.
func.func @scale(%X: memref<8xbf16>, %Y: memref<8xbf16>, %F: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %X[%c0] : memref<8xbf16>
  %w = arith.extf %x : bf16 to f32
  %two = arith.constant 2.5 : bf16
  %p = arith.mulf %x, %two : bf16
  memref.store %p, %Y[%c0] : memref<8xbf16>
  %r = arith.truncf %w : f32 to bf16
  %e = arith.extf %r : bf16 to f32
  memref.store %e, %F[%c0] : memref<8xf32>
  func.return
}
// CHECK-LABEL: func.func @scale(%X: memref<8xi16>, %Y: memref<8xi16>, %F: memref<8xf32>) {
// CHECK:         %[[BITS:.*]] = memref.load %X[%c0] : memref<8xi16>
// CHECK-NEXT:    %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK-NEXT:    %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %[[SIXTEEN]] : i32
// CHECK-NEXT:    %[[X:.*]] = arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[X]], %[[TWO]] : f32
// CHECK:         %[[PB:.*]] = arith.bitcast %[[P]] : f32 to i32
// CHECK-NEXT:    %[[HIGH:.*]] = arith.shrui %[[PB]], %{{.*}} : i32
// CHECK-NEXT:    %[[ODD:.*]] = arith.andi %[[HIGH]], %{{.*}} : i32
// CHECK-NEXT:    %[[HALF:.*]] = arith.addi %[[ODD]], %{{.*}} : i32
// CHECK-NEXT:    %[[BIASED:.*]] = arith.addi %[[PB]], %[[HALF]] : i32
// CHECK-NEXT:    %[[ROUNDED:.*]] = arith.shrui %[[BIASED]], %{{.*}} : i32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[P]], %[[P]] : f32
// CHECK-NEXT:    %[[CHOSEN:.*]] = arith.select %[[NAN]], %{{.*}}, %[[ROUNDED]] : i32
// CHECK-NEXT:    %[[H:.*]] = arith.trunci %[[CHOSEN]] : i32 to i16
// CHECK-NEXT:    memref.store %[[H]], %Y[%c0] : memref<8xi16>
// CHECK:         arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[R:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    memref.store %[[R]], %F[%c0] : memref<8xf32>
// NONE-NOT:      bf16
