"""Sinking of parallel point loops (the paper's imperfectly nested tiling).

A loop that carries no dependence (a coincident member) can be moved below
any other loop. After tiling, the point bands (those below a `point` mark) are
visited top-down; at each:

1. point bands directly below it (copies sunk from above) are joined into it
   when the joined band is still permutable, checked on the dependences not
   carried by the outer schedule. The joined band lists the band's
   non-coincident members, then the sunk members (outer loops first), then
   its own coincident members, so parallel loops end innermost;
2. unless it already sits on a leaf, its coincident members move down to the
   leaves of its subtree (`isl_schedule_node_band_sink`): below sequence and
   set nodes each child gets a copy restricted to its own statements, and
   each copy is marked as a point band again. Its other members stay.

All `point` marks are gone afterwards. For the paper's fused sgemm this gives
its Figure (d): the tile band over both statements, a sequence, the point
band of `S` alone, and for `T` the tile band of `k` over the point band of
`k, i, j`.
"""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.bands import (
    POINT_MARK,
    coincident,
    insert_band,
    is_band,
    is_leaf,
    is_permutable,
    is_point_mark,
    map_top_down,
    members,
)


def _join(node: isl.ScheduleNode, dependences: isl.UnionMap) -> isl.ScheduleNode:
    """Join band `node` with the marked point bands right below it while the
    result stays permutable; returns the (possibly new) band at `node`."""
    own, own_flags = members(node), coincident(node)
    sunk: list[isl.UnionPwAff] = []
    n_joined = 0
    below = node.child(0)
    while is_point_mark(below) and is_band(below.child(0)):
        candidate = members(below.child(0))
        if not is_permutable(node, own + sunk + candidate, dependences):
            break
        sunk += candidate
        n_joined += 1
        below = below.child(0).child(0)
    if not sunk:
        return node
    below = node.child(0)
    for _ in range(n_joined):
        below = below.delete().delete()
    node = below.parent().delete()
    stay = [k for k, flag in enumerate(own_flags) if not flag]
    move = [k for k, flag in enumerate(own_flags) if flag]
    functions = [own[k] for k in stay] + sunk + [own[k] for k in move]
    flags = [False] * len(stay) + [True] * (len(sunk) + len(move))
    return insert_band(node, functions, flags, permutable=True)


def _mark_copies(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Restrict each band sitting on a leaf below `node` (the copies
    `band_sink` left there) to the statements reaching it, and mark it as a
    point band."""

    def mark(n: isl.ScheduleNode) -> isl.ScheduleNode:
        if not is_band(n) or not is_leaf(n.child(0)) or is_point_mark(n.parent()):
            return n
        functions, flags = members(n), coincident(n)
        n = insert_band(n.delete(), functions, flags, bool(n.band_get_permutable()))
        return n.insert_mark(isl.Id(POINT_MARK, context=n.get_ctx()))

    return map_top_down(node, mark)


def _sink(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Move the coincident members of band `node` to the leaves of its
    subtree; returns the node at its position."""
    functions, flags = members(node), coincident(node)
    if is_leaf(node.child(0)) or not any(flags):
        return node
    node = node.delete()
    node = insert_band(
        node, [f for f, c in zip(functions, flags) if c], [True] * sum(flags), True
    )
    node = _mark_copies(node.band_sink())
    if not all(flags):
        stay = [f for f, c in zip(functions, flags) if not c]
        node = insert_band(node, stay, [False] * len(stay), permutable=True)
    return node


def _visit(node: isl.ScheduleNode, dependences: isl.UnionMap, sink: bool) -> isl.ScheduleNode:
    if not (is_point_mark(node) and is_band(node.child(0))):
        return node
    band = node.delete()
    return _sink(_join(band, dependences)) if sink else band


def sink_point_bands(schedule: isl.Schedule, dependences: isl.UnionMap, sink: bool = True) -> isl.Schedule:
    """`schedule` with its marked point bands joined and sunk (see the
    module); with `sink` False, the point bands stay where they are, unmarked."""
    root = map_top_down(schedule.get_root(), lambda n: _visit(n, dependences, sink))
    return root.get_schedule()
