// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-parallel-reduction" | filecheck %s
// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-schedule{fusion=max}" | filecheck %s --check-prefix=SERIAL
// RUN: tcir-opt %s -p "convert-tc-to-poly,poly-parallel-reduction{coincident-reductions=false}" | filecheck %s --check-prefix=SERIALK

// poly-parallel-reduction: the canonical tree (a filter and an identity band
// per statement), where a sum's reduction member is coincident too and its
// update atomic. The initialization (`!`) is a statement of its own before it.
// poly-schedule, for comparison, keeps the reduction member serial.
// With coincident-reductions=false (split-K's start), the sums are atomic
// and kernels of their own too, their reduction members serial.

tc.def @rowsum(%A: !tc.tensor<f32, [16, 1024]>) -> (%s: !tc.tensor<f32, [16]>) {
  tc.comprehension %s[%b] "+=!" (%b in [0, 16), %k in [0, 1024)) {
    %0 = tc.read %A[%b, %k]
    tc.yield %0 : f32
  }
}
// CHECK-LABEL: tc.def @rowsum
// CHECK:         poly.stmt @S0
// CHECK:           tc.update %s[%{{.*}}] "=" %{{.*}}{{$}}
// CHECK:         poly.stmt @S1
// CHECK:           tc.update %s[%{{.*}}] "+=" %{{.*}} attributes {atomic}
// CHECK:         poly.domain
// CHECK-NEXT:      poly.sequence {
// CHECK-NEXT:        poly.filter "{ S0[b] }" {
// CHECK-NEXT:          poly.band "[{ S0[b] -> [(b)] }]" permutable coincident = [1]
// CHECK:             poly.filter "{ S1[b, k] }" {
// CHECK-NEXT:          poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 1]

// SERIALK-LABEL: tc.def @rowsum
// SERIALK:         tc.update %s[%{{.*}}] "=" %{{.*}}{{$}}
// SERIALK:         tc.update %s[%{{.*}}] "+=" %{{.*}} attributes {atomic}
// SERIALK:         poly.domain
// SERIALK-NEXT:      poly.sequence {
// SERIALK-NEXT:        poly.filter "{ S0[b] }" {
// SERIALK-NEXT:          poly.band "[{ S0[b] -> [(b)] }]" permutable coincident = [1]
// SERIALK:             poly.filter "{ S1[b, k] }" {
// SERIALK-NEXT:          poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]

// SERIAL-LABEL: tc.def @rowsum
// SERIAL-NOT:     atomic
// SERIAL:         coincident = [0]

// An integer sum is atomic too.
tc.def @isum(%A: !tc.tensor<i32, [4, 64]>) -> (%s: !tc.tensor<i32, [4]>) {
  tc.comprehension %s[%b] "+=!" (%b in [0, 4), %k in [0, 64)) {
    %0 = tc.read %A[%b, %k]
    tc.yield %0 : i32
  }
}
// CHECK-LABEL: tc.def @isum
// CHECK:         tc.update %s[%{{.*}}] "+=" %{{.*}} attributes {atomic}
// CHECK:         coincident = [1, 1]

// A maximum is atomic too (a compare-and-swap loop on the GPU); a 64-bit
// integer maximum has no atomic: it stays serial, like an `=` along its
// reduction dimension.
tc.def @rowmax(%A: !tc.tensor<f32, [16, 1024]>) -> (%m: !tc.tensor<f32, [16]>) {
  tc.comprehension %m[%b] "max=!" (%b in [0, 16), %k in [0, 1024)) {
    %0 = tc.read %A[%b, %k]
    tc.yield %0 : f32
  }
}
// CHECK-LABEL: tc.def @rowmax
// CHECK:         tc.update %m[%{{.*}}] "max=" %{{.*}} attributes {atomic}
// CHECK:         poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 1]
// SERIALK-LABEL: tc.def @rowmax
// SERIALK:         tc.update %m[%{{.*}}] "max=" %{{.*}} attributes {atomic}
// SERIALK:         poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]

tc.def @lmax(%A: !tc.tensor<i64, [16, 1024]>) -> (%m: !tc.tensor<i64, [16]>) {
  tc.comprehension %m[%b] "max=!" (%b in [0, 16), %k in [0, 1024)) {
    %0 = tc.read %A[%b, %k]
    tc.yield %0 : i64
  }
}
// CHECK-LABEL: tc.def @lmax
// CHECK-NOT:     atomic
// CHECK:         poly.band "[{ S1[b, k] -> [(b)] }, { S1[b, k] -> [(k)] }]" permutable coincident = [1, 0]

// A sum that reads its own output at other points, as TC's frontend writes
// it: from a copy of the old values (`s_old`), so its only self-dependences
// are the sum's own and it runs in parallel.
tc.def @chain(%A: !tc.tensor<f32, [8, 8]>) -> (%s: !tc.tensor<f32, [8]>) {
  tc.comprehension %s[%b] "+=" (%b in [0, 8), %k in [0, 8)) {
    %0 = tc.read %A[%b, %k]
    %1 = tc.read %s[%k]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
// CHECK-LABEL: tc.def @chain
// CHECK:         tc.read %s_old[%k]
// CHECK:         tc.update %s[%b] "+=" %{{.*}} attributes {atomic}

// A matmul: kk is coincident too; with coincident-reductions=false it stays
// serial (poly-split-k then deals its k tiles to blocks), the sum atomic. The
// initialization keeps its identity band.
tc.def @tmm(%A: !tc.tensor<f32, [64, 1024]>, %B: !tc.tensor<f32, [32, 1024]>) -> (%C: !tc.tensor<f32, [64, 32]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, 64), %n in [0, 32), %kk in [0, 1024)) {
    %0 = tc.read %A[%m, %kk]
    %1 = tc.read %B[%n, %kk]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
// CHECK-LABEL: tc.def @tmm
// CHECK:         poly.band "[{ S1[m, n, kk] -> [(m)] }, { S1[m, n, kk] -> [(n)] }, { S1[m, n, kk] -> [(kk)] }]" permutable coincident = [1, 1, 1]

// SERIALK-LABEL: tc.def @tmm
// SERIALK:         tc.update %C[%{{.*}}, %{{.*}}] "=" %{{.*}}{{$}}
// SERIALK:         tc.update %C[%{{.*}}, %{{.*}}] "+=" %{{.*}} attributes {atomic}
// SERIALK:         poly.filter "{ S0[m, n] }" {
// SERIALK-NEXT:      poly.band "[{ S0[m, n] -> [(m)] }, { S0[m, n] -> [(n)] }]" permutable coincident = [1, 1]
// SERIALK:         poly.filter "{ S1[m, n, kk] }" {
// SERIALK-NEXT:      poly.band "[{ S1[m, n, kk] -> [(m)] }, { S1[m, n, kk] -> [(n)] }, { S1[m, n, kk] -> [(kk)] }]" permutable coincident = [1, 1, 0]
