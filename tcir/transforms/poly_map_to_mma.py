"""`poly-map-to-mma{allow-tf32=true warpgroup=false}`: contractions on the tensor cores, `mma.sync`.

Runs on scops mapped by `poly-map-to-gpu` (and promoted by `poly-promote`).
A statement `C[.., i, j] += X[.., i, k] * Y[.., j, k]` of f32 elements whose
block is `threads=[4, Y]` (Y a multiple of 8), its threads owning
`i ≡ thread_y (mod Y)` and `j ≡ thread_x (mod 4)` of the tile (or of each
sub-tile of `warps`, numbered by thread_z), becomes the
statement of the warps' `mma.sync` (m16n8k8, TF32): its domain keeps one
instance in 32, whose body reads the thread's registers of the A and B
fragments and its four accumulators and writes back `nvgpu.mma.sync`'s
results (see `tcir.polyhedral.mma` for the layout):

    poly.stmt @S1 domain "{ S1[m, n, kk] : 0 <= m <= 127 and ... }" ... {
      %1 = tc.read %A[%m, %kk] ...   %2 = tc.read %B[%n, %kk] ...
      %3 = arith.mulf %1, %2 : f32
      tc.update %C[%m, %n] "+=" %3 ...
    }

becomes

    poly.stmt @S1 domain "{ S1[m, n, kk] : m mod 128 <= 63 and n mod 8 <= 3 and kk mod 8 = 0 and ... }" ... {
      %0 = tc.read %A[%m, %kk + %n mod 4] ...              (a0 .. a3)
      %4 = tc.read %B[%n - %n mod 8 + ..., %kk + %n mod 4] (b0, b1)
      %6 = tc.read %C[%m, %n] ...                          (c0 .. c3)
      %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(...) <{mmaShape = [16, 8, 8], tf32Enabled}>
      tc.update %C[%m, %n] "=" %d0 ...
    }

The rows of its operands' shared tiles grow (A's to 16 mod 32 words, B's
to 4 mod 8) so that each quarter warp's float4 fragment reads hit distinct
banks: `memref<32x36xf32, 3>` of A becomes `memref<32x48xf32, 3>`.

A contraction of f16 or bf16 operands (read through `arith.extf`, as
`tc-widen-half-precision` leaves them) into f32 accumulators becomes
m16n8k16 `mma.sync` in the same way, whatever `allow-tf32` (false leaves
f32 contractions as they are; the GPU pipelines run it so for every
mapping): one instance in 32 per 16 or 32 points of the reduction, its
half values given to `"nvgpu.mma.sync"(...) <{mmaShape = [16, 8, 16]}>`
as read (see `tcir.polyhedral.mma`).

Statements that are no such contraction, or whose mapping, domain or tiles
do not give whole warps whole groups, are left as they are. The products
read as TF32 (10 bits of mantissa) and summed in another order: a
choice the user makes (`MappingOptions.allow_tf32`, as PyTorch's
`torch.backends.cuda.matmul.allow_tf32`). The CUDA backend needs sm_80 for
the tensor cores (before it, `mma.sync`'s sums by warp shuffles).

With `warpgroup=true`, a contraction whose block is `threads=[4, 8]` with
`warps=[1, W]` (W a multiple of 4) and whose operands' shared tiles have
128 bytes of k a row (32 f32, 64 halves) becomes instead the statement of
sm_90's `wgmma` (m64nNk8 for TF32, m64nNk16 for f16 and bf16, N the tile's
columns, see `tcir.polyhedral.wgmma`): one instance per thread and 8 (16)
k, which reads the thread's N / 2 accumulators and writes
back `nvgpu.warpgroup.mma`'s results, its operands described by
`nvgpu.warpgroup.generate.descriptor`s of the first elements of the
warpgroup's rows of A and of the tile's rows of B:

      %a = "nvgpu.warpgroup.generate.descriptor"(%A, %m, %n, %kk) <{map = (d0, d1, d2) -> (d0 - d0 mod 64, d2)}> ...
      %b = "nvgpu.warpgroup.generate.descriptor"(%B, %m, %n, %kk) <{map = (d0, d1, d2) -> (d1 - d1 mod 128, d2)}> ...
      %d0, ..., %d63 = "nvgpu.warpgroup.mma"(%a, %b, ...) <{mmaShape = [64, 128, 8], tf32Enabled}>

Both tiles become `memref<Rx32xf32, #nvgpu.swizzle<128>, 3>` (or `Rx64xf16`: the
hardware's 128-byte swizzle), B's rows listed so that the columns of each
8 that `wgmma` gives a thread are the ones the mapping gave it. Half
operands may also be MN-major, k along their tiles' rows (`A(kk,m)`,
`B(kk,n)`): `memref<64xRxf16, #nvgpu.swizzle<128>, 3>`, stored in column
blocks of 64, read with `transposeA`/`transposeB`; an MN-major B keeps its
columns in order, and the statements that move the private accumulators'
tile from and to memory address its column j at the column wgmma put
there instead (where the accumulators are private). The CUDA backend runs
it on sm_90a, and by each thread's own shared loads before.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.polyhedral import mma, wgmma
from tcir.polyhedral.scop import module_scops


@dataclass(frozen=True)
class PolyMapToMmaPass(ModulePass):
    """Run each fitting contraction of a mapped scop on the tensor cores:
    with `warpgroup`, as sm_90's `wgmma` where it fits, else as `mma.sync`
    (m16n8k16 for f16/bf16 ones, m16n8k8 for f32 ones with `allow_tf32`)."""

    name = "poly-map-to-mma"

    warpgroup: bool = False
    allow_tf32: bool = True
    """Whether f32 contractions may run with TF32 products; false leaves
    them as they are (half ones lose nothing on the tensor cores)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            if self.warpgroup:
                wgmma.rewrite(scop, self.allow_tf32)
            mma.rewrite(scop, self.allow_tf32)
