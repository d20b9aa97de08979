// RUN: tcir-opt %s -t cuda | filecheck %s

// Integer ops: signed floor/ceil division through helpers, remainders,
// min/max, unsigned ops through casts, index casts, extensions, select.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<100xi32>, memref<100xi8>, memref<100xi64>, index) -> (), kernel}> ({
    ^bb0(%P: memref<100xi32>, %Q: memref<100xi8>, %R: memref<100xi64>, %N: index):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bd = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %gd = "gpu.grid_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %c7 = arith.constant 7 : index
      %cm3 = arith.constant -3 : index
      %c99 = arith.constant 99 : index
      %big = arith.constant 4294967296 : index
      %fd = arith.floordivsi %tx, %cm3 : index
      %cd = arith.ceildivsi %N, %c7 : index
      %rm = arith.remsi %fd, %c7 : index
      %lo = arith.minsi %cd, %rm : index
      %hi = arith.maxsi %lo, %bd : index
      %k0 = arith.addi %hi, %gd : index
      %k = arith.minsi %k0, %c99 : index
      %p = memref.load %P[%k] : memref<100xi32>
      %q = memref.load %Q[%k] : memref<100xi8>
      %q32 = arith.extui %q : i8 to i32
      %qs = arith.extsi %q : i8 to i32
      %c3 = arith.constant 3 : i32
      %du = arith.divui %p, %c3 : i32
      %ru = arith.remui %du, %q32 : i32
      %mu = arith.maxui %ru, %qs : i32
      %cdu = arith.ceildivui %mu, %c3 : i32
      %sh = arith.shli %cdu, %c3 : i32
      %sr = arith.shrsi %sh, %c3 : i32
      %su = arith.shrui %sr, %c3 : i32
      %ge = arith.cmpi uge, %su, %p : i32
      %sel = arith.select %ge, %su, %p : i32
      %idx = arith.index_cast %sel : i32 to index
      %wide = arith.muli %idx, %big : index
      %w64 = arith.index_cast %wide : index to i64
      %t8 = arith.trunci %sel : i32 to i8
      %b = arith.trunci %sel : i32 to i1
      %bs = arith.extsi %b : i1 to i64
      %sum = arith.addi %w64, %bs : i64
      %bits = arith.bitcast %sel : i32 to f32
      %fu = arith.uitofp %sel : i32 to f32
      %f = arith.addf %bits, %fu : f32
      %back = arith.fptoui %f : f32 to i32
      memref.store %back, %P[%k] : memref<100xi32>
      memref.store %t8, %Q[%k] : memref<100xi8>
      memref.store %sum, %R[%k] : memref<100xi64>
      "gpu.return"() : () -> ()
    }) {sym_name = "integers"} : () -> ()
  }) : () -> ()
}

// CHECK:       template <typename T>
// CHECK-NEXT:  __device__ __forceinline__ T tc_floordiv(T a, T b) {
// CHECK:       __device__ __forceinline__ T tc_ceildiv(T a, T b) {
// CHECK:       __device__ __forceinline__ T tc_ceildivu(T a, T b) {
// CHECK:       extern "C" __global__ void integers(int* __restrict__ P, signed char* __restrict__ Q, long long* __restrict__ R, const long long N) {
// CHECK-NEXT:    const long long tx = threadIdx.x;
// CHECK-NEXT:    const long long bd = blockDim.x;
// CHECK-NEXT:    const long long gd = gridDim.z;
// CHECK-NEXT:    const long long cd = tc_ceildiv<long long>(N, 7);
// CHECK-NEXT:    const long long rm = tc_floordiv<long long>(tx, -3) % 7;
// CHECK-NEXT:    const long long lo = cd < rm ? cd : rm;
// CHECK-NEXT:    const long long k0 = (lo > bd ? lo : bd) + gd;
// CHECK-NEXT:    const long long k = k0 < 99 ? k0 : 99;
// CHECK-NEXT:    const int p = P[k];
// CHECK-NEXT:    const signed char q = Q[k];
// CHECK-NEXT:    const int qs = (int)q;
// CHECK-NEXT:    const int ru = (int)((unsigned int)((int)((unsigned int)p / (unsigned int)3)) % (unsigned int)((int)(unsigned char)q));
// CHECK-NEXT:    const int su = (int)((unsigned int)(((int)((unsigned int)((int)tc_ceildivu<unsigned int>((unsigned int)((unsigned int)ru > (unsigned int)qs ? ru : qs), (unsigned int)3)) << (unsigned int)3)) >> 3) >> (unsigned int)3);
// CHECK-NEXT:    const int sel = (unsigned int)su >= (unsigned int)p ? su : p;
// CHECK-NEXT:    P[k] = (int)(unsigned int)(__int_as_float(sel) + (float)(unsigned int)sel);
// CHECK-NEXT:    Q[k] = (signed char)sel;
// CHECK-NEXT:    R[k] = (long long)sel * 4294967296LL + ((sel & 1) != 0 ? -1 : 0);
// CHECK-NEXT:  }
