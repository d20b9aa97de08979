"""`poly-split-k{slices=8}`: deal the k tiles of atomic reductions to slices of blocks.

Runs after `poly-parallel-reduction{coincident-reductions=false}` (which
marks the sums' `tc.update`s `atomic`, each sum a kernel of its own with its
reduction dimensions serial), `poly-tile` and `poly-sink`, before
`poly-map-to-gpu`. In the outermost band of every atomic sum, the outermost
non-coincident member that depends only on the sum's reduction dimensions
(the loop over k tiles) takes `E` values; a new coincident first member
`floor(member / ceil(E / slices))` (from 0) numbers the slice of k tiles
each instance falls in, and the band is split before the k member. Three
block dimensions then take (slice, m tile, n tile), and each block loops
over the k tiles of its slice, with its shared copies per k tile and its
partial sums in private accumulators that it adds to the output atomically
at the end. The point band below puts its k points outside the output
points that threads map. A matmul tiled by 64x64x32, K = 1024 (32 k
tiles), four slices:

    poly.band "[{ S1[m, n, k] -> [(floor((m)/64))] }, { S1[m, n, k] -> [(floor((n)/64))] },
                { S1[m, n, k] -> [(floor((k)/32))] }]" permutable coincident = [1, 1, 0] {
      poly.band "[{ S1[m, n, k] -> [((m) mod 64)] }, { S1[m, n, k] -> [((n) mod 64)] },
                  { S1[m, n, k] -> [((k) mod 32)] }]" permutable coincident = [1, 1, 0]
    }

becomes (isl writes `floor(floor(k/32)/8)` as `floor(k/256)`)

    poly.band "[{ S1[m, n, k] -> [(floor((k)/256))] }, { S1[m, n, k] -> [(floor((m)/64))] },
                { S1[m, n, k] -> [(floor((n)/64))] }]" permutable coincident = [1, 1, 1] {
      poly.band "[{ S1[m, n, k] -> [(floor((k)/32))] }]" permutable coincident = [0] {
        poly.band "[{ S1[m, n, k] -> [((k) mod 32)] }]" permutable coincident = [0] {
          poly.band "[{ S1[m, n, k] -> [((m) mod 64)] }, { S1[m, n, k] -> [((n) mod 64)] }]"
              permutable coincident = [1, 1]
    }}}

Bands of statements that are not atomic sums stay as they are; `slices=1`
changes nothing. See `tcir.polyhedral.split_k`.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import UpdateOp
from tcir.errors import TCError
from tcir.lowering.tc_point import ATOMIC
from tcir.polyhedral.canonical import reduction_dims
from tcir.polyhedral.dependences import compute_dependences
from tcir.polyhedral.scop import module_scops, require_mapping, scop_context, scop_schedule, set_scop_schedule
from tcir.polyhedral.split_k import split_k_schedule


def _reduction_coordinates(stmt: StmtOp) -> isl.UnionMap:
    """`{ S[i, j, k] -> S[k] }`: an instance's reduction coordinates."""
    domain = isl.Set(stmt.domain.data)
    projection = isl.Map.identity(domain.get_space().map_from_set())
    used = set(reduction_dims(stmt))
    for dim in reversed(range(domain.dim(isl.dim_type.set))):
        if dim not in used:
            projection = projection.project_out(isl.dim_type.out, dim, 1)
    return isl.UnionMap.from_map(projection)


@dataclass(frozen=True)
class PolySplitKPass(ModulePass):
    """Split the k loop of every atomic sum into `slices` slices of blocks."""

    name = "poly-split-k"

    slices: int = 2

    def __post_init__(self) -> None:
        if self.slices < 1:
            raise TCError(f"poly-split-k: slices must be at least 1, got {self.slices}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            require_mapping(scop, False, "split the k loop before poly-map-to-gpu")
            reductions = isl.UnionMap.empty(scop_context(scop).get_space())
            for stmt in scop.statements:
                update = stmt.body.block.last_op
                if isinstance(update, UpdateOp) and ATOMIC in update.attributes:
                    reductions = reductions.union(_reduction_coordinates(stmt))
            if reductions.is_empty():
                continue
            dependences = compute_dependences(scop).validity
            schedule = split_k_schedule(scop_schedule(scop), reductions, self.slices, dependences)
            set_scop_schedule(scop, schedule)
