"""`poly-sink`: imperfectly nested tiling, by sinking parallel point loops.

In every `poly.scop`, the point bands `poly-tile` marked (`poly.mark
"point"`) lose their marks; their coincident members move below every other
node of their subtree, a copy per leaf restricted to the statements reaching
it (below a `poly.sequence`/`poly.set`: one per `poly.filter`), and point
bands that end up adjacent are joined into one band when it stays permutable
under the scop's dependences, parallel members innermost. For the paper's
fused and tiled sgemm (its Figure (c)) this gives Figure (d). See
`tcir.polyhedral.sinking`.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.polyhedral.dependences import compute_dependences
from tcir.polyhedral.scop import module_scops, scop_schedule, set_scop_schedule
from tcir.polyhedral.sinking import sink_point_bands


@dataclass(frozen=True)
class PolySinkPass(ModulePass):
    """Sink the parallel point loops of every `poly.scop` and join point bands."""

    name = "poly-sink"

    sink: bool = True
    """False: the point bands stay above what they tile (only their marks
    go), so that a tile's points can map to threads above the reductions
    that `poly-block-reduction` spreads over the threads below them."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            dependences = compute_dependences(scop).validity if self.sink else isl.UnionMap("{ }")
            set_scop_schedule(scop, sink_point_bands(scop_schedule(scop), dependences, self.sink))
