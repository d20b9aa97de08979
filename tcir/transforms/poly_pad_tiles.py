"""`poly-pad-tiles{sizes=64,64,32}`: statement domains padded to whole tiles.

Runs on scheduled scops, before `poly-tile` with the same sizes. Where a
member of the outermost permutable band is an output index that its tile
size does not divide, the domains of the band's statements are extended to
the next multiple of the tile, and their accesses past the tensors' shapes
are marked: reads clamped to the last element (`clamp`), updates run only
within the shape (`clip`). A 1000 x 1000 output on 64 x 64 tiles:

    poly.stmt @S1 domain "{ S1[m, n, k] : 0 <= m <= 999 and 0 <= n <= 999 and 0 <= k <= 999 }" ... {
      %1 = tc.read %A[%m, %k]
      ...
      tc.update %C[%m, %n] "+=" %3

becomes

    poly.stmt @S1 domain "{ S1[m, n, k] : 0 <= m <= 1023 and 0 <= n <= 1023 and 0 <= k <= 999 }" ... {
      %1 = tc.read %A[%m, %k] {clamp = [0 : i64]}
      ...
      tc.update %C[%m, %n] "+=" %3 {clip = [0 : i64, 1 : i64]}

so that every block's tiles are whole: no guards in its register tile,
copies of the same trip count in every block (`poly-promote` clamps a
copy's reads and clips its writes back alike). See `tcir.polyhedral.padding`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.errors import TCError
from tcir.polyhedral.padding import pad, padded_domains
from tcir.polyhedral.scop import module_scops, require_mapping


@dataclass(frozen=True)
class PolyPadTilesPass(ModulePass):
    """Pad the domains of statements to whole tiles of `sizes`."""

    name = "poly-pad-tiles"

    sizes: tuple[int, ...]
    """The tile sizes that `poly-tile` will take, by schedule depth."""

    def __post_init__(self) -> None:
        if not self.sizes or any(size < 1 for size in self.sizes):
            raise TCError(f"poly-pad-tiles: sizes must be positive (1 leaves a member untiled), got {list(self.sizes)}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            require_mapping(scop, False, "pad before poly-tile")
            domains = padded_domains(scop, self.sizes)
            if domains:
                pad(scop, domains)
