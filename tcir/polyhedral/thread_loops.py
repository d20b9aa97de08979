"""Per-thread loops of a mapped kernel over the thread's own points.

`poly-map-to-gpu` deals the values of a mapped band member round-robin to
the threads (`f = offset + step * (t + T * e)`), so below the mapping each
thread sees every `step * T`-th value of the member, starting at a value that
depends on its id `t`; isl's AST then iterates `for (c = 32 * by + ty; c <=
32 * by + 31; c += 8)`, a trip count that depends on `ty`. Here, in each band
at the thread level of a kernel (below a thread-mapping filter, including the
copy loops of `poly-promote`), a member whose values have a stride `S > 1`
once the parameters (block and thread ids among them) and the outer schedule
are fixed is scaled down to `floor(f / S)`: `for (c = 4 * by; c <= 4 * by +
3; c += 1)`, the statement's iterators recovered by isl (`32 * by + ty + 8 *
c`). For fixed outer values, all the values of such a member are `offset + S
* k` for one offset, on which `floor(f / S)` is strictly increasing; so the
band orders any two instances with equal outer values as before (the first
member where they differ still decides), every thread runs its instances in
the same order, and the schedule stays valid (barriers, block-level
statements above the thread mapping, keep their places).
Block-level bands (block loops, `for (c = 32 * bx; c < N; c += 96)`) keep
their members: a block's trip count depends on its id anyway, and isl writes
them best unscaled. A band whose subtree refers to its values (an extension
node below it, e.g. promotion copies) is not scaled either.

The analysis of a band is an optimization: where isl needs more than
`ISL_OPERATIONS` operations for it (stride detection can blow up on the
relations of some mappings), the band stays as it is, which is correct too.

The scaled members of a band that accesses private buffers iterate over the
thread's private elements: they are unrolled by isl's AST generator (when
their extent, for fixed outer values, is bounded and the band's unrolled
iterations stay within `limit`; then its other members whose bounds vary,
within what is left of `limit`), so that each access to a private buffer has
a constant index (the buffer stays in registers), also in partial tiles
where the number of a thread's points varies. Where those iterations reach
`COMPILER_UNROLLED` (a large register tile), the members whose trip count
is the same at every outer value (a full tile's: every thread has all its
points) stay loops instead: each becomes a band of its own below an
`UNROLL_MARK`, a loop with the unroll hint (`#pragma unroll`) whose private
indices isl writes in its iterator, constants once the CUDA compiler has
unrolled it. The code is the same after that compiler; what isl, the
passes after it and the printer handle is a loop instead of its copies
(a matmul's 8x8 tile: 64 instances of each statement). A band whose
members were scaled and unrolled before (the full tiles that
`poly-separate-full-tiles` splits off after this analysis) gets the same
choice where it is.

With `size_per_thread`, a thread-mapped band's groups are dealt round-robin
and the points of a group are a band of their own below it, not coincident
(`is_group_band`): its members are consecutive, so nothing scales them; where
it runs private statements, those of a fixed trip count are hinted loops
(or unrolled, without hints) and those whose bounds vary unrolled, and the
band above counts its points when it chooses between unrolling and hints.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
import math
from contextlib import contextmanager

import islpy as isl

from tcir.dialects.poly import ScopOp
from tcir.polyhedral.ast_to_loops import UNROLL_MARK
from tcir.polyhedral.bands import has_consecutive_values, statement_names
from tcir.polyhedral.gpu_mapping import KERNEL_MARK, is_group_band, maps_threads
from tcir.polyhedral.promotion.promote import private_buffers, private_statements

NodeType = isl.schedule_node_type

COMPILER_UNROLLED = 32
"""Iterations of a thread's loops over its private elements from which
those whose trip count is fixed stay loops that the CUDA compiler unrolls."""

ISL_OPERATIONS = 2_000_000
"""isl operations one band's analysis may take (normal kernels need far fewer)."""

HINT_OPERATIONS = 30_000
"""isl operations the test of a member's trip count may take (`_fixed_count`,
`_rehinted`); past them isl unrolls the member, as without the test."""


