// RUN: tcir-opt %s -t cuda | filecheck %s

// Values used once print inside their user's expression, floats too; a load
// only moves past ops that neither write memory nor synchronize nor call, and
// never into a nested region, so across a store, a barrier or an atomic add it
// stays a local. Values used twice are one local; `x = x + e` of the element
// `x` was loaded from is `x += e`; what nothing uses (the load of U, blockIdx.y)
// is not printed. A loop's bound is evaluated at every trip in C: a load there
// stays a local.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<32xf32>, memref<32xf32>, memref<32xf32>, memref<32xf32>) -> (), kernel}> ({
    ^bb0(%X: memref<32xf32>, %Y: memref<32xf32>, %Z: memref<32xf32>, %U: memref<32xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %two = arith.constant 2.0 : f32
      %S = memref.alloca() : memref<32xf32, 3>
      %unused = memref.load %U[%tx] : memref<32xf32>
      // One expression: (X[tx] * Y[tx] + 2) / Z[tx], no locals.
      %x = memref.load %X[%tx] : memref<32xf32>
      %y = memref.load %Y[%tx] : memref<32xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %p, %two : f32
      %z = memref.load %Z[%tx] : memref<32xf32>
      %q = arith.divf %s, %z : f32
      memref.store %q, %U[%tx] : memref<32xf32>
      // A store between the load and its use: a local.
      %a = memref.load %X[%c0] : memref<32xf32>
      memref.store %two, %X[%c0] : memref<32xf32>
      memref.store %a, %Y[%c0] : memref<32xf32>
      // A barrier between: a local.
      %b = memref.load %S[%tx] : memref<32xf32, 3>
      "gpu.barrier"() : () -> ()
      memref.store %b, %Y[%tx] : memref<32xf32>
      // An atomic add between: a local.
      %c = memref.load %Z[%c1] : memref<32xf32>
      %old = "memref.atomic_rmw"(%two, %Z, %c1) <{kind = 0 : i64}> : (f32, memref<32xf32>, index) -> f32
      memref.store %c, %U[%c1] : memref<32xf32>
      // Used twice: one local.
      %m = arith.mulf %q, %q : f32
      %m2 = arith.addf %m, %m : f32
      // Used in a loop: a local before it.
      %e = arith.subf %m2, %two : f32
      scf.for %k = %c0 to %c1 step %c1 {
        %u = memref.load %U[%k] : memref<32xf32>
        %v = arith.addf %u, %e : f32
        memref.store %v, %U[%k] : memref<32xf32>
        %w = memref.load %U[%k] : memref<32xf32>
        %w2 = arith.addf %e, %w : f32
        memref.store %w2, %U[%k] : memref<32xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "inlined"} : () -> ()
    "gpu.func"() <{function_type = (memref<4xi32>) -> (), kernel}> ({
    ^bb0(%P: memref<4xi32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.load %P[%c0] : memref<4xi32>
      %ni = arith.index_cast %n : i32 to index
      scf.for %i = %c0 to %ni step %c1 {
        %v = arith.index_cast %i : index to i32
        memref.store %v, %P[%c0] : memref<4xi32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "bound"} : () -> ()
  }) : () -> ()
}

// CHECK:       extern "C" __global__ void inlined(float* X, float* Y, float* Z, float* U) {
// CHECK-NEXT:    __shared__ float S[32];
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    const float q = (X[tx] * Y[tx] + 2.0f) / Z[tx];
// CHECK-NEXT:    U[tx] = q;
// CHECK-NEXT:    const float a = X[0];
// CHECK-NEXT:    X[0] = 2.0f;
// CHECK-NEXT:    Y[0] = a;
// CHECK-NEXT:    const float b = S[tx];
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    Y[tx] = b;
// CHECK-NEXT:    const float c = Z[1];
// CHECK-NEXT:    tc_atomic_add(&Z[1], 2.0f);
// CHECK-NEXT:    U[1] = c;
// CHECK-NEXT:    const float m = q * q;
// CHECK-NEXT:    const float e = m + m - 2.0f;
// CHECK-NEXT:    for (int k = 0; k < 1; ++k) {
// CHECK-NEXT:      U[k] += e;
// CHECK-NEXT:      U[k] = e + U[k];
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK:       extern "C" __global__ void bound(int* __restrict__ P) {
// CHECK-NEXT:    const int ni = P[0];
// CHECK-NEXT:    for (int i = 0; i < ni; ++i) {
// CHECK-NEXT:      P[0] = i;
// CHECK-NEXT:    }
// CHECK-NEXT:  }
