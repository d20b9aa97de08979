"""The `poly` dialect's ops from Python, and a scop's isl view."""

from __future__ import annotations

import islpy as isl
import pytest
from poly_helpers import parse, show
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import ParseError, VerifyException

from tcir.dialects.poly import (
    BandOp,
    DomainOp,
    FilterOp,
    ScopOp,
    SequenceOp,
    StmtOp,
)
from tcir.polyhedral.scop import (
    scop_context,
    scop_domain,
    scop_must_writes,
    scop_reads,
    scop_schedule,
    scop_writes,
    set_scop_schedule,
)

SGEMM = """
poly.scop @sgemm params [N, M, K] context "[N, M, K] -> { : N > 0 and M > 0 and K > 0 }" {
  poly.stmt @S domain "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K }" reads "{ }" writes "{ S[i, j] -> C[i, j] }" {
  ^bb0(%i: index, %j: index):
  }
  poly.stmt @T domain "[N, M, K] -> { T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" reads "{ T[i, j, k] -> C[i, j]; T[i, j, k] -> A[i, k]; T[i, j, k] -> B[k, j] }" may_writes "{ T[i, j, k] -> C[i, j] }" {
  ^bb0(%i: index, %j: index, %k: index):
  }
  poly.domain "[N, M, K] -> { S[i, j] : 0 <= i < N and 0 <= j < K; T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }" {
    poly.sequence {
      poly.filter "{ S[i, j] }" {
        poly.band "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]" permutable coincident = [1, 1]
      }
      poly.filter "{ T[i, j, k] }" {
        poly.band "[{ T[i, j, k] -> [(i)] }, { T[i, j, k] -> [(j)] }, { T[i, j, k] -> [(k)] }]" permutable coincident = [1, 1, 0]
      }
    }
  }
}
"""

T_DOMAIN = "[N, M, K] -> { T[i, j, k] : 0 <= i < N and 0 <= j < K and 0 <= k < M }"


def sgemm() -> ScopOp:
    scop = parse(SGEMM).body.block.first_op
    assert isinstance(scop, ScopOp)
    return scop


def test_text_round_trip_is_stable() -> None:
    text = show(parse(SGEMM))
    assert show(parse(text)) == text
    assert show(parse(show(parse(text), generic=True))) == text


def test_scop_accessors() -> None:
    scop = sgemm()
    assert scop.param_names == ["N", "M", "K"]
    assert [s.sym_name.data for s in scop.statements] == ["S", "T"]
    assert isinstance(scop.schedule, DomainOp)


def test_isl_view_of_scop() -> None:
    scop = sgemm()
    assert scop_context(scop).is_equal(
        isl.Set("[N, M, K] -> { : N > 0 and M > 0 and K > 0 }")
    )
    assert scop_domain(scop).is_equal(isl.UnionSet(scop.schedule.value))
    reads = scop_reads(scop)
    assert reads.is_equal(
        isl.UnionMap(
            "{ T[i, j, k] -> C[i, j]; T[i, j, k] -> A[i, k]; T[i, j, k] -> B[k, j] }"
        ).intersect_domain(isl.UnionSet(T_DOMAIN))
    )
    assert scop_writes(scop).is_equal(
        isl.UnionMap("{ S[i, j] -> C[i, j]; T[i, j, k] -> C[i, j] }").intersect_domain(
            scop_domain(scop)
        )
    )
    assert scop_must_writes(scop).is_equal(
        isl.UnionMap("{ S[i, j] -> C[i, j] }").intersect_domain(scop_domain(scop))
    )


def test_set_scop_schedule_replaces_the_tree() -> None:
    scop = sgemm()
    before = scop_schedule(scop)
    band = before.get_root().child(0).child(1).child(0)
    tiled = band.band_tile(isl.MultiVal("{ [32, 32, 32] }")).get_schedule()
    root = set_scop_schedule(scop, tiled)
    scop.verify()
    assert scop.schedule is root
    assert len([op for op in scop.body.block.ops if isinstance(op, DomainOp)]) == 1
    assert scop_schedule(scop).plain_is_equal(tiled)
    assert "mod 32" in show(scop)


def test_build_scop_from_python() -> None:
    body = Region(Block(arg_types=[IndexType()]))
    stmt = StmtOp("S0", "{ S0[i] : 0 <= i < 8 }", "{ }", "{ S0[i] -> O[i] }", body)
    band = BandOp("[{ S0[i] -> [(i)] }]", [True], permutable=True)
    tree = DomainOp(
        "{ S0[i] : 0 <= i < 8 }", SequenceOp([FilterOp("{ S0[i] }", band)])
    )
    scop = ScopOp("s", [], "{ : }", [stmt, tree])
    scop.verify()
    assert show(parse(show(scop)).body.block.first_op) == show(scop)


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (FilterOp("{ S0[i] : i < }"), '"{ S0[i] : i < }" is not a valid isl union set'),
        (BandOp("[{ S0[i] -> [(i)] }]", []), "expected 1 coincident flags, got 0"),
        (DomainOp("{ S0[i] }", BandOp("[]", [])), None),
    ],
)
def test_verifier_messages(
    op: DomainOp | FilterOp | BandOp, message: str | None
) -> None:
    if message is None:
        op.verify()
        return
    with pytest.raises(VerifyException) as error:
        op.verify()
    first_line = str(error.value).splitlines()[0]
    assert first_line.startswith(f"'{op.name}' op ")
    assert first_line.endswith(message)


def test_coincident_flags_must_be_zero_or_one() -> None:
    with pytest.raises(ParseError, match="expected a 0 or 1 flag"):
        parse(
            'poly.domain "{ S[i] }" {\n'
            '  poly.band "[{ S[i] -> [(i)] }]" coincident = [2]\n'
            "}"
        )
