"""`poly-unroll{factor=4}`: unroll innermost loops up to `factor` instances, fully or partially.

In every `poly.scop`, each innermost `poly.band` (no band below it; after
`poly-tile` and `poly-sink`, the point bands) gets `unroll[k]` in its
`options` for its innermost members whose extents multiply to at most
`factor`; `convert-poly-to-loops` then emits those loops fully unrolled.
The next member outwards, if sequential, is unrolled partially by the
largest divisor of its extent within the factor left (`(k mod 8)` becomes
`floor(k/2)` and an unrolled `k mod 2`). Members with symbolic extents,
parallel members that do not fit (left to the threads), and every outer band
are left as they are. See `tcir.polyhedral.unrolling`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.polyhedral.scop import module_scops, scop_schedule, set_scop_schedule
from tcir.polyhedral.unrolling import unroll_schedule


@dataclass(frozen=True)
class PolyUnrollPass(ModulePass):
    """Mark the innermost loops of every `poly.scop` for unrolling, bounded by `factor`."""

    name = "poly-unroll"

    factor: int = 1

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise TCError(f"poly-unroll: factor must be positive, got {self.factor}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            set_scop_schedule(scop, unroll_schedule(scop_schedule(scop), self.factor))
