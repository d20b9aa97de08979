"""Unrolling of innermost loops: fully, or partially by strip-mining.

`unroll_schedule(schedule, factor)`: for each innermost band (one with no
band below it: after tiling and sinking, the point bands), members are taken
from the innermost outwards while the product of their extents (their trip
counts, e.g. tile sizes) stays at most `factor`; each is marked `unroll[k]`
in the band's isl AST build options, so that isl's AST generator replicates
its body once per value (guarding the values partial tiles lack). The first
member that does not fit is unrolled partially where it is sequential (not
coincident) and the factor left allows it: strip-mined by the largest
divisor `d` of its extent within that factor (`k` becomes `floor(k/d)` and an
unrolled `k mod d`, in that order, so the band's order stays as it was).
Coincident members are left whole, for `poly-map-to-gpu` to deal to threads.
A member whose extent is unknown (symbolic) stops the walk.

`unroll_vector_steps(schedule, width)`: in each kernel of a mapped schedule,
the innermost sequential loop run by all threads of a block (its band has no
band below but the threads' own loops, below their mapping filters: the
point loop of a contraction's reduction) is strip-mined by `width` and its
`width` points unrolled, so that a thread's reads of `width` consecutive
elements of a shared buffer are adjacent in the code (`poly-vectorize`);
the loop over the vectors is marked `unroll` (tiled by at most
`HINTED_TILE` steps first where it has over `MAX_HINTED_STEPS`), a hint
(`#pragma unroll` in CUDA) that lets the compiler issue the shared loads of
later steps early without multiplying the IR.
"""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.ast_to_loops import UNROLL_MARK
from tcir.polyhedral.bands import is_band, map_bottom_up, member_extent
from tcir.polyhedral.gpu_mapping import KERNEL_MARK, maps_threads
from tcir.polyhedral.scheduling import isl_options

_STRIP_OPTIONS = {"tile_scale_tile_loops": 0, "tile_shift_point_loops": 1}
MAX_HINTED_STEPS, HINTED_TILE = 32, 16
"""Vector steps up to which their loop gets the unroll hint; longer loops
are tiled by a divisor of at most `HINTED_TILE` steps, the hint on the
tile's steps (a whole reduction's steps unrolled, a 1x1 convolution's 128
steps of 512 channels, each 32 products, took NVRTC 42 s to compile)."""


def _has_band_below(node: isl.ScheduleNode, per_thread: bool = True) -> bool:
    """Whether a band lies below `node`; with `per_thread` False, bands below
    a thread-mapping filter (the threads' own loops) do not count."""
    for child in (node.child(k) for k in range(node.n_children())):
        if not per_thread and maps_threads(child):
            continue
        if is_band(child) or _has_band_below(child, per_thread):
            return True
    return False


def largest_divisor(extent: int, limit: int) -> int:
    """The largest divisor of `extent` from 2 to `limit` (1 where none is)."""
    return next((d for d in range(min(extent, limit), 1, -1) if extent % d == 0), 1)


def _mark_unrolled(node: isl.ScheduleNode, chosen: list[int]) -> isl.ScheduleNode:
    options = node.band_get_ast_build_options()
    for member in chosen:
        options = options.union(isl.UnionSet(f"{{ unroll[{member}] }}", context=node.get_ctx()))
    return node.band_set_ast_build_options(options)


def _tiled(node: isl.ScheduleNode, factor: int) -> isl.ScheduleNode:
    """One-member band `node` tiled by `factor`: the loop over the tiles,
    above the loop over a tile's `factor` points (from 0)."""
    multi = isl.MultiVal.zero(node.band_get_space()).set_val(0, isl.Val.int_from_si(node.get_ctx(), factor))
    with isl_options(node.get_ctx(), _STRIP_OPTIONS):
        return node.band_tile(multi)


def strip_mine(node: isl.ScheduleNode, member: int, factor: int) -> isl.ScheduleNode:
    """Band `node` with `member` strip-mined by `factor`: the members before
    it, `floor(member/factor)`, an unrolled band of `member mod factor`, and
    the members after it, each a band of its own, in that order (the first
    returned). The split bands keep their coincident and permutable flags."""
    n = node.band_n_member()
    head = member > 0
    if head:
        node = node.band_split(member).child(0)
    if member < n - 1:
        node = node.band_split(1)
    node = _mark_unrolled(_tiled(node, factor).child(0), [0]).parent()
    return node.parent() if head else node


def unrolled_members(node: isl.ScheduleNode, factor: int) -> tuple[list[int], int]:
    """The members of band `node` to unroll fully within `factor` instances,
    innermost first, and the factor by which to unroll the next one outwards
    partially (1: none; see the module)."""
    chosen: list[int] = []
    instances = 1
    for member in reversed(range(node.band_n_member())):
        extent = member_extent(node, member)
        if extent is None:
            return chosen, 1
        if instances * extent > factor:
            if node.band_member_get_coincident(member):
                return chosen, 1
            return chosen, largest_divisor(extent, factor // instances)
        instances *= extent
        chosen.append(member)
    return chosen, 1


def _unroll_band(node: isl.ScheduleNode, factor: int) -> isl.ScheduleNode:
    if not is_band(node) or _has_band_below(node):
        return node
    chosen, partial = unrolled_members(node, factor)
    if chosen:
        node = _mark_unrolled(node, chosen)
    if partial > 1:
        node = strip_mine(node, node.band_n_member() - len(chosen) - 1, partial)
    return node


def unroll_schedule(schedule: isl.Schedule, factor: int) -> isl.Schedule:
    """`schedule` with its innermost loops marked for unrolling (see the module)."""
    root = map_bottom_up(schedule.get_root(), lambda n: _unroll_band(n, factor))
    return root.get_schedule()


def _in_kernel_above_threads(node: isl.ScheduleNode) -> bool:
    """Whether `node` is inside a kernel and above every thread-mapping filter."""
    while node.has_parent():
        node = node.parent()
        if maps_threads(node):
            return False
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() == KERNEL_MARK:
            return True
    return False


def _unroll_vector_step(node: isl.ScheduleNode, width: int) -> isl.ScheduleNode:
    if (
        not is_band(node)
        or node.is_subtree_anchored()  # copies below: a tile loop, not a point loop
        or _has_band_below(node, per_thread=False)
        or not _in_kernel_above_threads(node)
    ):
        return node
    last = node.band_n_member() - 1
    extent = member_extent(node, last)
    if node.band_member_get_coincident(last) or extent is None or extent <= width or extent % width:
        return node
    node = strip_mine(node, last, width)
    steps = node.child(0) if last else node  # the loop over the vectors: a hint to unroll it
    mark = isl.Id(UNROLL_MARK, context=node.get_ctx())
    if extent // width <= MAX_HINTED_STEPS:
        marked = steps.insert_mark(mark)
    else:  # tiled: the hint on groups of at most HINTED_TILE steps
        factor = largest_divisor(extent // width, HINTED_TILE)
        if factor == 1:
            return node
        marked = _tiled(steps, factor).child(0).insert_mark(mark).parent()
    return marked.parent() if last else marked


def unroll_vector_steps(schedule: isl.Schedule, width: int) -> isl.Schedule:
    """`schedule` with each kernel's innermost block-level sequential loop
    strip-mined by `width`, its points unrolled (see the module)."""
    if width == 1:
        return schedule
    root = map_bottom_up(schedule.get_root(), lambda n: _unroll_vector_step(n, width))
    return root.get_schedule()
