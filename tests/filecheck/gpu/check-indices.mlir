// RUN: tcir-opt %s --split-input-file --verify-diagnostics -p gpu-check-indices | filecheck %s

// A load whose subscript comes from loaded data (LUT(I(t), j)) takes it through
// a check.index of that dimension's extent, naming the indexed array and the
// index tensor; the plain subscripts (%t, %j) stay as they are.

// CHECK-LABEL: "gpu.func"
// CHECK: %v = memref.load %I[%t] : memref<4xi32>
// CHECK-NEXT: %k = arith.index_cast %v : i32 to index
// CHECK-NEXT: %[[SAFE:.*]] = check.index %k, %v {id = 0 : i64, extent = 10 : i64, dim = 0 : i64, tensor = "LUT", source = "I"} : i32
// CHECK-NEXT: %x = memref.load %LUT[%[[SAFE]], %j] : memref<10x3xf32>
// CHECK-NEXT: memref.store %x, %O[%t, %j] : memref<4x3xf32>
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4xi32>, memref<10x3xf32>, memref<4x3xf32>) -> (), kernel}> ({
    ^bb0(%I: memref<4xi32>, %LUT: memref<10x3xf32>, %O: memref<4x3xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %j = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
      %v = memref.load %I[%t] : memref<4xi32>
      %k = arith.index_cast %v : i32 to index
      %x = memref.load %LUT[%k, %j] : memref<10x3xf32>
      memref.store %x, %O[%t, %j] : memref<4x3xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "gather"} : () -> ()
  }) : () -> ()
}

