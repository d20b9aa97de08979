// RUN: tcir-opt %s -p convert-poly-to-gpu | filecheck %s

// A mapped scop becomes a gpu.func kernel (its block and thread ids where the
// schedule's mapping parameters were, the statement inlined at i = 4 block_x +
// thread_x) and a host function launching it on 2 blocks of 4 threads.

// CHECK: builtin.module attributes {gpu.container_module} {
// CHECK-NEXT: "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-NEXT: "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf32>) -> (), kernel}> ({
// CHECK-NEXT: ^bb0(%A: memref<8xf32>, %B: memref<8xf32>):
// CHECK-NEXT: %[[BX:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT: %[[TX:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[FOUR]], %[[BX]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[OFF]], %[[TX]] : index
// CHECK-NEXT: %[[V:.*]] = memref.load %A[%[[I]]] : memref<8xf32>
// CHECK-NEXT: memref.store %[[V]], %B[%[[I]]] : memref<8xf32>
// CHECK-NEXT: "gpu.return"() : () -> ()
// CHECK-NEXT: }) {sym_name = "copy_kernel0"} : () -> ()
// CHECK-LABEL: func.func @copy(%A: memref<8xf32>, %B: memref<8xf32>) {
// CHECK-NEXT: %[[GX:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[GY:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[GZ:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[TBX:.*]] = arith.constant 4 : index
// CHECK: "gpu.launch_func"(%[[GX]], %[[GY]], %[[GZ]], %[[TBX]], %{{.*}}, %{{.*}}, %A, %B) <{kernel = @kernels::@copy_kernel0

tc.def @copy(%A: !tc.tensor<f32, [8]>) -> (%B: !tc.tensor<f32, [8]>) {
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
