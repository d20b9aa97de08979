// RUN: tcir-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The nvgpu dialect's asynchronous copies: global to shared memory, an
// index per dimension, one element type. A valid copy round-trips.

// CHECK: "nvgpu.device_async_copy"(%A, %i, %S, %i, %i) <{dstElements = 4 : index, operandSegmentSizes = array<i32: 1, 1, 1, 2>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index, index) -> ()
// CHECK-NEXT: "nvgpu.device_async_create_group"() : () -> ()
// CHECK-NEXT: "nvgpu.device_async_wait"() <{numGroups = 1 : i32}> : () -> ()
// CHECK: %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16 : i64, 8 : i64, 8 : i64], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK: %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %a, %a, %a, %a, %b, %b, %b, %b, %c, %c, %c, %c) <{mmaShape = [16 : i64, 8 : i64, 16 : i64], operandSegmentSizes = array<i32: 8, 4, 4>}> : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK: %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i, %i) : (memref<2x64x32xf32, #nvgpu.swizzle<128>, 3 : i64>, index, index, index) -> !nvgpu.warpgroup.descriptor
// CHECK-NEXT: %b = "nvgpu.warpgroup.generate.descriptor"(%T, %i, %i) : (memref<16x32xf32, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
// CHECK-NEXT: = "nvgpu.warpgroup.mma"(%a, %b, %c, %c, %c, %c, %c, %c, %c, %c) <{mmaShape = [64 : i64, 16 : i64, 8 : i64], tf32Enabled}>
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
  // expected-error@+1 {{'nvgpu.device_async_copy' op copies from global memory (space 0 or 1) to shared memory (space 3)}}
  "nvgpu.device_async_copy"(%A, %i, %B, %i) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<64xf32>, index, memref<64xf32>, index) -> ()
  func.return
}

// -----

