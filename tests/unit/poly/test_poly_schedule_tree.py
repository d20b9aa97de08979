"""Round trips between `poly` schedule-tree ops and `islpy.Schedule`."""

from __future__ import annotations

import islpy as isl
import pytest
from poly_helpers import parse, show

from tcir.dialects.poly import BandOp, DomainOp, FilterOp, ScopOp, SequenceOp
from tcir.polyhedral.schedule_tree import (
    node_from_isl,
    schedule_from_isl,
    schedule_to_isl,
)

# The paper's canonical sgemm tree: a sequence of two filters, each with an
# identity band (S initializes C, T accumulates into it).
SGEMM_DOMAIN = (
    "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K; "
    "T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }"
)
SGEMM_CANONICAL = f"""{{ domain: "{SGEMM_DOMAIN}", child: {{ sequence: [
  {{ filter: "{{ S[i, j] }}", child: {{
     schedule: "[{{ S[i, j] -> [(i)] }}, {{ S[i, j] -> [(j)] }}]",
     permutable: 1, coincident: [ 1, 1 ] }} }},
  {{ filter: "{{ T[i, j, k] }}", child: {{
     schedule: "[{{ T[i, j, k] -> [(i)] }}, {{ T[i, j, k] -> [(j)] }}, {{ T[i, j, k] -> [(k)] }}]",
     permutable: 1, coincident: [ 1, 1, 0 ] }} }} ] }} }}"""

# Mark, context, set and extension nodes, and band options (loop types).
DECORATED = """{ domain: "[N] -> { A[i] : 0 <= i < N; B[i] : 0 <= i < N }",
  child: { context: "[N, b0] -> { : 0 <= b0 < 32 }",
  child: { mark: "kernel",
  child: { schedule: "[{ A[i] -> [(i)]; B[i] -> [(i)] }]", coincident: [ 1 ],
           options: "{ unroll[0] }",
  child: { extension: "{ [t] -> Copy[t, j] : 0 <= j < 4 }",
  child: { set: [ { filter: "{ A[i]; Copy[t, j] }" },
                  { filter: "{ B[i] }", child: { mark: "inner", child: { leaf } } } ] } } } } } }"""


def read(yaml: str) -> isl.Schedule:
    return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, yaml)


TREES = pytest.mark.parametrize(
    "yaml", [SGEMM_CANONICAL, DECORATED], ids=["sgemm", "decorated"]
)


@TREES
def test_isl_to_ops_to_isl_is_equal(yaml: str) -> None:
    schedule = read(yaml)
    root = schedule_from_isl(schedule)
    root.verify()
    back = schedule_to_isl(root)
    assert back.plain_is_equal(schedule)


def test_sgemm_schedule_map_survives_round_trip() -> None:
    schedule = read(SGEMM_CANONICAL)
    back = schedule_to_isl(schedule_from_isl(schedule))
    assert back.get_map().is_equal(schedule.get_map())


@TREES
def test_ops_to_isl_to_ops_is_identical(yaml: str) -> None:
    text = show(schedule_from_isl(read(yaml)))
    root = parse(text).body.block.first_op
    assert isinstance(root, DomainOp)
    assert show(schedule_from_isl(schedule_to_isl(root))) == text


def test_sgemm_canonical_tree_shape() -> None:
    root = schedule_from_isl(read(SGEMM_CANONICAL))
    assert isl.UnionSet(root.value).is_equal(isl.UnionSet(SGEMM_DOMAIN))
    sequence = root.child
    assert isinstance(sequence, SequenceOp)
    filters = sequence.children
    assert [f.value for f in filters if isinstance(f, FilterOp)] == [
        "{ S[i, j] }",
        "{ T[i, j, k] }",
    ]
    bands = [f.child for f in filters if isinstance(f, FilterOp)]
    assert all(isinstance(b, BandOp) and b.child is None for b in bands)
    assert [b.coincident_flags for b in bands if isinstance(b, BandOp)] == [
        (True, True),
        (True, True, False),
    ]


def test_sgemm_printed_tree() -> None:
    domain = isl.UnionSet(SGEMM_DOMAIN).to_str()
    assert show(schedule_from_isl(read(SGEMM_CANONICAL))) == (
        f'poly.domain "{domain}" {{\n'
        "  poly.sequence {\n"
        '    poly.filter "{ S[i, j] }" {\n'
        '      poly.band "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]" permutable '
        "coincident = [1, 1]\n"
        "    }\n"
        '    poly.filter "{ T[i, j, k] }" {\n'
        '      poly.band "[{ T[i, j, k] -> [(i)] }, { T[i, j, k] -> [(j)] }, '
        '{ T[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]\n'
        "    }\n"
        "  }\n"
        "}"
    )


def test_band_loop_type_survives_round_trip() -> None:
    node = read(SGEMM_CANONICAL).get_root().child(0).child(1).child(0)
    node = node.band_member_set_ast_loop_type(2, isl.ast_loop_type.unroll)
    root = schedule_from_isl(node.get_schedule())
    back = schedule_to_isl(root).get_root().child(0).child(1).child(0)
    assert back.band_member_get_ast_loop_type(2) == isl.ast_loop_type.unroll
    assert back.band_member_get_ast_loop_type(0) == isl.ast_loop_type.default


def test_isl_scheduler_output_round_trips() -> None:
    domain = isl.UnionSet(SGEMM_DOMAIN)
    validity = isl.UnionMap(
        "[N, M, K] -> { S[i, j] -> T[i, j, 0]; T[i, j, k] -> T[i, j, k + 1] }"
    ).intersect_domain(domain).intersect_range(domain)
    constraints = isl.ScheduleConstraints.on_domain(domain)
    constraints = constraints.set_validity(validity).set_coincidence(validity)
    schedule = constraints.compute_schedule()
    assert schedule_to_isl(schedule_from_isl(schedule)).plain_is_equal(schedule)


def test_subtree_and_leaf() -> None:
    root = read(SGEMM_CANONICAL).get_root()
    assert node_from_isl(root.child(0).child(0).child(0).child(0)) is None
    subtree = node_from_isl(root.child(0).child(1))
    assert isinstance(subtree, FilterOp) and isinstance(subtree.child, BandOp)


def test_guard_node_is_rejected() -> None:
    leaf = read(SGEMM_CANONICAL).get_root().child(0).child(0).child(0).child(0)
    guarded = leaf.insert_guard(isl.Set("[N, M, K] -> { [i, j] : N > 4 }"))
    with pytest.raises(ValueError, match="guard"):
        schedule_from_isl(guarded.get_schedule())


def test_scop_schedule_is_a_domain_op() -> None:
    module = parse(
        """
        poly.scop @s params [] context "{ : }" {
          poly.stmt @S0 domain "{ S0[i] : 0 <= i < 4 }" reads "{ }" writes "{ }" {
          ^bb0(%i: index):
          }
          poly.domain "{ S0[i] : 0 <= i < 4 }"
        }
        """
    )
    scop = module.body.block.first_op
    assert isinstance(scop, ScopOp)
    schedule = schedule_to_isl(scop.schedule)
    assert schedule.get_root().child(0).get_type() == isl.schedule_node_type.leaf
