// Passes that work on schedules not yet mapped to the GPU refuse a mapped one
// (poly-map-to-gpu maps once; a mapped schedule lowers to kernels only).
// RUN: tcir-opt %s --verify-diagnostics -p 'poly-map-to-gpu{threads=4}'
// RUN: tcir-opt %s --verify-diagnostics -p 'poly-tile{sizes=2}'
// RUN: tcir-opt %s --verify-diagnostics -p 'poly-split-k{slices=2}'
// RUN: tcir-opt %s --verify-diagnostics -p convert-poly-to-loops

tc.def @copy(%A: !tc.tensor<f32, [8]>) -> (%B: !tc.tensor<f32, [8]>) {
  // expected-error-re@+1 {{{{poly-map-to-gpu|poly-tile|poly-split-k|convert-poly-to-loops}}: the schedule of @copy is already mapped to the GPU (it has a poly.mark "kernel"): {{.+}}}}
  poly.scop @copy params [] context "{ : }" {
    poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 7 }" reads "{ S0[i] -> A[i] }" writes "{ S0[i] -> B[i] }" {
    ^bb0(%i: index):
      %0 = tc.read %A[%i]
      tc.update %B[%i] "=" %0
    }
    poly.domain "{ S0[i] : 0 <= i <= 7 }" {
      poly.context "[block_x, thread_x] -> { : 0 <= block_x <= 1 and 0 <= thread_x <= 3 }" {
        poly.mark "kernel" {
          poly.filter "[block_x] -> { S0[i] : 4block_x <= i <= 3 + 4block_x }" {
            poly.band "[{ S0[i] -> [(i - (i) mod 4)] }]" permutable coincident = [1] {
              poly.filter "[thread_x] -> { S0[i] : (-thread_x + i) mod 4 = 0 }" {
                poly.band "[{ S0[i] -> [((i) mod 4)] }]" permutable coincident = [1]
              }
            }
          }
        }
      }
    }
  }
}