@contextmanager
def operation_budget(ctx: isl.Context, limit: int) -> Iterator[None]:
    """isl calls on `ctx` inside fail with `isl.Error` past `limit` operations."""
    outer = ctx.get_max_operations()  # a budget around this one resumes afresh
    ctx.reset_operations()
    ctx.set_max_operations(limit)
    try:
        yield
    finally:
        ctx.set_max_operations(outer)
        ctx.reset_operations()


def member_values(node: isl.ScheduleNode, outer: isl.UnionMap) -> list[isl.Map | None]:
    """For each member of band `node`, the relation from the outer schedule to
    its values (None when no instance reaches it); `outer` relates the
    instances reaching `node` to the outer schedule. (Not fixing the band's
    earlier members as well over-approximates each loop's values, so strides
    and extents stay sound, and keeps the relations small: isl's stride
    detection grows costly with every dimension.)"""
    partial = node.band_get_partial_schedule()
    instances, inverse = outer.domain(), outer.reverse()
    found: list[isl.Map | None] = []
    for k in range(node.band_n_member()):
        member = isl.UnionMap.from_union_pw_aff(partial.get_union_pw_aff(k))
        values = inverse.apply_range(member.intersect_domain(instances))
        found.append(None if values.is_empty() else isl.Map.from_union_map(values))
    return found


def _stride(values: isl.Map | None) -> int:
    """The least difference of two values at one domain point (0 when there
    are none, 1 when each point has one value). On the round-robin values of
    a mapped member (`offset + S * k`) it is their stride `S`; in general,
    any two values at one point differ by at least it, so `floor(f / S)`
    keeps their order (see the module). Found as a minimum of the
    differences: isl's stride detection (`get_range_stride_info`) took
    seconds per band on some mappings."""
    if values is None:
        return 0
    if has_consecutive_values(values):
        return 1
    differences = values.reverse().apply_range(values).deltas()
    positive = differences.lower_bound_val(isl.dim_type.set, 0, isl.Val.one(values.get_ctx()))
    if positive.is_empty():
        return 1
    least = positive.dim_min_val(0)
    return int(least.to_python()) if least.is_int() else 1


def _extent(values: isl.Map | None) -> int | None:
    """The most values, for a fixed domain point; None when unbounded."""
    if values is None:
        return 0
    # The largest difference of two values at one domain point (isl cannot
    # take the maximum of lexmax - lexmin where they involve integer divisions).
    top = values.reverse().apply_range(values).deltas().dim_max_val(0)
    return int(top.to_python()) + 1 if top.is_int() else None


def _varies(values: isl.Map | None) -> bool:
    """Whether a member's values depend on the outer schedule or the parameters."""
    if values is None:
        return False
    every = values.range().project_out_all_params()
    product = isl.Map.from_domain_and_range(values.domain(), every.align_params(values.get_space()))
    return not product.is_subset(values)


def _thread_band(
    node: isl.ScheduleNode, outer: isl.UnionMap, private: AbstractSet[str], limit: int, hint: bool
) -> tuple[isl.ScheduleNode, list[int]]:
    """Band `node` at the thread level with its strided members scaled down
    and, if it runs statements in `private`, those unrolled (see the module);
    with the members whose unrolling is left to the CUDA compiler."""
    if node.is_subtree_anchored():
        return node, []
    before = member_values(node, outer)
    strides = [_stride(v) for v in before]
    scaled = [k for k, stride in enumerate(strides) if stride > 1]
    if not scaled and is_group_band(node) and statement_names(outer.domain()) & private:
        return _group_loops(node, before, limit, hint)
    if not scaled:
        return _rehinted(node, outer, private) if hint else (node, [])
    ctx = node.get_ctx()
    factors = isl.MultiVal.zero(node.band_get_space())
    for k, stride in enumerate(strides):
        factors = factors.set_val(k, isl.Val.int_from_si(ctx, max(stride, 1)))
    node = node.band_scale_down(factors)
    statements = statement_names(outer.domain())
    if not statements & private:
        return node, []
    values = member_values(node, outer)
    iterations = 1
    unrolled: dict[int, int] = {}
    for k in reversed(scaled):
        extent = _extent(values[k])
        if extent is None or iterations * extent > limit:
            break
        iterations *= extent
        unrolled[k] = extent
    hinted = _hinted(values, unrolled, _group_points(node, outer)) if hint else []
    for k in unrolled:
        if k not in hinted:
            node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.unroll)
    # Members whose bounds vary (a register tile's rows that no thread id
    # deals, cut by a guard) within what is left: nvcc unrolls the others.
    return _unrolled_varying(node, values, limit, iterations, scaled), hinted


