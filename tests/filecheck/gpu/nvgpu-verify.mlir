// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The nvgpu dialect's asynchronous copies: global to shared memory, an
// index per dimension, one element type. A valid copy round-trips.

// CHECK: "nvgpu.device_async_copy"(%A, %i, %S, %i, %i) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 1, 1, 2>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index, index) -> ()
// CHECK-NEXT: "nvgpu.device_async_create_group"() : () -> ()
// CHECK-NEXT: "nvgpu.device_async_wait"() <{numGroups = 1 : i32}> : () -> ()
// CHECK: 'nvgpu.device_async_copy' op copies from global memory (space 0 or 1) to shared memory (space 3)
// CHECK: 'nvgpu.device_async_copy' op destination of rank 2 takes 1 indices
// CHECK: 'nvgpu.device_async_copy' op source and destination element types differ
// CHECK: %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16 : i64, 8 : i64, 8 : i64], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK: 'nvgpu.mma.sync' op supports mmaShape = [16, 8, 8] with tf32Enabled only
// CHECK: 'nvgpu.mma.sync' op supports mmaShape = [16, 8, 8] with tf32Enabled only
// CHECK: 'nvgpu.mma.sync' op takes 4, 2 and 4 registers of A, B and C and gives 4, got 4, 1, 4 and 4
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

// -----

// The tensor cores' TF32 m16n8k8: a thread's 4, 2 and 4 registers of A, B
// and C, 4 results. A valid one round-trips.
func.func @mma(%a: f32, %b: f32, %c: f32) -> f32 {
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return %d0 : f32
}

// -----

// Another shape.
func.func @mma_shape(%a: f32, %b: f32, %c: f32) {
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 4], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// Without tf32Enabled (f32 operands are TF32 only).
func.func @mma_f32(%a: f32, %b: f32, %c: f32) {
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// One register of B.
func.func @mma_registers(%a: f32, %b: f32, %c: f32) {
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], tf32Enabled, operandSegmentSizes = array<i32: 4, 1, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}
