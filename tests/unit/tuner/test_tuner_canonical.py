"""Cache keys do not depend on the names of tensors, indices and sizes."""

from __future__ import annotations

from tuner_helpers import TMM, TMM_RENAMED, tmm

import tcir
from tcir.compiler.canonical import ProblemKey, canonical_tc


def test_alpha_renamed_defs_share_the_canonical_text():
    renamed = tcir.define(TMM_RENAMED).other.definition
    assert canonical_tc(renamed) == canonical_tc(tmm().definition)
    for name in ("tmm", "A", "kk", "M"):
        assert name not in canonical_tc(tmm().definition).split()


def test_different_computations_differ():
    base = canonical_tc(tmm().definition)
    for variant in (
        TMM.replace("*", "+"),
        TMM.replace("+=!", "max=!"),
        TMM.replace("float(M,K) A", "double(M,K) A"),
        TMM.replace("B(n,kk)", "B(n,kk) + 1"),
    ):
        assert canonical_tc(tcir.define(variant).tmm.definition) != base


def test_problem_key_covers_shapes_and_target():
    definition = tmm().definition
    key = ProblemKey.of(definition, {"M": 8, "K": 4, "N": 6}, "cpu x")
    renamed = tcir.define(TMM_RENAMED).other.definition
    assert ProblemKey.of(renamed, {"P": 8, "Q": 4, "R": 6}, "cpu x").digest == key.digest
    assert ProblemKey.of(definition, {"M": 8, "K": 4, "N": 7}, "cpu x").digest != key.digest
    assert ProblemKey.of(definition, {"M": 8, "K": 4, "N": 6}, "cpu y").digest != key.digest
    other_shapes = ProblemKey.of(definition, {"M": 9, "K": 4, "N": 6}, "cpu x")
    assert other_shapes.tc_digest == key.tc_digest
    assert key.kernel_digest("{}") != key.kernel_digest("null")