// Too few indices of the destination.
func.func @rank(%A: memref<64xf32>, %i: index) {
  %S = memref.alloca() : memref<2x36xf32, 3 : i64>
  // expected-error@+1 {{'nvgpu.device_async_copy' op destination of rank 2 takes 1 indices}}
  "nvgpu.device_async_copy"(%A, %i, %S, %i) <{dstElements = 1 : index, operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (memref<64xf32>, index, memref<2x36xf32, 3 : i64>, index) -> ()
  func.return
}

// -----

// An i32 source into a float buffer.
func.func @types(%A: memref<64xi32>, %i: index) {
  %S = memref.alloca() : memref<64xf32, 3 : i64>
  // expected-error@+1 {{'nvgpu.device_async_copy' op source and destination element types differ}}
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
  // expected-error@+1 {{'nvgpu.mma.sync' op supports mmaShape = [16, 8, 8] with tf32Enabled (f32 operands) and mmaShape = [16, 8, 16] (f16 or bf16 operands) only}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 4], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// Without tf32Enabled (f32 operands are TF32 only).
func.func @mma_f32(%a: f32, %b: f32, %c: f32) {
  // expected-error@+1 {{'nvgpu.mma.sync' op supports mmaShape = [16, 8, 8] with tf32Enabled (f32 operands) and mmaShape = [16, 8, 16] (f16 or bf16 operands) only}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], operandSegmentSizes = array<i32: 4, 2, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// One register of B.
func.func @mma_registers(%a: f32, %b: f32, %c: f32) {
  // expected-error@+1 {{'nvgpu.mma.sync' op takes 4, 2 and 4 registers of A, B and C and gives 4, got 4, 1, 4 and 4}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], tf32Enabled, operandSegmentSizes = array<i32: 4, 1, 4>}> : (f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// The half types' m16n8k16 (f16 or bf16 operands, f32 accumulators): 8, 4
// and 4 registers of A, B and C, 4 results. A valid one round-trips.
func.func @mma_half(%a: bf16, %b: bf16, %c: f32) -> f32 {
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %a, %a, %a, %a, %b, %b, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 16], operandSegmentSizes = array<i32: 8, 4, 4>}> : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return %d0 : f32
}

// -----

// f16 A with bf16 B.
func.func @mma_mixed(%a: f16, %b: bf16, %c: f32) {
  // expected-error@+1 {{'nvgpu.mma.sync' op takes A and B of one type, got bf16, f16}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %a, %a, %a, %a, %b, %b, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 16], operandSegmentSizes = array<i32: 8, 4, 4>}> : (f16, f16, f16, f16, f16, f16, f16, f16, bf16, bf16, bf16, bf16, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// Half operands in the TF32 shape.
func.func @mma_half_shape(%a: f16, %b: f16, %c: f32) {
  // expected-error@+1 {{'nvgpu.mma.sync' op supports mmaShape = [16, 8, 8] with tf32Enabled (f32 operands) and mmaShape = [16, 8, 16] (f16 or bf16 operands) only}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 8], tf32Enabled, operandSegmentSizes = array<i32: 4, 2, 4>}> : (f16, f16, f16, f16, f16, f16, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// Four registers of A in the half shape.
func.func @mma_half_registers(%a: f16, %b: f16, %c: f32) {
  // expected-error@+1 {{'nvgpu.mma.sync' op takes 8, 4 and 4 registers of A, B and C and gives 4, got 4, 4, 4 and 4}}
  %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a, %a, %a, %a, %b, %b, %b, %b, %c, %c, %c, %c) <{mmaShape = [16, 8, 16], operandSegmentSizes = array<i32: 4, 4, 4>}> : (f16, f16, f16, f16, f16, f16, f16, f16, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// sm_90's wgmma: descriptors of swizzled shared tiles with rows of 128
// bytes, and N / 2 accumulators of m64nNk8 (TF32) or m64nNk16 (f16, bf16).
// Valid ones round-trip.
func.func @wgmma(%S: memref<2x64x32xf32, #nvgpu.swizzle<128>, 3 : i64>, %T: memref<16x32xf32, #nvgpu.swizzle<128>, 3 : i64>, %i: index, %c: f32) -> f32 {
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i, %i) : (memref<2x64x32xf32, #nvgpu.swizzle<128>, 3 : i64>, index, index, index) -> !nvgpu.warpgroup.descriptor
  %b = "nvgpu.warpgroup.generate.descriptor"(%T, %i, %i) : (memref<16x32xf32, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  %d:8 = "nvgpu.warpgroup.mma"(%a, %b, %c, %c, %c, %c, %c, %c, %c, %c) <{mmaShape = [64, 16, 8], tf32Enabled}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32, f32, f32)
  func.return %d#0 : f32
}

// CHECK-LABEL: func.func @wgmma_f16
// CHECK:       "nvgpu.warpgroup.mma"(%{{.*}}) <{mmaShape = [64 : i64, 8 : i64, 16 : i64], operandType = f16}>
func.func @wgmma_f16(%S: memref<64x64xf16, #nvgpu.swizzle<128>, 3 : i64>, %i: index, %c: f32) -> f32 {
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i) : (memref<64x64xf16, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  %d:4 = "nvgpu.warpgroup.mma"(%a, %a, %c, %c, %c, %c) <{mmaShape = [64, 8, 16], operandType = f16}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return %d#0 : f32
}

// CHECK-LABEL: func.func @wgmma_mn_major
// CHECK:       "nvgpu.warpgroup.mma"(%{{.*}}) <{mmaShape = [64 : i64, 128 : i64, 16 : i64], operandType = bf16, transposeA, transposeB}>
func.func @wgmma_mn_major(%S: memref<64x128xbf16, #nvgpu.swizzle<128>, 3 : i64>, %i: index, %c: f32) -> f32 {
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i) : (memref<64x128xbf16, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  %d:64 = "nvgpu.warpgroup.mma"(%a, %a, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c, %c) <{mmaShape = [64, 128, 16], operandType = bf16, transposeA, transposeB}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
  func.return %d#0 : f32
}

// -----

// TF32 operands are read K-major only.
func.func @wgmma_tf32_transposed(%d: !nvgpu.warpgroup.descriptor, %c: f32) {
  // expected-error@+1 {{'nvgpu.warpgroup.mma' op reads MN-major (transposeA, transposeB) f16 or bf16 operands only}}
  %r:4 = "nvgpu.warpgroup.mma"(%d, %d, %c, %c, %c, %c) <{mmaShape = [64, 8, 8], tf32Enabled, transposeA}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// A tile without the swizzle.
func.func @plain_tile(%S: memref<64x32xf32, 3 : i64>, %i: index) {
  // expected-error@+1 {{'nvgpu.warpgroup.generate.descriptor' op describes an f32, f16 or bf16 shared memref in the 128-byte swizzle, got memref<64x32xf32, 3 : i64>}}
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i) : (memref<64x32xf32, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  func.return
}

// -----

// Rows of 36 elements (144 bytes).
func.func @padded_rows(%S: memref<64x36xf32, #nvgpu.swizzle<128>, 3 : i64>, %i: index) {
  // expected-error@+1 {{'nvgpu.warpgroup.generate.descriptor' op needs rows of a multiple of 128 bytes, got memref<64x36xf32, #nvgpu.swizzle<128>, 3 : i64>}}
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i) : (memref<64x36xf32, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  func.return
}

// -----

// N = 16 with 4 accumulators (it takes 8).
func.func @wgmma_registers(%d: !nvgpu.warpgroup.descriptor, %c: f32) {
  // expected-error@+1 {{'nvgpu.warpgroup.mma' op takes and gives N / 2 = 8 accumulators, got 4 and 4}}
  %r:4 = "nvgpu.warpgroup.mma"(%d, %d, %c, %c, %c, %c) <{mmaShape = [64, 16, 8], tf32Enabled}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// k = 40 with TF32: 160 bytes of a row.
func.func @wgmma_shape(%d: !nvgpu.warpgroup.descriptor, %c: f32) {
  // expected-error@+1 {{'nvgpu.warpgroup.mma' op supports mmaShape = [64, N, K] with tf32Enabled and K a multiple of 8, or with an operandType of f16 or bf16 and K a multiple of 16 (K of up to 128 bytes, N a multiple of 8 up to 256) only}}
  %r:8 = "nvgpu.warpgroup.mma"(%d, %d, %c, %c, %c, %c, %c, %c, %c, %c) <{mmaShape = [64, 16, 40], tf32Enabled}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32, f32, f32)
  func.return
}

// -----

// k = 8 with bf16 operands.
func.func @wgmma_half_shape(%d: !nvgpu.warpgroup.descriptor, %c: f32) {
  // expected-error@+1 {{'nvgpu.warpgroup.mma' op supports mmaShape = [64, N, K] with tf32Enabled and K a multiple of 8, or with an operandType of f16 or bf16 and K a multiple of 16 (K of up to 128 bytes, N a multiple of 8 up to 256) only}}
  %r:4 = "nvgpu.warpgroup.mma"(%d, %d, %c, %c, %c, %c) <{mmaShape = [64, 8, 8], operandType = bf16}> : (!nvgpu.warpgroup.descriptor, !nvgpu.warpgroup.descriptor, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// Rows of 72 f16 (144 bytes).
func.func @padded_half_rows(%S: memref<64x72xf16, #nvgpu.swizzle<128>, 3 : i64>, %i: index) {
  // expected-error@+1 {{'nvgpu.warpgroup.generate.descriptor' op needs rows of a multiple of 128 bytes, got memref<64x72xf16, #nvgpu.swizzle<128>, 3 : i64>}}
  %a = "nvgpu.warpgroup.generate.descriptor"(%S, %i, %i) : (memref<64x72xf16, #nvgpu.swizzle<128>, 3 : i64>, index, index) -> !nvgpu.warpgroup.descriptor
  func.return
}

// -----

// A warp's reduction and barrier round-trip; the reduction keeps its type.
// CHECK: %t = nvgpu.subgroup_reduce max %x : (f32) -> f32
// CHECK-NEXT: nvgpu.subgroup_barrier
func.func @warp(%x: f32) -> f32 {
  %t = nvgpu.subgroup_reduce max %x : (f32) -> f32
  nvgpu.subgroup_barrier
  func.return %t : f32
}

// -----

func.func @warp_type(%x: f32) -> f64 {
  // expected-error@+1 {{'nvgpu.subgroup_reduce' op result type must match the operand's}}
  %t = "nvgpu.subgroup_reduce"(%x) <{op = #gpu<all_reduce_op add>}> : (f32) -> f64
  func.return %t : f64
}
