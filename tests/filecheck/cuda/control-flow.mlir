// RUN: tcir-opt %s -t cuda | filecheck %s

// scf.if with results (declared before, assigned in both branches), loop-carried
// values that swap (staged through temporaries), scalar kernel arguments,
// name hints that clash with C keywords, two kernels launched by the host.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<32xf32>, f32, i32, index) -> (), kernel}> ({
    ^bb0(%out: memref<32xf32>, %alpha: f32, %n: i32, %int: index):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %early = arith.cmpi sge, %tx, %int : index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %fib:2 = scf.for %it = %c0 to %tx step %c1 iter_args(%a = %one, %b = %two) -> (f32, f32) {
        scf.yield %b, %a : f32, f32
      }
      %nf = arith.sitofp %n : i32 to f32
      %gt = arith.cmpf ogt, %fib#0, %nf : f32
      %pos = arith.ori %gt, %early : i1
      %r, %s = scf.if %pos -> (f32, f32) {
        %m = arith.mulf %fib#0, %alpha : f32
        scf.yield %m, %fib#1 : f32, f32
      } else {
        scf.yield %fib#1, %alpha : f32, f32
      }
      %sum = arith.addf %r, %s : f32
      memref.store %sum, %out[%tx] : memref<32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "branchy"} : () -> ()
    "gpu.func"() <{function_type = (memref<32xf32>) -> (), kernel}> ({
    ^bb0(%out: memref<32xf32>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %z = arith.constant 0.0 : f32
      memref.store %z, %out[%tx] : memref<32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "zero"} : () -> ()
  }) : () -> ()
  func.func @host(%out: memref<32xf32>, %alpha: f32, %N: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %n = arith.constant 5 : i32
    "gpu.launch_func"(%c1, %c1, %c1, %c32, %c1, %c1, %out) <{kernel = @kernels::@zero, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<32xf32>) -> ()
    "gpu.launch_func"(%c1, %c1, %c1, %c32, %c1, %c1, %out, %alpha, %n, %N) <{kernel = @kernels::@branchy, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4, 0>}> : (index, index, index, index, index, index, memref<32xf32>, f32, i32, index) -> ()
    func.return
  }
}

// branchy takes an index scalar (passed as 64 bits): its index values stay long long;
// zero has only a small static memref: int.
// CHECK:       extern "C" __global__ void __launch_bounds__(32) branchy(float* __restrict__ out, const float alpha, const int n, const long long int_) {
// CHECK-NEXT:    const long long tx = threadIdx.x;
// CHECK-NEXT:    float fib = 1.0f;
// CHECK-NEXT:    float fib_1 = 2.0f;
// CHECK-NEXT:    for (long long it = 0; it < tx; ++it) {
// CHECK-NEXT:      const float fib_next = fib_1;
// CHECK-NEXT:      const float fib_1_next = fib;
// CHECK-NEXT:      fib = fib_next;
// CHECK-NEXT:      fib_1 = fib_1_next;
// CHECK-NEXT:    }
// CHECK-NEXT:    const float nf = (float)n;
// CHECK-NEXT:    float r;
// CHECK-NEXT:    float s;
// CHECK-NEXT:    if ((fib > nf) | (tx >= int_)) {
// CHECK-NEXT:      const float m = fib * alpha;
// CHECK-NEXT:      r = m;
// CHECK-NEXT:      s = fib_1;
// CHECK-NEXT:    } else {
// CHECK-NEXT:      r = fib_1;
// CHECK-NEXT:      s = alpha;
// CHECK-NEXT:    }
// CHECK-NEXT:    out[tx] = r + s;
// CHECK-NEXT:  }
// CHECK:       extern "C" __global__ void __launch_bounds__(32) zero(float* __restrict__ out) {
// CHECK-NEXT:    const int tx = threadIdx.x;
// CHECK-NEXT:    out[tx] = 0.0f;
// CHECK-NEXT:  }
