// RUN: not tcir-opt %s -t cuda 2>&1 | filecheck %s

// An op with no CUDA translation is a user error naming the op, not a traceback.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<32xindex>) -> (), kernel}> ({
    ^bb0(%out: memref<32xindex>):
      %lane = "gpu.lane_id"() : () -> index
      memref.store %lane, %out[%lane] : memref<32xindex>
      "gpu.return"() : () -> ()
    }) {sym_name = "lanes"} : () -> ()
  }) : () -> ()
}

// CHECK: error: cuda backend: op 'gpu.lane_id' is not supported
// CHECK-NOT: Traceback
