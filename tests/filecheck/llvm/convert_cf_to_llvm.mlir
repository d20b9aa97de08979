// RUN: tcir-opt %s -p convert-cf-to-llvm | filecheck %s

func.func @loop(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  cf.br ^bb1(%c0, %x : index, f32)
^bb1(%i: index, %acc: f32):
  %c = arith.cmpi slt, %i, %n : index
  cf.cond_br %c, ^bb2, ^bb3(%acc : f32)
^bb2:
  %s = arith.addf %acc, %x : f32
  %c1 = arith.constant 1 : index
  %next = arith.addi %i, %c1 : index
  cf.br ^bb1(%next, %s : index, f32)
^bb3(%r: f32):
  func.return %r : f32
}
// CHECK-LABEL: func.func @loop(%n: index, %x: f32) -> f32 {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %[[C0:.*]] = builtin.unrealized_conversion_cast %c0 : index to i64
// CHECK-NEXT:    llvm.br ^[[HEAD:.*]](%[[C0]], %x : i64, f32)
// CHECK-NEXT:  ^[[HEAD]](%[[I64:.*]]: i64, %acc: f32):
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %[[I64]] : i64 to index
// CHECK-NEXT:    %c = arith.cmpi slt, %[[I]], %n : index
// CHECK-NEXT:    llvm.cond_br %c, ^[[BODY:.*]], ^[[EXIT:.*]](%acc : f32)
// CHECK-NEXT:  ^[[BODY]]:
// CHECK:         %next = arith.addi %[[I]], %c1 : index
// CHECK-NEXT:    %[[NEXT:.*]] = builtin.unrealized_conversion_cast %next : index to i64
// CHECK-NEXT:    llvm.br ^[[HEAD]](%[[NEXT]], %s : i64, f32)
// CHECK-NEXT:  ^[[EXIT]](%r: f32):
// CHECK-NEXT:    func.return %r : f32
