"""convert-tc-to-poly errors, dependences and scheduling strategies."""

from __future__ import annotations

import islpy as isl
import pytest
from test_poly_e2e import GATHER, MLP3, SGEMM

import tcir
from tcir.dialects.poly import BandOp, ScopOp
from tcir.polyhedral.dependences import compute_dependences
from tcir.polyhedral.scheduling import SchedulingStrategy, isl_options

SCONV = """
tc.def @sconv1d(%sh: i32, %I: !tc.tensor<f32, [H]>, %W: !tc.tensor<f32, [KH]>) -> (%O: !tc.tensor<f32, [(H - KH) floordiv sh + 1]>) {
  tc.comprehension %O[%h] "+=!" (%h in [0, (H - KH) floordiv sh + 1), %kh in [0, KH)) {
    %0 = tc.read %I[sh * %h + %kh]
    %1 = tc.read %W[%kh]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""


def scop_of(text: str, pipeline: str = "convert-tc-to-poly") -> ScopOp:
    module = tcir.parse_ir(text)
    tcir.PassManager.parse(pipeline).run(module)
    return next(op for op in module.walk() if isinstance(op, ScopOp))


def test_out_of_bounds_access_names_the_tensor() -> None:
    text = GATHER.replace("tc.read %I[%i, %j]", "tc.read %I[%i + 1, %j]")
    with pytest.raises(tcir.TCError, match="out-of-bounds access to 'I'"):
        scop_of(text)


def test_semi_affine_needs_specialization() -> None:
    with pytest.raises(tcir.TCError, match="not affine.*specialize"):
        scop_of(SCONV)
    scop = scop_of(SCONV, 'tc-specialize{sizes="sh=2"},convert-tc-to-poly')
    assert "S1[h, kh] -> I[2h + kh]" in scop.statements[1].reads.data


def test_flow_dependences_are_value_based() -> None:
    dependences = compute_dependences(scop_of(SGEMM))
    init_to_update = isl.UnionMap("[N, M, K] -> { S0[i, j] -> S1[i, j, 0] : 0 <= i < N and 0 <= j < K and M > 0 }")
    flow = dependences.flow.intersect_domain(isl.UnionSet("[N, M, K] -> { S0[i, j] }"))
    assert flow.is_equal(init_to_update.intersect_params(isl.Set("[N, M, K] -> { : N > 0 and M > 0 and K > 0 }")))


def test_isl_options_are_restored() -> None:
    ctx = isl.DEFAULT_CONTEXT
    before = ctx.get_schedule_whole_component()
    with isl_options(ctx, {"schedule_whole_component": 1 - before}):
        assert ctx.get_schedule_whole_component() == 1 - before
    assert ctx.get_schedule_whole_component() == before
    SchedulingStrategy("max").schedule(scop_of(SGEMM))
    assert ctx.get_max_operations() == 0
    assert ctx.get_schedule_whole_component() == before


def test_operation_limit_falls_back_to_the_canonical_tree() -> None:
    scop = scop_of(MLP3)
    root = SchedulingStrategy("max", max_operations=1).schedule(scop)
    assert str(root) == str(scop.schedule)


def test_reduction_members_are_never_coincident() -> None:
    scop = scop_of(MLP3, "convert-tc-to-poly,poly-schedule{fusion=min}")
    for band in (op for op in scop.walk() if isinstance(op, BandOp)):
        if "n)]" in band.schedule.data:
            assert band.coincident_flags == (False,)


def test_unknown_fusion_is_a_tc_error() -> None:
    with pytest.raises(tcir.TCError, match="unknown fusion 'most'"):
        scop_of(SGEMM, "convert-tc-to-poly,poly-schedule{fusion=most}")


COLUMN_SOFTMAX = """def col_softmax(float(B,N) X) -> (Y) {
  M(n) max=! X(b,n)
  E(b,n) = exp(X(b,n) - M(n))
  S(n) +=! E(b,n)
  Y(b,n) = E(b,n) / S(n)
}"""


@pytest.mark.parametrize(("rows", "whole"), [(64, True), (4096, False)])
def test_whole_component_attempt_only_on_short_loops(monkeypatch, rows: int, whole: bool) -> None:
    """isl's whole-component ILPs ignore the operation limit (a column-wise
    softmax of 4096 rows took a minute there): loops of over 1024 values
    skip that attempt; the schedule is still found (the clustered one)."""
    import tcir.polyhedral.scheduling as scheduling

    module = tcir.define(COLUMN_SOFTMAX).col_softmax.def_ir.module.clone()
    tcir.PassManager.parse(f'tc-specialize{{sizes="B={rows},N=64"}},convert-tc-to-poly').run(module)
    scop = next(op for op in module.walk() if isinstance(op, ScopOp))
    tried = []
    run = SchedulingStrategy._run
    monkeypatch.setattr(SchedulingStrategy, "_run", lambda self, c, options: tried.append(options) or run(self, c, options))
    assert isinstance(SchedulingStrategy("max").schedule(scop).child, BandOp | scheduling.SequenceOp)
    assert (scheduling._WHOLE in tried) == whole
