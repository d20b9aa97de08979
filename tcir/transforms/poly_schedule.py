"""`poly-schedule{fusion=min|max|preserve3|outer allow-skewing=false positive-coefficients=true}`.

Replaces the schedule tree of every `poly.scop` by one computed by isl's
scheduler from the scop's dependences (validity, proximity and coincidence:
all of them), following a fusion strategy: `min` (no fusion), `max` (one
outer band over all statements where legal), `preserve3` (the most fusion
that keeps up to three outer parallel members) or `outer` (`preserve3`'s
bands fused along their outermost member where every dependence stays
within one of its values: one kernel over a batch for a chain of layers). Band members that skew or
have negative coefficients are cut away unless allowed, reduction members are
never coincident, and a scheduler run that exceeds `max-operations` falls
back to less fusion (see `tcir.polyhedral.scheduling`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.polyhedral.scop import module_scops
from tcir.polyhedral.scheduling import SchedulingStrategy


@dataclass(frozen=True)
class PolySchedulePass(ModulePass):
    """Schedule every `poly.scop` with isl's scheduler and a fusion strategy."""

    name = "poly-schedule"

    fusion: str = "max"
    allow_skewing: bool = False
    positive_coefficients: bool = True
    max_operations: int = 2_000_000

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        strategy = SchedulingStrategy(
            self.fusion,
            self.allow_skewing,
            self.positive_coefficients,
            self.max_operations,
        )
        for scop in module_scops(op):
            Rewriter.replace_op(scop.schedule, strategy.schedule(scop))
