"""`poly-vectorize{width=4}`: unroll the reduction steps a thread reads as vectors.

Runs on scops mapped by `poly-map-to-gpu` and promoted by `poly-promote`. In
each kernel, the innermost sequential loop that all threads of a block run
together (a band member with no band below it but the threads' own loops:
the point loop of a contraction's reduction) is strip-mined by `width`, and
the `width` points are unrolled, where `width` divides its extent:

    poly.band "[{ S1[m, n, kk] -> [((kk) mod 16)] }]" permutable coincident = [0] { <thread loops> }

becomes

    poly.band "[{ S1[m, n, kk] -> [(floor((kk mod 16)/4))] }]" permutable coincident = [0] {
      poly.band "[{ S1[m, n, kk] -> [((kk) mod 4)] }]" permutable coincident = [0] options "{ unroll[0] }" {
        <thread loops> } }

A thread then reads `width` consecutive elements of a row of a shared buffer
in a row (`shared_A[ty + 16 * i][4 * c + 0]` ... `[4 * c + 3]`); laid out by
`poly-promote{vector-width=...}` with aligned rows, nvcc loads them with one
vector instruction (`ld.shared.v4.f32`), a quarter of the loads. Tile loops
(bands with copies below) and loops whose extent `width` does not divide are
left as they are. See `tcir.polyhedral.unrolling`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.polyhedral.scop import module_scops, scop_schedule, set_scop_schedule
from tcir.ir.vectors import VECTOR_WIDTHS
from tcir.polyhedral.unrolling import unroll_vector_steps


@dataclass(frozen=True)
class PolyVectorizePass(ModulePass):
    """Unroll each kernel's innermost block-level sequential loop by `width`."""

    name = "poly-vectorize"

    width: int = 4

    def __post_init__(self) -> None:
        if self.width not in VECTOR_WIDTHS:
            raise TCError(
                f"poly-vectorize: width must be one of {', '.join(map(str, VECTOR_WIDTHS))}, got {self.width}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            set_scop_schedule(scop, unroll_vector_steps(scop_schedule(scop), self.width))
