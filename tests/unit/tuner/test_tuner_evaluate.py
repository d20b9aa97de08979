"""The evaluator's scheduling: failures, timeouts and the deadline fail candidates, not the tuner."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from tuner_helpers import SIZES, tmm

import tcir
from tcir.tuner.evaluate import Evaluator
from tcir.tuner.executors import LocalExecutors
from tcir.tuner.jobs import Benchmark, Problem

FAST = tcir.MappingOptions(unroll=1)
SLOW = tcir.MappingOptions(unroll=2)
BROKEN = tcir.MappingOptions(unroll=4)


class FakeExecutors:
    """Threads: compiling returns the options' unroll factor as the
    'artifact'; SLOW takes `slow_s` to compile, BROKEN fails to compile."""

    def __init__(self, slow_s: float = 0.0, slots: int = 2):
        self.compile_slots, self.devices = slots, 1
        self.slow_s = slow_s
        self.pool = ThreadPoolExecutor(4)
        self.release = threading.Event()
        self.compiled: list[int] = []

    def compile(self, options_json: str) -> Future[dict[str, Any]]:
        return self.pool.submit(self._compile, tcir.MappingOptions.from_json(options_json))

    def _compile(self, options: tcir.MappingOptions) -> dict[str, Any]:
        if options.unroll == BROKEN.unroll:
            raise ValueError("no code for you")
        if options.unroll == SLOW.unroll:
            self.release.wait(self.slow_s)
        self.compiled.append(options.unroll)
        return {"unroll": options.unroll}

    def profile(self, device: int, artifact_json: dict[str, Any], cutoff: float) -> Future[float]:
        return self.pool.submit(lambda: artifact_json["unroll"] * 1e-3)

    def close(self) -> None:
        self.release.set()
        self.pool.shutdown()


@pytest.fixture(autouse=True)
def artifacts_are_plain(monkeypatch):
    monkeypatch.setattr("tcir.tuner.evaluate.artifact_from_json", lambda data: FakeArtifact(data))


class FakeArtifact:
    def __init__(self, data: dict[str, Any]):
        self.data = data

    def to_json(self) -> dict[str, Any]:
        return self.data


def test_failures_fail_their_candidate_only():
    with Evaluator(FakeExecutors(), "cuda-sim") as evaluator:
        outcomes = evaluator.evaluate([FAST, BROKEN, SLOW])
    assert [o.seconds for o in outcomes] == [1e-3, None, 2e-3]
    assert outcomes[1].error == "compile: ValueError: no code for you"
    assert evaluator.best == 1e-3


def test_a_late_job_times_out_and_the_others_go_on():
    seen = []
    with Evaluator(FakeExecutors(slow_s=30), "cuda-sim", timeout=0.5) as evaluator:
        begin = time.monotonic()
        outcomes = evaluator.evaluate([SLOW, FAST], seen.append)
    assert time.monotonic() - begin < 5
    assert outcomes[0].error == "compile: timed out after 0.5 s"
    assert outcomes[1].seconds == 1e-3
    assert {o.options.unroll for o in seen} == {1, 2}


def test_the_deadline_stops_everything():
    executors = FakeExecutors(slow_s=30, slots=1)
    with Evaluator(executors, "cuda-sim", timeout=60) as evaluator:
        begin = time.monotonic()
        outcomes = evaluator.evaluate([SLOW, FAST], deadline=time.monotonic() + 0.5)
    assert time.monotonic() - begin < 5
    assert outcomes == []  # neither finished; FAST was never started
    assert executors.compiled == [SLOW.unroll]  # SLOW ran on, released at close


def test_cpu_profiles_only_while_nothing_compiles():
    executors = FakeExecutors(slow_s=0.5)
    order: list[str] = []
    profile = executors.profile

    def logged_profile(*args: Any) -> Future[float]:
        order.append(f"profile with {len(executors.compiled)} compiled")
        return profile(*args)

    executors.profile = logged_profile
    with Evaluator(executors, "cpu") as evaluator:
        evaluator.evaluate([FAST, SLOW])
    assert order == ["profile with 2 compiled"] * 2


def test_local_pools_compile_and_profile_a_real_candidate(monkeypatch):
    monkeypatch.undo()  # real artifacts
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZES["M"], SIZES["K"])).astype(np.float32)
    b = rng.standard_normal((SIZES["N"], SIZES["K"])).astype(np.float32)
    wrong = np.zeros((SIZES["M"], SIZES["N"]))
    expected = (a.astype(np.float64) @ b.T.astype(np.float64),)
    for reference, good in ((expected, True), ((wrong,), False)):
        problem = Problem(tmm().definition, SIZES, "cpu")
        benchmark = Benchmark(problem, [a, b], list(reference))
        with Evaluator(LocalExecutors(benchmark, workers=1), "cpu") as evaluator:
            (outcome,) = evaluator.evaluate([tcir.MappingOptions(tile=[2, 2, 2])])
        if good:
            assert outcome.error is None and 0 < outcome.seconds < 1
        else:
            assert outcome.error.startswith("run: CandidateError: wrong result: C")


def test_a_crashing_worker_fails_its_candidate(monkeypatch):
    monkeypatch.undo()
    problem = Problem(tmm().definition, SIZES, "cpu")
    executors = LocalExecutors(Benchmark(problem, [], []), workers=1)
    try:
        crash = executors._compilers.schedule(os._exit, (3,))
        with pytest.raises(Exception) as caught:
            crash.result(timeout=60)
        from tcir.tuner.evaluate import describe

        assert describe(caught.value) == "worker crashed (exit code 3)"
        again = executors.compile(tcir.MappingOptions(tile=[2, 2, 2]).to_json())
        assert again.result(timeout=120)["backend"] == "cpu"  # the pool replaced the worker
    finally:
        executors.close()


def test_a_straggling_compile_is_cut_once_its_batch_is_done(monkeypatch):
    monkeypatch.setattr("tcir.tuner.evaluate.STRAGGLER_MIN_S", 0.5)
    candidates = [tcir.MappingOptions(unroll=1, tile=[k]) for k in range(1, 8)] + [SLOW]
    with Evaluator(FakeExecutors(slow_s=30, slots=8), "cuda-sim", timeout=60) as evaluator:
        begin = time.monotonic()
        outcomes = evaluator.evaluate(candidates)
    assert time.monotonic() - begin < 5
    assert [o.seconds for o in outcomes[:7]] == [1e-3] * 7
    assert outcomes[7].error == "compile: timed out after 0.5 s, far behind the rest of its batch"