def _unrolled_varying(
    node: isl.ScheduleNode, values: list[isl.Map | None], limit: int, iterations: int, scaled: Sequence[int] = ()
) -> isl.ScheduleNode:
    """Band `node` with its members whose bounds vary (not in `scaled`)
    unrolled, innermost first, while the band's unrolled iterations (already
    `iterations`) stay within `limit`."""
    for k in reversed(range(node.band_n_member())):
        extent = _extent(values[k]) if k not in scaled and _varies(values[k]) else None
        if extent is not None and extent > 1 and iterations * extent <= limit:
            iterations *= extent
            node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.unroll)
    return node


def _group_points(node: isl.ScheduleNode, outer: isl.UnionMap) -> int:
    """The points of a group below band `node` (the product of its group
    band's extents), or 1 where there is none."""
    if node.n_children() != 1 or not is_group_band(node.child(0)):
        return 1
    partial = isl.UnionMap.from_multi_union_pw_aff(node.band_get_partial_schedule())
    below = outer.flat_range_product(partial.intersect_domain(outer.domain()))
    extents = [_extent(v) for v in member_values(node.child(0), below)]
    return math.prod(e or 1 for e in extents)


def _group_loops(
    node: isl.ScheduleNode, values: list[isl.Map | None], limit: int, hint: bool
) -> tuple[isl.ScheduleNode, list[int]]:
    """A group band (`is_group_band`) running private statements: members
    whose bounds vary (a partial tile's) unrolled by isl, those of a fixed
    trip count left to the CUDA compiler with `hint` (else unrolled too)."""
    node = _unrolled_varying(node, values, limit, 1)
    fixed = [
        k for k in range(node.band_n_member())
        if node.band_member_get_ast_loop_type(k) != isl.ast_loop_type.unroll
        and (extent := _extent(values[k])) is not None and extent > 1 and _fixed_count(values[k], extent)
    ]
    if hint:
        return node, fixed
    for k in fixed:
        node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.unroll)
    return node, []


def _hinted(values: list[isl.Map | None], unrolled: dict[int, int], below: int = 1) -> list[int]:
    """The members of `unrolled` (by member, its extent) left to the CUDA
    compiler: those of a fixed trip count in a large register tile (of
    `below` points more a point of the band: a group of `size_per_thread`)."""
    if math.prod(unrolled.values()) * below < COMPILER_UNROLLED:
        return []
    return [k for k, extent in unrolled.items() if _fixed_count(values[k], extent)]


def _rehinted(
    node: isl.ScheduleNode, outer: isl.UnionMap, private: AbstractSet[str]
) -> tuple[isl.ScheduleNode, list[int]]:
    """Band `node`, scaled and unrolled before (the full tiles that
    `poly-separate-full-tiles` split off), with its members of a fixed trip
    count left to the CUDA compiler where they now are."""
    unrolled = [
        k for k in range(node.band_n_member())
        if node.band_member_get_ast_loop_type(k) == isl.ast_loop_type.unroll
    ]
    if not unrolled or not statement_names(outer.domain()) & private:
        return node, []
    try:
        with operation_budget(node.get_ctx(), HINT_OPERATIONS):
            values = member_values(node, outer)
            extents = {k: _extent(values[k]) for k in unrolled}
    except isl.Error:  # too costly to tell: isl unrolls them
        return node, []
    if any(e is None for e in extents.values()):
        return node, []
    hinted = _hinted(values, {k: e for k, e in extents.items() if e is not None})
    for k in hinted:
        node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.default)
    return node, hinted


