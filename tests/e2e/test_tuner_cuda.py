"""Tuning on a GPU: compile workers make the cubins, one process per GPU profiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from cuda_checks import needs_gpu

import tcir
from tcir.compiler.artifacts import target_architecture
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.tuner.space import SearchSpace
from tcir.tuner.tune import Tuner

EXAMPLES = Path(__file__).parents[2] / "examples"
SIZES = {"M": 37, "K": 29, "N": 45}


@needs_gpu
def test_tuning_on_the_gpu_keeps_a_cubin_for_it(tmp_path):
    import cupy

    from tcir.backends.cuda.runtime import device_architecture

    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    rng = np.random.default_rng(0)
    a = cupy.asarray(rng.standard_normal((37, 29), np.float32))
    b = cupy.asarray(rng.standard_normal((45, 29), np.float32))
    space = SearchSpace.build(tmm.definition, SIZES, "cuda", max_unroll=8)
    result = Tuner(
        tmm, [a, b], backend="cuda", candidates=12, population=6, workers=2, space=space,
        cache=tmp_path,
    ).run()  # fmt: skip
    assert len(result.outcomes) >= 6 and result.best_seconds <= result.default_seconds
    key = ProblemKey.of(tmm.definition, SIZES, target_architecture("cuda"))
    with CompilationCache(tmp_path) as cache:
        code = cache.get_code(key, result.best)
    assert code is not None and code.arch == device_architecture(0) and code.cubin
    c = tmm(a, b, options=result.best)
    np.testing.assert_allclose(cupy.asnumpy(c), cupy.asnumpy(a @ b.T), rtol=1e-4, atol=1e-4)
