"""Full unrolling of innermost loops, bounded by a number of instances.

For each innermost band (one with no band below it: after tiling and
sinking, the point bands), members are taken from the innermost outwards
while the product of their extents (their trip counts, e.g. tile sizes) stays
at most `factor`; each is marked `unroll[k]` in the band's isl AST build
options, so that isl's AST generator replicates its body once per value
(guarding the values partial tiles lack). A member whose extent is unknown
(symbolic) or too large stops the walk.
"""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.bands import is_band, map_bottom_up, member_extent


def _has_band_below(node: isl.ScheduleNode) -> bool:
    return any(
        is_band(child) or _has_band_below(child)
        for child in (node.child(k) for k in range(node.n_children()))
    )


def unrolled_members(node: isl.ScheduleNode, factor: int) -> list[int]:
    """The members of band `node` to unroll fully within `factor` instances."""
    chosen: list[int] = []
    instances = 1
    for member in reversed(range(node.band_n_member())):
        extent = member_extent(node, member)
        if extent is None or instances * extent > factor:
            break
        instances *= extent
        chosen.append(member)
    return chosen


def _unroll_band(node: isl.ScheduleNode, factor: int) -> isl.ScheduleNode:
    if not is_band(node) or _has_band_below(node):
        return node
    chosen = unrolled_members(node, factor)
    if not chosen:
        return node
    options = node.band_get_ast_build_options()
    for member in chosen:
        options = options.union(
            isl.UnionSet(f"{{ unroll[{member}] }}", context=node.get_ctx())
        )
    return node.band_set_ast_build_options(options)


def unroll_schedule(schedule: isl.Schedule, factor: int) -> isl.Schedule:
    """`schedule` with its innermost loops marked for unrolling (see the module)."""
    root = map_bottom_up(schedule.get_root(), lambda n: _unroll_band(n, factor))
    return root.get_schedule()
