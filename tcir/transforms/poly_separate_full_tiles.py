"""`poly-separate-full-tiles`: the blocks of full tiles apart from the partial ones.

Runs on scops mapped by `poly-map-to-gpu` (after `poly-promote` and the
passes that rewrite a kernel's point bands), before `convert-poly-to-gpu`.
In each kernel with a sum into a register tile (a private buffer of
several elements, whose points a thread's unrolled loops guard one by one,
at each step of the sum) whose blocks run
both full and partial tiles (a dimension's size not a multiple of its
tile), the band that blocks map goes under a
sequence of two filters: the instances of the blocks whose tiles are full,
then the others, each over a copy of the band's subtree. A 1000 x 1000
output on 64 x 64 tiles, blocks 0 to 15 along each dimension:

    poly.filter "[block_y, block_x] -> { S1[m, n, k] : ... }" {
      poly.band "[{ S1[m, n, k] -> [(floor((m)/64))] }, { S1[m, n, k] -> [(floor((n)/64))] }]" ... {
        <point bands, copies>
    }}

becomes

    poly.filter "[block_y, block_x] -> { S1[m, n, k] : ... }" {
      poly.sequence {
        poly.filter "[block_y, block_x] -> { S1[m, n, k] : block_y <= 14 and block_x <= 14 and ... }" {
          poly.band ... { <point bands, copies> } }
        poly.filter "[block_y, block_x] -> { S1[m, n, k] : (block_y = 15 or block_x = 15) and ... }" {
          poly.band ... { <point bands, copies> } }
    }}

isl's AST then guards nothing in the first branch that the block ids imply
(the points of an unrolled register tile, the shared copies' rows), and
the second keeps the guards. The threads' loops over their points are
scaled (and a register tile's unrolled) before the split, as
`convert-poly-to-gpu` would (it finds them done). `max-kernels` bounds how many kernels of a
scop are split (each split doubles its code). See `tcir.polyhedral.full_tiles`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from tcir.dialects.poly import ScopOp
from tcir.dialects.tc import UpdateOp
from tcir.errors import TCError
from tcir.lowering.tc_point import PROMOTED
from tcir.polyhedral.full_tiles import has_partial_tiles, separate_full_tiles
from tcir.polyhedral.gpu_mapping import mapped_context, split_context
from tcir.polyhedral.promotion.promote import private_buffers
from tcir.polyhedral.scop import module_scops, scop_context, scop_schedule, set_scop_schedule
from tcir.polyhedral.thread_loops import scop_thread_loops


def _register_tiled_sums(scop: ScopOp) -> set[str]:
    """The statements of `scop` that reduce into a register tile (a private
    buffer of several elements): an elementwise tile's guards cost little."""
    tiles = {StringAttr(name) for name, t in private_buffers(scop).items() if math.prod(t.get_shape()) > 1}
    return {
        stmt.sym_name.data
        for stmt in scop.statements
        if isinstance(update := stmt.body.block.last_op, UpdateOp)
        and update.kind.data != "="
        and update.attributes.get(PROMOTED) in tiles
    }


@dataclass(frozen=True)
class PolySeparateFullTilesPass(ModulePass):
    """Split each kernel's blocks into those of full tiles and the others."""

    name = "poly-separate-full-tiles"

    max_kernels: int = 8

    def __post_init__(self) -> None:
        if self.max_kernels < 0:
            raise TCError(f"poly-separate-full-tiles: max-kernels must be at least 0, got {self.max_kernels}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            schedule = scop_schedule(scop)
            _, mapping = split_context(schedule)
            if mapping is None:
                raise TCError("poly-separate-full-tiles: the scop is not mapped; run poly-map-to-gpu first")
            context = mapped_context(scop_context(scop), mapping)
            tiled = _register_tiled_sums(scop)
            if self.max_kernels == 0 or not has_partial_tiles(schedule, context, tiled):
                continue
            # The threads' loops first, on the kernel whole: each copy keeps
            # them (isl's stride analysis of a partial copy's disjunctive
            # filter can exceed its budget, leaving a register tile rolled).
            scaled = scop_thread_loops(scop, schedule, context, hint=False)
            set_scop_schedule(scop, separate_full_tiles(scaled, context, self.max_kernels, tiled))
