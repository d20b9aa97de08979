"""Rectangular tiling of permutable bands (the paper's section 4.3, first step).

Every permutable band becomes a tile band (the tile loops) followed by a
`point` mark and a point band (the point loops, with fixed trip counts),
through `isl_schedule_node_band_tile` with tile loops not scaled (a tile loop
counts tiles: `floor(i/32)`) and point loops shifted to start at zero
(`i mod 32`). Both bands keep the band's permutable and coincident flags.

Tile sizes are given per schedule depth: member `k` of a band at schedule
depth `d` (the number of band members above it) gets `sizes[d + k]`. A member
whose size is missing, 0 or 1 is not tiled: it stays in the tile band as it is
(isl tiles it by 1) and gets no point member. A size at least the member's
extent (known when the sizes are specialized) is clamped to that extent: one
tile, whose point loop is the whole loop. isl guards partial tiles itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl

from tcir.polyhedral.bands import (
    POINT_MARK,
    coincident,
    insert_band,
    is_band,
    map_bottom_up,
    member_extent,
    members,
)
from tcir.polyhedral.scheduling import isl_options

_TILE_OPTIONS = {"tile_scale_tile_loops": 0, "tile_shift_point_loops": 1}


def tile_sizes(node: isl.ScheduleNode, sizes: Sequence[int]) -> list[int]:
    """The size each member of band `node` is tiled by (1: not tiled)."""
    depth = node.get_schedule_depth()
    result: list[int] = []
    for member in range(node.band_n_member()):
        size = sizes[depth + member] if depth + member < len(sizes) else 0
        extent = member_extent(node, member)
        if extent is not None:
            size = min(size, extent)
        result.append(max(size, 1))
    return result


def _tile_band(node: isl.ScheduleNode, sizes: Sequence[int]) -> isl.ScheduleNode:
    """Tile band `node` if permutable with some size above 1; returns the node
    at its position (the tile band)."""
    if not is_band(node) or not node.band_get_permutable():
        return node
    per_member = tile_sizes(node, sizes)
    if all(size == 1 for size in per_member):
        return node
    ctx = node.get_ctx()
    multi_size = isl.MultiVal.zero(node.band_get_space())
    for member, size in enumerate(per_member):
        multi_size = multi_size.set_val(member, isl.Val.int_from_si(ctx, size))
    with isl_options(ctx, _TILE_OPTIONS):
        tile = node.band_tile(multi_size)
    point = tile.child(0)
    tiled = [m for m, size in enumerate(per_member) if size > 1]
    functions, flags = members(point), coincident(point)
    point = point.delete()
    point = insert_band(
        point, [functions[m] for m in tiled], [flags[m] for m in tiled], permutable=True
    )
    return point.insert_mark(isl.Id(POINT_MARK, context=ctx)).parent()


def tile_schedule(schedule: isl.Schedule, sizes: Sequence[int]) -> isl.Schedule:
    """`schedule` with every permutable band tiled by `sizes` (see the module)."""
    return map_bottom_up(
        schedule.get_root(), lambda n: _tile_band(n, sizes)
    ).get_schedule()
