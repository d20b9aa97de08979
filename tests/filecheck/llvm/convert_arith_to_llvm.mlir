// RUN: tcir-opt %s -p convert-arith-to-llvm | filecheck %s

func.func @constants() -> (index, f32) {
  %i = arith.constant 42 : index
  %f = arith.constant 1.5 : f32
  func.return %i, %f : index, f32
}
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %[[I:.*]] = llvm.mlir.constant(42) : i64
// CHECK-NEXT:    %[[IDX:.*]] = builtin.unrealized_conversion_cast %[[I]] : i64 to index
// CHECK-NEXT:    %[[F:.*]] = llvm.mlir.constant(1.500000e+00 : f32) : f32
// CHECK-NEXT:    func.return %[[IDX]], %[[F]] : index, f32

func.func @integer(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.subi %0, %b : i32
  %2 = arith.muli %1, %b : i32
  %3 = arith.divsi %2, %b : i32
  %4 = arith.divui %3, %b : i32
  %5 = arith.remsi %4, %b : i32
  %6 = arith.remui %5, %b : i32
  %7 = arith.andi %6, %b : i32
  %8 = arith.ori %7, %b : i32
  %9 = arith.xori %8, %b : i32
  %10 = arith.shli %9, %b : i32
  %11 = arith.shrsi %10, %b : i32
  %12 = arith.shrui %11, %b : i32
  %13 = arith.minsi %12, %b : i32
  %14 = arith.maxui %13, %b : i32
  func.return %14 : i32
}
// CHECK-LABEL: func.func @integer
// CHECK-NEXT:    %[[V0:.*]] = llvm.add %a, %b : i32
// CHECK-NEXT:    %[[V1:.*]] = llvm.sub %[[V0]], %b : i32
// CHECK-NEXT:    %[[V2:.*]] = llvm.mul %[[V1]], %b : i32
// CHECK-NEXT:    %[[V3:.*]] = llvm.sdiv %[[V2]], %b : i32
// CHECK-NEXT:    %[[V4:.*]] = llvm.udiv %[[V3]], %b : i32
// CHECK-NEXT:    %[[V5:.*]] = llvm.srem %[[V4]], %b : i32
// CHECK-NEXT:    %[[V6:.*]] = llvm.urem %[[V5]], %b : i32
// CHECK-NEXT:    %[[V7:.*]] = llvm.and %[[V6]], %b : i32
// CHECK-NEXT:    %[[V8:.*]] = llvm.or %[[V7]], %b : i32
// CHECK-NEXT:    %[[V9:.*]] = llvm.xor %[[V8]], %b : i32
// CHECK-NEXT:    %[[V10:.*]] = llvm.shl %[[V9]], %b : i32
// CHECK-NEXT:    %[[V11:.*]] = llvm.ashr %[[V10]], %b : i32
// CHECK-NEXT:    %[[V12:.*]] = llvm.lshr %[[V11]], %b : i32
// CHECK-NEXT:    %[[V13:.*]] = llvm.call_intrinsic "llvm.smin.i32"(%[[V12]], %b) : (i32, i32) -> i32
// CHECK-NEXT:    %[[V14:.*]] = llvm.call_intrinsic "llvm.umax.i32"(%[[V13]], %b) : (i32, i32) -> i32
// CHECK-NEXT:    func.return %[[V14]] : i32

func.func @index(%a: index, %b: index) -> i1 {
  %0 = arith.addi %a, %b : index
  %1 = arith.cmpi ult, %0, %b : index
  func.return %1 : i1
}
// CHECK-LABEL: func.func @index
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : index to i64
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %b : index to i64
// CHECK-NEXT:    %[[SUM:.*]] = llvm.add %[[A]], %[[B]] : i64
// CHECK-NEXT:    %[[SUMI:.*]] = builtin.unrealized_conversion_cast %[[SUM]] : i64 to index
// CHECK-NEXT:    %[[SUM2:.*]] = builtin.unrealized_conversion_cast %[[SUMI]] : index to i64
// CHECK-NEXT:    %[[B2:.*]] = builtin.unrealized_conversion_cast %b : index to i64
// CHECK-NEXT:    %{{.*}} = llvm.icmp "ult" %[[SUM2]], %[[B2]] : i64

