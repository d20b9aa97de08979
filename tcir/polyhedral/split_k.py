"""Split-K: the k tiles of atomic sums dealt to slices of blocks.

An atomic sum (a `+=` whose partial sums `poly-parallel-reduction` marked
for combination by atomic adds) may run its reduction loop in any order and
in pieces. In the outermost band of such a sum, the outermost non-coincident
member that depends only on the statement's reduction dimensions (the loop
over k tiles after tiling, or the k loop itself untiled) takes `E` values
from `lo`; a new first member

    floor((member - lo) / ceil(E / slices))

numbers the slice each value falls in. It is coincident, so that mapping
gives its values to blocks as the output tile members after it. The band is
split before the k member: the block-mapped band is (slice, output tiles)
and the k member and those after it form the band below, a loop of each
block over its slice's k tiles, like the k tile band of a fused matmul, so
that promotion keeps the private accumulators across it and the shared
copies inside it. Below that, a point band on a leaf that has coincident
members outside non-coincident ones (`[m mod 32, n mod 32, k mod 32]`)
becomes a band of the latter over one of the former, so that each thread
loops over its k points outside its output points (its register tile).

The bands stay permutable where they were and every dependence they do not
carry goes forward along every member (checked with isl); the slice member
is monotone in the k member, so a permutable band stays one. Bands of
statements that are not atomic sums, members with one value and members
whose extent is not a known number (symbolic sizes) are left alone.
"""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.bands import (
    coincident,
    insert_band,
    is_band,
    is_leaf,
    is_permutable,
    map_top_down,
    member_range,
    members,
)


def _reduction_member(
    node: isl.ScheduleNode, reductions: isl.UnionMap
) -> tuple[int, tuple[int, int]] | None:
    """The outermost non-coincident member of band `node` that depends only
    on the reduction coordinates (`reductions`: instance -> them) of the
    instances reaching it, and takes several values; with its value range."""
    domain = node.get_domain()
    by_reduction = reductions.intersect_domain(domain).reverse()
    for member, function in enumerate(members(node)):
        if node.band_member_get_coincident(member):
            continue
        values = isl.UnionMap.from_union_pw_aff(function).intersect_domain(domain)
        bounds = member_range(node, member)
        if (
            by_reduction.apply_range(values).is_single_valued()
            and bounds is not None
            and bounds[1] > bounds[0]
        ):
            return member, bounds
    return None


def _split_band(
    node: isl.ScheduleNode, reductions: isl.UnionMap, slices: int, dependences: isl.UnionMap
) -> isl.ScheduleNode:
    """Band `node` with a leading slice member, where it is a band of atomic
    sums with a reduction member to split (see the module); returns the
    band at `node`'s position."""
    if not node.get_domain().is_subset(reductions.domain()):
        return node
    found = _reduction_member(node, reductions)
    if found is None:
        return node
    member, (low, high) = found
    chunk = -(-(high - low + 1) // slices)
    functions, flags = members(node), coincident(node)
    ctx = node.get_ctx()
    value = functions[member]
    if low != 0:
        value = value.sub(isl.UnionPwAff.val_on_domain(value.domain(), isl.Val.int_from_si(ctx, low)))
    slice_member = value.scale_down_val(isl.Val.int_from_si(ctx, chunk)).floor()
    functions = [slice_member, *functions]
    permutable = bool(node.band_get_permutable()) and is_permutable(node, functions, dependences)
    node = insert_band(node.delete(), functions, [True, *flags], permutable)
    node = node.band_split(member + 1)
    return map_top_down(node.child(0), _serial_members_first).parent()


def _serial_members_first(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """A band on a leaf (the point band) whose coincident members are not
    all innermost becomes its other members over its coincident ones, so
    that a thread runs its k points outside its output points (as in a
    fused matmul's point band); returns the band at `node`'s position."""
    if not is_band(node) or not is_leaf(node.child(0)):
        return node
    functions, flags = members(node), coincident(node)
    if flags == sorted(flags):  # coincident members innermost already
        return node
    permutable = bool(node.band_get_permutable())
    inner = [f for f, flag in zip(functions, flags) if flag]
    outer = [f for f, flag in zip(functions, flags) if not flag]
    node = insert_band(node.delete(), inner, [True] * len(inner), permutable)
    return insert_band(node, outer, [False] * len(outer), permutable)


def split_k_schedule(
    schedule: isl.Schedule, reductions: isl.UnionMap, slices: int, dependences: isl.UnionMap
) -> isl.Schedule:
    """`schedule` with the outermost band of each atomic sum split into
    `slices` slices (see the module). `reductions` maps each instance of
    an atomic sum to its reduction coordinates (a tuple named after its
    statement); `dependences` are the scop's validity dependences."""
    if slices <= 1:
        return schedule

    def visit(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if is_band(node):
            return _split_band(node, reductions, slices, dependences)
        for position in range(node.n_children()):
            node = visit(node.child(position)).parent()
        return node

    return visit(schedule.get_root()).get_schedule()
