// RUN: tcir-opt %s -p convert-math-to-llvm | filecheck %s

func.func @float(%x: f32, %y: f32, %z: f32) -> f32 {
  %0 = math.absf %x : f32
  %1 = math.exp %0 : f32
  %2 = math.log %1 : f32
  %3 = math.sqrt %2 : f32
  %4 = math.powf %3, %y : f32
  %5 = math.copysign %4, %y : f32
  %6 = math.round %5 : f32
  %7 = math.trunc %6 : f32
  %8 = math.fma %7, %y, %z : f32
  %9 = math.rsqrt %8 : f32
  %10 = math.tanh %9 : f32
  func.return %10 : f32
}
// CHECK-LABEL: func.func @float
// CHECK-NEXT:    %[[V0:.*]] = llvm.intr.fabs(%x) : (f32) -> f32
// CHECK-NEXT:    %[[V1:.*]] = llvm.intr.exp(%[[V0]]) : (f32) -> f32
// CHECK-NEXT:    %[[V2:.*]] = llvm.intr.log(%[[V1]]) : (f32) -> f32
// CHECK-NEXT:    %[[V3:.*]] = llvm.intr.sqrt(%[[V2]]) : (f32) -> f32
// CHECK-NEXT:    %[[V4:.*]] = llvm.intr.pow(%[[V3]], %y) : (f32, f32) -> f32
// CHECK-NEXT:    %[[V5:.*]] = llvm.intr.copysign(%[[V4]], %y) : (f32, f32) -> f32
// CHECK-NEXT:    %[[V6:.*]] = llvm.call_intrinsic "llvm.round.f32"(%[[V5]]) : (f32) -> f32
// CHECK-NEXT:    %[[V7:.*]] = llvm.call_intrinsic "llvm.trunc.f32"(%[[V6]]) : (f32) -> f32
// CHECK-NEXT:    %[[V8:.*]] = llvm.intr.fma(%[[V7]], %y, %z) : (f32, f32, f32) -> f32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[SQRT:.*]] = llvm.intr.sqrt(%[[V8]]) : (f32) -> f32
// CHECK-NEXT:    %[[V9:.*]] = llvm.fdiv %[[ONE]], %[[SQRT]] : f32
// CHECK-NEXT:    %[[V10:.*]] = math.tanh %[[V9]] : f32
// CHECK-NEXT:    func.return %[[V10]] : f32

func.func @integer(%x: i32, %f: f64) -> (i32, f64) {
  %0 = math.absi %x : i32
  %1 = math.ctlz %0 : i32
  %2 = math.fpowi %f, %1 : f64, i32
  func.return %1, %2 : i32, f64
}
// CHECK-LABEL: func.func @integer
// CHECK-NEXT:    %[[FALSE:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:    %[[ABS:.*]] = llvm.call_intrinsic "llvm.abs.i32"(%x, %[[FALSE]]) : (i32, i1) -> i32
// CHECK-NEXT:    %[[FALSE2:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:    %[[CLZ:.*]] = llvm.call_intrinsic "llvm.ctlz.i32"(%[[ABS]], %[[FALSE2]]) : (i32, i1) -> i32
// CHECK-NEXT:    %[[EXP:.*]] = llvm.sitofp %[[CLZ]] : i32 to f64
// CHECK-NEXT:    %[[POW:.*]] = llvm.intr.pow(%f, %[[EXP]]) : (f64, f64) -> f64
// CHECK-NEXT:    func.return %[[CLZ]], %[[POW]] : i32, f64
