"""`poly-tile{sizes=32,32,32}`: strip-mine permutable bands into tiles.

Every permutable `poly.band` of every `poly.scop` becomes a tile band (its
members `floor(f/size)`), a `poly.mark "point"`, and a point band (members
`f mod size`, loops with fixed trip counts); both keep the band's permutable
and coincident flags. Sizes go by schedule depth: member `k` of a band with
`d` band members above it is tiled by `sizes[d + k]`. A member whose size is
missing or 1 stays untiled in the tile band (no point member); a size at
least the member's extent is clamped to it. isl guards partial tiles. See
`tcir.polyhedral.tiling`; `poly-sink` then moves the point loops inwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.polyhedral.scop import module_scops, require_mapping, scop_schedule, set_scop_schedule
from tcir.polyhedral.tiling import tile_schedule


@dataclass(frozen=True)
class PolyTilePass(ModulePass):
    """Tile every permutable band of every `poly.scop` by `sizes`."""

    name = "poly-tile"

    sizes: tuple[int, ...]
    """Tile sizes by schedule depth, outermost first (1: leave untiled)."""

    def __post_init__(self) -> None:
        if not self.sizes or any(size < 1 for size in self.sizes):
            raise TCError(f"poly-tile: sizes must be positive (1 leaves a member untiled), got {list(self.sizes)}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            require_mapping(scop, False, "tile before poly-map-to-gpu")
            set_scop_schedule(scop, tile_schedule(scop_schedule(scop), self.sizes))
