"""Split-K on isl schedules (`tcir.polyhedral.split_k`) and its pass's errors."""

from __future__ import annotations

import islpy as isl
import pytest
from test_tiling import bands, respects, schedule

import tcir
from tcir.dialects.poly import BandOp
from tcir.polyhedral.split_k import split_k_schedule

# A matmul sum T (C(i, j) += A(i, k) * B(k, j)) tiled by 32x32x32: its tile
# band over its point band, and its dependences along k.
TILED = """{ domain: "{ T[i, j, k] : 0 <= i < 64 and 0 <= j < 40 and 0 <= k < 1000 }",
  child: { schedule: "[{ T[i, j, k] -> [(floor((i)/32))] }, { T[i, j, k] -> [(floor((j)/32))] }, { T[i, j, k] -> [(floor((k)/32))] }]",
    permutable: 1, coincident: [ 1, 1, 0 ],
    child: { schedule: "[{ T[i, j, k] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)] }, { T[i, j, k] -> [((k) mod 32)] }]",
      permutable: 1, coincident: [ 1, 1, 0 ] } } }"""
DEPENDENCES = isl.UnionMap("{ T[i, j, k] -> T[i, j, k + 1] : 0 <= i < 64 and 0 <= j < 40 and 0 <= k < 999 }")
REDUCTIONS = isl.UnionMap("{ T[i, j, k] -> T[k] }")


def test_slices_lead_and_each_sum_keeps_its_order():
    """32 k tiles in 3 slices of 11: the slice first, every instance once,
    and (run serially, as on the CPU) each element summed in k order."""
    result = split_k_schedule(schedule(TILED), REDUCTIONS, 3, DEPENDENCES)
    assert bands(result.get_root()) == [
        "[{ T[i, j, k] -> [(floor((k)/352))] }, { T[i, j, k] -> [(floor((i)/32))] }, { T[i, j, k] -> [(floor((j)/32))] }]",
        "[{ T[i, j, k] -> [(floor((k)/32))] }]",
        "[{ T[i, j, k] -> [((k) mod 32)] }]",
        "[{ T[i, j, k] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)] }]",
    ]
    outer = result.get_root().child(0)
    assert outer.band_get_permutable() and [outer.band_member_get_coincident(m) for m in range(3)] == [1, 1, 1]
    assert result.get_map().is_injective()
    assert respects(result, DEPENDENCES)
    slices = isl.UnionMap.from_union_pw_aff(outer.band_get_partial_schedule().get_union_pw_aff(0))
    assert slices.intersect_domain(result.get_domain()).range() == isl.UnionSet("{ [s] : 0 <= s <= 2 }")


def test_statements_that_are_no_atomic_sums_keep_their_bands():
    assert bands(split_k_schedule(schedule(TILED), isl.UnionMap("{ U[k] -> U[k] }"), 3, DEPENDENCES).get_root()) == bands(
        schedule(TILED).get_root()
    )
    assert split_k_schedule(schedule(TILED), REDUCTIONS, 1, DEPENDENCES).plain_is_equal(schedule(TILED))


TMM = """
tc.def @tmm(%A: !tc.tensor<f32, [M, K]>, %B: !tc.tensor<f32, [N, K]>) -> (%C: !tc.tensor<f32, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %kk in [0, K)) {
    %0 = tc.read %A[%m, %kk]
    %1 = tc.read %B[%n, %kk]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""


def test_symbolic_extents_are_left_alone():
    """Without specialized sizes, a slice's extent is no number: no split."""
    module = tcir.parse_ir(TMM)
    tcir.PassManager.parse("convert-tc-to-poly,poly-parallel-reduction{coincident-reductions=false}").run(module)
    before = [band.schedule.data for band in module.walk() if isinstance(band, BandOp)]
    tcir.PassManager.parse("poly-split-k{slices=4}").run(module)
    assert [band.schedule.data for band in module.walk() if isinstance(band, BandOp)] == before
    assert "atomic" in tcir.print_ir(module)


def test_slices_must_be_positive():
    module = tcir.parse_ir(TMM)
    with pytest.raises(tcir.TCError, match="poly-split-k: slices must be at least 1, got 0"):
        tcir.PassManager.parse("convert-tc-to-poly,poly-split-k{slices=0}").run(module)
