"""Tuning on a Dask cluster: compile and profile jobs on its workers, results in our cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.compiler.artifacts import target_architecture
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.tools.tcir_tune import main as tcir_tune
from tcir.tuner.space import SearchSpace
from tcir.tuner.tune import Tuner

distributed = pytest.importorskip("distributed")

EXAMPLES = Path(__file__).parents[2] / "examples"
SIZES = {"M": 24, "K": 16, "N": 20}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def test_two_worker_cluster_tunes_into_the_callers_cache(client, tmp_path):
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((24, 16), np.float32), rng.standard_normal((20, 16), np.float32)
    space = SearchSpace.build(tmm.definition, SIZES, "cuda-sim", max_unroll=4)
    progress = []
    result = Tuner(
        tmm, [a, b], backend="cuda-sim", candidates=6, population=4, space=space,
        cluster=client, cache=tmp_path, on_progress=progress.append,
    ).run()  # fmt: skip
    assert progress[-1].measured == len(result.outcomes) == 6
    workers = {w for w in client.run(lambda: 1)}
    assert len(workers) == 2
    key = ProblemKey.of(tmm.definition, SIZES, target_architecture("cuda-sim"))
    with CompilationCache(tmp_path) as cache:
        assert len(cache.measurements(key)) == len(result.outcomes)
        assert cache.best(key) == (result.best, result.best_seconds)
    c = tmm(a, b, backend="cuda-sim", options=result.best)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4, atol=1e-4)


def test_tcir_tune_cluster_local(tmp_path, capsys):
    argv = [str(EXAMPLES / "tmm.tc"), "--entry", "tmm", "--sizes", "M=24,K=16,N=20"]
    argv += ["--candidates", "3", "--max-unroll", "4"]
    argv += ["--cluster", "local", "--cache-dir", str(tmp_path)]
    assert tcir_tune(argv) == 0
    assert "best 3 of 3 measured" in capsys.readouterr().out


def test_unreachable_scheduler_is_a_user_error(capsys):
    argv = [str(EXAMPLES / "tmm.tc"), "--entry", "tmm", "--sizes", "M=4,K=4,N=4"]
    with pytest.raises(SystemExit) as exit:
        tcir_tune(argv + ["--cluster", "tcp://127.0.0.1:9"])
    assert exit.value.code == 1
    assert "cannot connect to the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err