func.func @float(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b fastmath<fast> : f32
  %1 = arith.subf %0, %b : f32
  %2 = arith.mulf %1, %b : f32
  %3 = arith.divf %2, %b : f32
  %4 = arith.negf %3 : f32
  %5 = arith.maximumf %4, %b : f32
  %6 = arith.minimumf %5, %b : f32
  %7 = arith.maxnumf %6, %b : f32
  %8 = arith.minnumf %7, %b : f32
  func.return %8 : f32
}
// CHECK-LABEL: func.func @float
// CHECK-NEXT:    %[[V0:.*]] = llvm.fadd %a, %b {fastmathFlags = #llvm.fastmath<fast>} : f32
// CHECK-NEXT:    %[[V1:.*]] = llvm.fsub %[[V0]], %b : f32
// CHECK-NEXT:    %[[V2:.*]] = llvm.fmul %[[V1]], %b : f32
// CHECK-NEXT:    %[[V3:.*]] = llvm.fdiv %[[V2]], %b : f32
// CHECK-NEXT:    %[[V4:.*]] = llvm.fneg %[[V3]] : f32
// CHECK-NEXT:    %[[V5:.*]] = llvm.call_intrinsic "llvm.maximum.f32"(%[[V4]], %b) : (f32, f32) -> f32
// CHECK-NEXT:    %[[V6:.*]] = llvm.call_intrinsic "llvm.minimum.f32"(%[[V5]], %b) : (f32, f32) -> f32
// CHECK-NEXT:    %[[V7:.*]] = llvm.intr.maxnum(%[[V6]], %b) : (f32, f32) -> f32
// CHECK-NEXT:    %[[V8:.*]] = llvm.intr.minnum(%[[V7]], %b) : (f32, f32) -> f32
// CHECK-NEXT:    func.return %[[V8]] : f32

func.func @compare(%a: f64, %b: f64, %c: i1) -> (i1, i1, i1, i1, f64) {
  %0 = arith.cmpf olt, %a, %b : f64
  %1 = arith.cmpf ord, %a, %b : f64
  %2 = arith.cmpf uno, %a, %b : f64
  %3 = arith.cmpf true, %a, %b : f64
  %4 = arith.select %c, %a, %b : f64
  func.return %0, %1, %2, %3, %4 : i1, i1, i1, i1, f64
}
// CHECK-LABEL: func.func @compare
// CHECK-NEXT:    %[[LT:.*]] = llvm.fcmp "olt" %a, %b : f64
// CHECK-NEXT:    %[[AORD:.*]] = llvm.fcmp "oeq" %a, %a : f64
// CHECK-NEXT:    %[[BORD:.*]] = llvm.fcmp "oeq" %b, %b : f64
// CHECK-NEXT:    %[[ORD:.*]] = llvm.and %[[AORD]], %[[BORD]] : i1
// CHECK-NEXT:    %[[AUNO:.*]] = llvm.fcmp "une" %a, %a : f64
// CHECK-NEXT:    %[[BUNO:.*]] = llvm.fcmp "une" %b, %b : f64
// CHECK-NEXT:    %[[UNO:.*]] = llvm.or %[[AUNO]], %[[BUNO]] : i1
// CHECK-NEXT:    %[[TRUE:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    %[[SEL:.*]] = llvm.select %c, %a, %b : i1, f64
// CHECK-NEXT:    func.return %[[LT]], %[[ORD]], %[[UNO]], %[[TRUE]], %[[SEL]]

func.func @casts(%i: i32, %f: f32, %x: index) -> (f32, f32, i32, i32, f64, f16, i64, i64, i8, i64, i16, i32) {
  %0 = arith.sitofp %i : i32 to f32
  %1 = arith.uitofp %i : i32 to f32
  %2 = arith.fptosi %f : f32 to i32
  %3 = arith.fptoui %f : f32 to i32
  %4 = arith.extf %f : f32 to f64
  %5 = arith.truncf %f : f32 to f16
  %6 = arith.extsi %i : i32 to i64
  %7 = arith.extui %i : i32 to i64
  %8 = arith.trunci %i : i32 to i8
  %9 = arith.index_cast %x : index to i64
  %10 = arith.index_cast %x : index to i16
  %11 = arith.bitcast %f : f32 to i32
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : f32, f32, i32, i32, f64, f16, i64, i64, i8, i64, i16, i32
}
// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    llvm.sitofp %i : i32 to f32
// CHECK-NEXT:    llvm.uitofp %i : i32 to f32
// CHECK-NEXT:    llvm.fptosi %f : f32 to i32
// CHECK-NEXT:    llvm.fptoui %f : f32 to i32
// CHECK-NEXT:    llvm.fpext %f : f32 to f64
// CHECK-NEXT:    llvm.fptrunc %f : f32 to f16
// CHECK-NEXT:    llvm.sext %i : i32 to i64
// CHECK-NEXT:    llvm.zext %i : i32 to i64
// CHECK-NEXT:    llvm.trunc %i : i32 to i8
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %x : index to i64
// CHECK-NEXT:    %[[X2:.*]] = builtin.unrealized_conversion_cast %x : index to i64
// CHECK-NEXT:    llvm.trunc %[[X2]] : i64 to i16
// CHECK-NEXT:    llvm.bitcast %f : f32 to i32
// CHECK-NEXT:    func.return %{{.*}}, %[[X]], %{{.*}}
