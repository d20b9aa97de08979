// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The nvgpu dialect's asynchronous copies: global to shared memory, an
// index per dimension, one element type. A valid copy round-trips.

// CHECK: "nvgpu.device_async_copy"(%A, %i, %S, %i, %i) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 1, 1, 2>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index, index) -> ()
// CHECK-NEXT: "nvgpu.device_async_create_group"() : () -> ()
// CHECK-NEXT: "nvgpu.device_async_wait"() <{numGroups = 1 : i32}> : () -> ()
// CHECK: 'nvgpu.device_async_copy' op copies from global memory (space 0 or 1) to shared memory (space 3)
// CHECK: 'nvgpu.device_async_copy' op destination of rank 2 takes 1 indices
// CHECK: 'nvgpu.device_async_copy' op source and destination element types differ
func.func @copy(%A: memref<64xf32>, %i: index) {
  %S = memref.alloca() : memref<2x36xf32, 3 : i64>
  "nvgpu.device_async_copy"(%A, %i, %S, %i, %i) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 1, 1, 2>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index, index) -> ()
  "nvgpu.device_async_create_group"() : () -> ()
  "nvgpu.device_async_wait"() <{numGroups = 1 : i32}> : () -> ()
  func.return
}

// -----

// A copy to global memory.
func.func @to_global(%A: memref<64xf32>, %B: memref<64xf32>, %i: index) {
  "nvgpu.device_async_copy"(%A, %i, %B, %i) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<64xf32>, index, memref<64xf32>, index) -> ()
  func.return
}

// -----

// Too few indices of the destination.
func.func @rank(%A: memref<64xf32>, %i: index) {
  %S = memref.alloca() : memref<2x36xf32, 3 : i64>
  "nvgpu.device_async_copy"(%A, %i, %S, %i) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index) -> ()
  func.return
}

// -----

// An i32 source into a float buffer.
func.func @types(%A: memref<64xi32>, %i: index) {
  %S = memref.alloca() : memref<64xf32, 3 : i64>
  "nvgpu.device_async_copy"(%A, %i, %S, %i) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<64xi32>, index, memref<64xf32, 3 : i64>, index) -> ()
  func.return
}