def _fixed_count(values: isl.Map | None, extent: int) -> bool:
    """Whether every domain point of `values` reaches `extent` consecutive
    values (a full tile's points of a thread: a loop of a constant trip count)."""
    if values is None:
        return False
    try:
        with operation_budget(values.get_ctx(), HINT_OPERATIONS):
            lowest = values.lexmin()
            return lowest.apply_range(isl.Map(f"{{ [v] -> [w] : v <= w < v + {extent} }}")).is_subset(values)
    except isl.Error:  # too costly to tell: isl unrolls the member
        return False


def _hint_unrolling(node: isl.ScheduleNode, hinted: AbstractSet[int]) -> isl.ScheduleNode:
    """Band `node` cut so that each member in `hinted` is a band of its own
    below an `UNROLL_MARK`: its loop keeps its iterator, and the CUDA
    compiler unrolls it (`#pragma unroll`). Returns the top of the cut band."""
    mark = isl.Id(UNROLL_MARK, context=node.get_ctx())
    first, depth = 0, 0
    while True:
        n = node.band_n_member()
        if first in hinted:
            if n > 1:
                node = node.band_split(1)
            node = node.insert_mark(mark).child(0)
            depth += 1
            cut = 1
        else:
            later = [k - first for k in hinted if first < k < first + n]
            if not later:
                break
            cut = min(later)
            node = node.band_split(cut)
        if cut == n:
            break
        node, first, depth = node.child(0), first + cut, depth + 1
    for _ in range(depth):
        node = node.parent()
    return node


def thread_loops(
    schedule: isl.Schedule, context: isl.Set, private: AbstractSet[str], limit: int, hint: bool = True
) -> isl.Schedule:
    """`schedule` (mapped, its mapping context in `context`) with the members
    of its thread-level bands scaled to per-thread loops, unrolled where they
    run the statements `private` that access private buffers, up to `limit`
    iterations per band, or with `hint` left to the CUDA compiler where they
    qualify (see the module)."""

    def visit(
        node: isl.ScheduleNode, outer: isl.UnionMap, in_kernel: bool, threads: bool
    ) -> isl.ScheduleNode:
        kind = node.get_type()
        if kind == NodeType.mark and node.mark_get_id().get_name() == KERNEL_MARK:
            in_kernel = True
        elif kind == NodeType.filter:
            outer = outer.intersect_domain(node.filter_get_filter())
            threads = threads or (in_kernel and maps_threads(node))
        elif kind == NodeType.extension:
            introduced = node.extension_get_extension().reverse()
            outer = outer.union(introduced.intersect_params(context))
        hinted: list[int] = []
        if kind == NodeType.band:
            if threads:
                try:
                    with operation_budget(node.get_ctx(), ISL_OPERATIONS):
                        node, hinted = _thread_band(node, outer, private, limit, hint)
                except isl.Error:  # too costly to analyse: keep the band
                    pass
            partial = isl.UnionMap.from_multi_union_pw_aff(node.band_get_partial_schedule())
            outer = outer.flat_range_product(partial.intersect_domain(outer.domain()))
        for k in range(node.n_children()):
            node = visit(node.child(k), outer, in_kernel, threads).parent()
        return _hint_unrolling(node, hinted) if hinted else node

    # isl's own prefix schedules cannot cross the extension nodes of promotion:
    # `visit` tracks the instances and their outer schedule down the tree.
    root = schedule.get_root()
    outer = isl.UnionMap.from_domain(root.domain_get_domain().intersect_params(context))
    return visit(root, outer, False, False).get_schedule()


def scop_thread_loops(scop: ScopOp, schedule: isl.Schedule, context: isl.Set, hint: bool = True) -> isl.Schedule:
    """`thread_loops` of `scop`'s mapped `schedule`: a thread's loops over its
    private elements unroll up to the largest private buffer (each access a
    constant index: the buffer is registers)."""
    limit = max((math.prod(t.get_shape()) for t in private_buffers(scop).values()), default=1)
    return thread_loops(schedule, context, private_statements(scop), limit, hint)
