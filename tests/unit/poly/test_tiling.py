"""Tiling, point-loop sinking and unrolling on isl schedules."""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.bands import POINT_MARK, member_extent
from tcir.polyhedral.sinking import sink_point_bands
from tcir.polyhedral.tiling import tile_schedule, tile_sizes
from tcir.polyhedral.unrolling import unroll_schedule

# The paper's fused sgemm (Figure (b)) and its dependences: S(i, j) writes
# O(i, j) before T(i, j, k) accumulates into it along k.
SGEMM = """{ domain: "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K; T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }",
  child: { schedule: "[{ S[i, j] -> [(i)]; T[i, j, k] -> [(i)] }, { S[i, j] -> [(j)]; T[i, j, k] -> [(j)] }]",
    permutable: 1, coincident: [ 1, 1 ],
    child: { sequence: [ { filter: "{ S[i, j] }" }, { filter: "{ T[i, j, k] }",
      child: { schedule: "[{ T[i, j, k] -> [(k)] }]", permutable: 1, coincident: [ 0 ] } } ] } } }"""
SGEMM_DEPENDENCES = isl.UnionMap(
    "[N, M, K] -> { S[i, j] -> T[i, j, 0] : 0 <= i < N and 0 <= j < K and M > 0; "
    "T[i, j, k] -> T[i, j, k + 1] : 0 <= i < N and 0 <= j < K and 0 <= k < M - 1 }"
)


def schedule(text: str) -> isl.Schedule:
    return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)


def respects(result: isl.Schedule, dependences: isl.UnionMap) -> bool:
    """Whether `result` runs every dependence's source before its sink."""
    order = result.get_map()
    timed = dependences.apply_domain(order).apply_range(order)
    space = isl.Set.from_union_set(timed.range()).get_space()
    return timed.is_subset(isl.UnionMap.from_map(isl.Map.lex_lt(space)))


def bands(node: isl.ScheduleNode) -> list[str]:
    """The partial schedules of the bands below `node`, depth first."""
    found: list[str] = []
    if node.get_type() == isl.schedule_node_type.band:
        found.append(node.band_get_partial_schedule().to_str())
    for k in range(node.n_children()):
        found += bands(node.child(k))
    return found


def test_tile_sizes_by_depth_with_clamping_and_untiled_members():
    tree = schedule(
        '{ domain: "{ S[i, j, k] : 0 <= i < 100 and 0 <= j < 20 and 0 <= k < 8 }", '
        'child: { schedule: "[{ S[i, j, k] -> [(i)] }, { S[i, j, k] -> [(j)] }]", permutable: 1, '
        'child: { schedule: "[{ S[i, j, k] -> [(k)] }]", permutable: 1 } } }'
    )
    outer = tree.get_root().child(0)
    assert tile_sizes(outer, [32, 64, 0]) == [32, 20]
    assert tile_sizes(outer, [0]) == [1, 1]
    assert tile_sizes(outer.child(0), [32, 64, 3]) == [3]
    assert tile_sizes(outer.child(0), [32, 64]) == [1]


def test_member_extent_is_none_for_symbolic_sizes():
    root = schedule(SGEMM).get_root().child(0)
    assert member_extent(root, 0) is None
    point = (
        tile_schedule(schedule(SGEMM), [32, 32]).get_root().child(0).child(0).child(0)
    )
    assert member_extent(point, 0) == 32


def test_tiling_marks_point_bands_and_keeps_the_order_valid():
    tiled = tile_schedule(schedule(SGEMM), [32, 32, 16])
    tile = tiled.get_root().child(0)
    mark = tile.child(0)
    assert mark.mark_get_id().get_name() == POINT_MARK
    point = mark.child(0)
    assert point.band_get_permutable() and point.band_member_get_coincident(1)
    assert "floor((i)/32)" in tile.band_get_partial_schedule().to_str()
    assert "(k) mod 16" in " ".join(bands(tiled.get_root()))
    assert respects(tiled, SGEMM_DEPENDENCES)
    assert tiled.get_domain().is_equal(schedule(SGEMM).get_domain())


def test_sinking_gives_the_papers_figure_d():
    sunk = sink_point_bands(
        tile_schedule(schedule(SGEMM), [32, 32, 32]), SGEMM_DEPENDENCES
    )
    assert respects(sunk, SGEMM_DEPENDENCES)
    sequence = sunk.get_root().child(0).child(0)
    assert sequence.get_type() == isl.schedule_node_type.sequence
    s_point = sequence.child(0).child(0)
    assert s_point.band_get_partial_schedule().to_str() == (
        "[N, M, K] -> [{ S[i, j] -> [((i) mod 32)] }, { S[i, j] -> [((j) mod 32)] }]"
    )
    t_point = sequence.child(1).child(0).child(0)
    assert t_point.band_n_member() == 3
    assert [t_point.band_member_get_coincident(k) for k in range(3)] == [0, 1, 1]
    assert "mark" not in sunk.to_str()


def test_point_bands_that_would_not_be_permutable_stay_apart():
    # S(t, i) reads A(i + 1) of the step before: distance (1, -1).
    tree = schedule(
        '{ domain: "[N, T] -> { S[t, i] : 0 <= t < T and 0 <= i < N }", '
        'child: { mark: "point", child: { schedule: "[{ S[t, i] -> [(t)] }]", permutable: 1, '
        'child: { mark: "point", child: { schedule: "[{ S[t, i] -> [(i)] }]", permutable: 1, '
        "coincident: [ 1 ] } } } } }"
    )
    dependences = isl.UnionMap(
        "[N, T] -> { S[t, i] -> S[t + 1, i - 1] : 0 <= t < T - 1 and 0 < i < N }"
    )
    result = sink_point_bands(tree, dependences)
    assert len(bands(result.get_root())) == 2
    assert respects(result, dependences)


def innermost_options(node: isl.ScheduleNode) -> list[str]:
    """The AST build options of the bands sitting on leaves below `node`."""
    if node.get_type() == isl.schedule_node_type.band and node.child(0).get_type() == (
        isl.schedule_node_type.leaf
    ):
        return [node.band_get_ast_build_options().to_str()]
    return [
        o for k in range(node.n_children()) for o in innermost_options(node.child(k))
    ]


def test_unrolling_is_bounded_by_the_product_of_extents():
    sunk = sink_point_bands(
        tile_schedule(schedule(SGEMM), [4, 4, 4]), SGEMM_DEPENDENCES
    )
    assert innermost_options(unroll_schedule(sunk, 3).get_root()) == ["{  }", "{  }"]
    assert innermost_options(unroll_schedule(sunk, 4).get_root()) == [
        "{ unroll[1] }",
        "{ unroll[2] }",
    ]
    assert innermost_options(unroll_schedule(sunk, 64).get_root()) == [
        "{ unroll[i0] : 0 <= i0 <= 1 }",
        "{ unroll[i0] : 0 <= i0 <= 2 }",
    ]
    assert "unroll" not in unroll_schedule(schedule(SGEMM), 1000).to_str()
