// The whole CPU lowering (tcir.compiler.lowering.CPU_LOWERING_PIPELINE).
// RUN: tcir-opt %s -p arith-emulate-bf16,convert-scf-to-cf,arith-expand,convert-cf-to-llvm,convert-math-to-libm,convert-math-to-llvm,convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts | filecheck %s

func.func @scale_tanh(%X: memref<4x8xf32>, %alpha: f32, %Y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %X[%i, %j] : memref<4x8xf32>
      %s = arith.mulf %x, %alpha : f32
      %t = math.tanh %s : f32
      memref.store %t, %Y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
// CHECK:       llvm.func @tanhf(f32) -> f32
// CHECK-LABEL: llvm.func @scale_tanh(%X: !llvm.ptr {llvm.noalias}, %alpha: f32, %Y: !llvm.ptr {llvm.noalias}) {
// CHECK-NEXT:    %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %c4 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %c8 = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    llvm.br ^[[OUTER:.*]](%c0 : i64)
// CHECK-NEXT:  ^[[OUTER]](%i: i64):
// CHECK-NEXT:    %[[C1:.*]] = llvm.icmp "slt" %i, %c4 : i64
// CHECK-NEXT:    llvm.cond_br %[[C1]], ^{{.*}}, ^[[EXIT:.*]]
// CHECK:       ^[[INNER:.*]](%j: i64):
// CHECK-NEXT:    %[[C2:.*]] = llvm.icmp "slt" %j, %c8 : i64
// CHECK-NEXT:    llvm.cond_br %[[C2]], ^[[BODY:.*]], ^{{.*}}
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:    %[[SIZE:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %i, %[[SIZE]] : i64
// CHECK-NEXT:    %[[LIN:.*]] = llvm.add %[[ROW]], %j : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %X[%[[LIN]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %x = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT:    %s = llvm.fmul %x, %alpha : f32
// CHECK-NEXT:    %t = llvm.call @tanhf(%s) : (f32) -> f32
// CHECK:         %[[Q:.*]] = llvm.getelementptr inbounds %Y[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %t, %[[Q]] : f32, !llvm.ptr
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   unrealized_conversion_cast
