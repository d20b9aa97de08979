// Every polyhedral pass needs the scop that convert-tc-to-poly builds: on a
// tc.def without one it says so, at the def.
// RUN: tcir-opt %s --verify-diagnostics -p poly-schedule
// RUN: tcir-opt %s --verify-diagnostics -p poly-parallel-reduction
// RUN: tcir-opt %s --verify-diagnostics -p 'poly-tile{sizes=4}'
// RUN: tcir-opt %s --verify-diagnostics -p poly-sink
// RUN: tcir-opt %s --verify-diagnostics -p poly-split-k
// RUN: tcir-opt %s --verify-diagnostics -p poly-unroll
// RUN: tcir-opt %s --verify-diagnostics -p poly-map-to-gpu
// RUN: tcir-opt %s --verify-diagnostics -p poly-promote
// RUN: tcir-opt %s --verify-diagnostics -p poly-vectorize
// RUN: tcir-opt %s --verify-diagnostics -p poly-map-to-mma
// RUN: tcir-opt %s --verify-diagnostics -p convert-poly-to-loops
// RUN: tcir-opt %s --verify-diagnostics -p convert-poly-to-gpu

// expected-error@+1 {{: no poly.scop in the module: run convert-tc-to-poly first}}
tc.def @copy(%A: !tc.tensor<f32, [8]>) -> (%B: !tc.tensor<f32, [8]>) {
  tc.comprehension %B[%i] "=" (%i in [0, 8)) {
    %0 = tc.read %A[%i]
    tc.yield %0 : f32
  }
}
