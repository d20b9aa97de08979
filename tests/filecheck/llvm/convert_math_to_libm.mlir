// RUN: tcir-opt %s -p convert-math-to-libm | filecheck %s

func.func @libm(%x: f32, %y: f64, %h: f16) -> (f32, f64, f16, f32) {
  %0 = math.tanh %x : f32
  %1 = math.atan2 %y, %y : f64
  %2 = math.erf %h : f16
  %3 = math.exp %x : f32
  func.return %0, %1, %2, %3 : f32, f64, f16, f32
}
// CHECK:       func.func private @tanhf(f32) -> f32
// CHECK:       func.func private @atan2(f64, f64) -> f64
// CHECK:       func.func private @erff(f32) -> f32
// CHECK-LABEL: func.func @libm
// CHECK-NEXT:    %[[T:.*]] = func.call @tanhf(%x) : (f32) -> f32
// CHECK-NEXT:    %[[A:.*]] = func.call @atan2(%y, %y) : (f64, f64) -> f64
// CHECK-NEXT:    %[[HX:.*]] = arith.extf %h : f16 to f32
// CHECK-NEXT:    %[[E:.*]] = func.call @erff(%[[HX]]) : (f32) -> f32
// CHECK-NEXT:    %[[EH:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK-NEXT:    %[[EXP:.*]] = math.exp %x : f32
// CHECK-NEXT:    func.return %[[T]], %[[A]], %[[EH]], %[[EXP]]
