"""When the default mapping pads a sum's output to whole tiles (`MappingOptions.pad_tiles`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

PADDING = 1 / 8
"""The most instances that padding an output to whole tiles may add, as a
share of its own: 197 rows on 64-row tiles (30% more) and a stem
convolution's 112 columns on 64 (14%) computed more slowly padded (the
defaults guide)."""


def pads_cheaply(extents: Sequence[int], tiles: Sequence[int]) -> bool:
    """Whether some of `extents` end in a partial tile of `tiles` and whole
    tiles add at most `PADDING` to them (a tile at least its extent is one
    whole tile)."""
    padded = [-(-e // t) * t if e > t else e for e, t in zip(extents, tiles)]
    return padded != list(extents) and math.prod(padded) <= (1 + PADDING) * math.prod(extents)
