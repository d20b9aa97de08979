// RUN: tcir-opt %s -p arith-expand | filecheck %s

func.func @floordivsi(%a: i32, %b: i32) -> i32 {
  %r = arith.floordivsi %a, %b : i32
  func.return %r : i32
}
// CHECK-LABEL: func.func @floordivsi(%a: i32, %b: i32) -> i32 {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %a, %b : i32
// CHECK-NEXT:    %[[R:.*]] = arith.remsi %a, %b : i32
// CHECK-NEXT:    %[[INEXACT:.*]] = arith.cmpi ne, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[RNEG:.*]] = arith.cmpi slt, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[BNEG:.*]] = arith.cmpi slt, %b, %[[ZERO]] : i32
// CHECK-NEXT:    %[[SIGNS:.*]] = arith.cmpi ne, %[[RNEG]], %[[BNEG]] : i1
// CHECK-NEXT:    %[[ADJUST:.*]] = arith.andi %[[INEXACT]], %[[SIGNS]] : i1
// CHECK-NEXT:    %[[QM1:.*]] = arith.addi %[[Q]], %[[STEP]] : i32
// CHECK-NEXT:    %[[RES:.*]] = arith.select %[[ADJUST]], %[[QM1]], %[[Q]] : i32
// CHECK-NEXT:    func.return %[[RES]] : i32

func.func @ceildivsi(%a: index, %b: index) -> index {
  %r = arith.ceildivsi %a, %b : index
  func.return %r : index
}
// CHECK-LABEL: func.func @ceildivsi
// CHECK:         arith.constant 1 : index
// CHECK:         arith.divsi %a, %b : index
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i1
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK-NOT:     arith.ceildivsi

func.func @ceildivui(%a: i64, %b: i64) -> i64 {
  %r = arith.ceildivui %a, %b : i64
  func.return %r : i64
}
// CHECK-LABEL: func.func @ceildivui
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %a, %b : i64
// CHECK-NEXT:    %[[R:.*]] = arith.remui %a, %b : i64
// CHECK-NEXT:    %[[INEXACT:.*]] = arith.cmpi ne, %[[R]], %[[ZERO]] : i64
// CHECK-NEXT:    %[[QP1:.*]] = arith.addi %[[Q]], %[[ONE]] : i64
// CHECK-NEXT:    %[[RES:.*]] = arith.select %[[INEXACT]], %[[QP1]], %[[Q]] : i64
// CHECK-NEXT:    func.return %[[RES]] : i64
