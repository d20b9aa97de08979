// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The check dialect's check.index: a data-dependent subscript, its value, the
// extent it must stay within. A valid one round-trips.

// CHECK: %{{.*}} = check.index %sub, %value {id = 0 : i64, extent = 50 : i64, dim = 1 : i64, tensor = "LUT", source = "I"} : i32
func.func @valid(%sub: index, %value: i32) -> index {
  %0 = check.index %sub, %value {id = 0 : i64, extent = 50 : i64, dim = 1 : i64, tensor = "LUT", source = "I"} : i32
  func.return %0 : index
}

// -----

func.func @extent(%sub: index, %value: i32) -> index {
  // expected-error@+1 {{'check.index' op extent must not be negative, got -1}}
  %0 = check.index %sub, %value {id = 0 : i64, extent = -1 : i64, dim = 0 : i64, tensor = "LUT", source = "I"} : i32
  func.return %0 : index
}

// -----

func.func @dim(%sub: index, %value: i32) -> index {
  // expected-error@+1 {{'check.index' op dim must not be negative}}
  %0 = check.index %sub, %value {id = 0 : i64, extent = 4 : i64, dim = -1 : i64, tensor = "LUT", source = "I"} : i32
  func.return %0 : index
}

// -----

func.func @names(%sub: index, %value: i32) -> index {
  // expected-error@+1 {{'check.index' op source must name a tensor}}
  %0 = check.index %sub, %value {id = 0 : i64, extent = 4 : i64, dim = 0 : i64, tensor = "LUT", source = ""} : i32
  func.return %0 : index
}

// -----

func.func @value_type(%sub: index, %value: f32) -> index {
  // expected-error@+1 {{Unexpected attribute f32}}
  %0 = check.index %sub, %value {id = 0 : i64, extent = 4 : i64, dim = 0 : i64, tensor = "LUT", source = "I"} : f32
  func.return %0 : index
}

// -----

func.func @missing(%sub: index, %value: i32) -> index {
  // expected-error@+1 {{property 'extent' expected}}
  %0 = check.index %sub, %value {id = 0 : i64, dim = 0 : i64, tensor = "LUT", source = "I"} : i32
  func.return %0 : index
}
