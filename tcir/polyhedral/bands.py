"""Band surgery on isl schedule trees, shared by tiling, sinking, unrolling and split-K.

isl schedule nodes are values: every edit returns a node of a new tree at the
same position, so the helpers here take a node and return the edited node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import islpy as isl

POINT_MARK = "point"
"""The mark `poly-tile` puts above each point band; `poly-sink` consumes it."""


def statement_names(instances: isl.UnionSet) -> set[str]:
    """The names of the statements that `instances` has instances of."""
    sets = instances.get_set_list()
    return {sets.get_at(k).get_tuple_name() for k in range(sets.n_set())}

NodeEdit = Callable[[isl.ScheduleNode], isl.ScheduleNode]


def is_band(node: isl.ScheduleNode) -> bool:
    return node.get_type() == isl.schedule_node_type.band


def is_leaf(node: isl.ScheduleNode) -> bool:
    return node.get_type() == isl.schedule_node_type.leaf


def is_point_mark(node: isl.ScheduleNode) -> bool:
    return (
        node.get_type() == isl.schedule_node_type.mark
        and node.mark_get_id().get_name() == POINT_MARK
    )


def map_top_down(node: isl.ScheduleNode, edit: NodeEdit) -> isl.ScheduleNode:
    """Apply `edit` to `node`, then to the descendants of the edited node
    (parents before children); `edit` returns a node at the position it got."""
    node = edit(node)
    for position in range(node.n_children()):
        node = map_top_down(node.child(position), edit).parent()
    return node


def map_bottom_up(node: isl.ScheduleNode, edit: NodeEdit) -> isl.ScheduleNode:
    """Apply `edit` to the descendants of `node`, children before parents,
    then to `node`; `edit` returns a node at the position it got."""
    for position in range(node.n_children()):
        node = map_bottom_up(node.child(position), edit).parent()
    return edit(node)


def members(node: isl.ScheduleNode) -> list[isl.UnionPwAff]:
    """The affine functions of the members of band `node`."""
    partial = node.band_get_partial_schedule()
    return [partial.get_union_pw_aff(k) for k in range(node.band_n_member())]


def coincident(node: isl.ScheduleNode) -> list[bool]:
    """The coincident flags of the members of band `node`."""
    return [
        bool(node.band_member_get_coincident(k)) for k in range(node.band_n_member())
    ]


def insert_band(
    node: isl.ScheduleNode,
    functions: Sequence[isl.UnionPwAff],
    flags: Sequence[bool],
    permutable: bool,
) -> isl.ScheduleNode:
    """Insert above `node` a band with members `functions` (restricted to the
    statements reaching `node`) and coincident `flags`; returns the new band."""
    statements = node.get_domain().universe()
    partial = isl.MultiUnionPwAff.from_union_pw_aff(functions[0])
    for function in functions[1:]:
        partial = partial.flat_range_product(
            isl.MultiUnionPwAff.from_union_pw_aff(function)
        )
    node = node.insert_partial_schedule(partial.intersect_domain(statements))
    node = node.band_set_permutable(int(permutable))
    for k, flag in enumerate(flags):
        node = node.band_member_set_coincident(k, int(flag))
    return node


def _member_values(node: isl.ScheduleNode, member: int) -> isl.UnionSet:
    """The values member `member` of band `node` takes over the instances reaching it."""
    function = node.band_get_partial_schedule().get_union_pw_aff(member)
    return isl.UnionMap.from_union_pw_aff(function.intersect_domain(node.get_domain())).range()


def value_bounds(values: isl.UnionSet) -> tuple[int, int] | None:
    """The least and greatest of some one-dimensional `values`; None when a
    bound is unknown (symbolic)."""
    value_set = isl.Set.from_union_set(values)
    low, high = value_set.dim_min_val(0), value_set.dim_max_val(0)
    if not (low.is_int() and high.is_int()):
        return None
    return low.to_python(), high.to_python()


def member_range(node: isl.ScheduleNode, member: int) -> tuple[int, int] | None:
    """The least and greatest value of member `member` of band `node` over
    the instances reaching it, for any parameter values; None when no
    instance reaches it or a bound is unknown (symbolic)."""
    values = _member_values(node, member)
    return None if values.is_empty() else value_bounds(values)


def member_extent(node: isl.ScheduleNode, member: int) -> int | None:
    """How many values member `member` of band `node` takes over the instances
    reaching it, for any parameter values; None when that is unbounded."""
    values = _member_values(node, member)
    if values.is_empty():
        return 0
    bounds = value_bounds(values)
    return None if bounds is None else bounds[1] - bounds[0] + 1


def is_permutable(
    node: isl.ScheduleNode, functions: Sequence[isl.UnionPwAff], dependences: isl.UnionMap
) -> bool:
    """Whether a band at `node` with members `functions` would be permutable:
    every dependence the outer schedule does not carry goes forward (or
    nowhere) along every member."""
    domain = node.get_domain()
    prefix = node.get_prefix_schedule_union_map().intersect_domain(domain)
    live = (
        dependences.intersect_domain(domain)
        .intersect_range(domain)
        .intersect(prefix.apply_range(prefix.reverse()))
    )
    for function in functions:
        value = isl.UnionMap.from_union_pw_aff(function)
        distances = live.apply_domain(value).apply_range(value).deltas()
        if (
            not distances.is_empty()
            and isl.Set.from_union_set(distances).dim_min_val(0).is_neg()
        ):
            return False
    return True


def has_consecutive_values(values: isl.Map) -> bool:
    """Whether some domain point of `values` (`{ [p] -> [v] }`) reaches two
    consecutive values: then their stride is 1, found without isl's stride
    detection (costly on the relations of mapped kernels)."""
    return not values.intersect(values.apply_range(isl.Map("{ [v] -> [v + 1] }"))).is_empty()
