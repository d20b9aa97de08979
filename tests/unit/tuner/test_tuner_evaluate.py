"""The evaluator's scheduling: every compile slot kept busy; failures,
timeouts and the deadline fail candidates, not the tuner."""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from tuner_helpers import SIZES, tmm

import tcir
from tcir.tuner.evaluate import Evaluator, Outcome
from tcir.tuner.executors import LocalExecutors
from tcir.tuner import jobs
from tcir.tuner.jobs import Benchmark, Problem

FAST = tcir.MappingOptions(unroll=1)
SLOW = tcir.MappingOptions(unroll=2)
BROKEN = tcir.MappingOptions(unroll=4)


class FakeExecutors:
    """Threads: compiling returns the options' unroll factor as the
    'artifact'; SLOW takes `slow_s` to compile, BROKEN fails to compile,
    any other takes `compile_s`."""

    def __init__(self, slow_s: float = 0.0, slots: int = 2, compile_s: float = 0.0):
        self.compile_slots, self.devices = slots, 1
        self.slow_s, self.compile_s = slow_s, compile_s
        self.pool = ThreadPoolExecutor(slots + 2)
        self.release = threading.Event()
        self.compiled: list[int] = []

    def compile(self, options_json: str) -> Future[dict[str, Any]]:
        return self.pool.submit(self._compile, tcir.MappingOptions.from_json(options_json))

    def _compile(self, options: tcir.MappingOptions) -> dict[str, Any]:
        if options.unroll == BROKEN.unroll:
            raise ValueError("no code for you")
        self.release.wait(self.slow_s if options.unroll == SLOW.unroll else self.compile_s)
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


def evaluate(
    evaluator: Evaluator, candidates: Iterable[tcir.MappingOptions], deadline: float | None = None
) -> tuple[list[Outcome], bool]:
    """The outcomes of `candidates`, in the order they came, and whether the run finished."""
    outcomes: list[Outcome] = []
    finished = evaluator.run(candidates, outcomes.append, deadline)
    return outcomes, finished


def numbered(start: int = 1) -> Iterable[tcir.MappingOptions]:
    """Endless distinct candidates that compile normally (tile sizes 1, 2, ...)."""
    return (tcir.MappingOptions(unroll=1, tile=[k]) for k in itertools.count(start))


def test_failures_fail_their_candidate_only():
    with Evaluator(FakeExecutors(), "cuda-sim") as evaluator:
        outcomes, finished = evaluate(evaluator, [FAST, BROKEN, SLOW])
    assert finished
    outcomes.sort(key=lambda o: [FAST, BROKEN, SLOW].index(o.options))
    assert [o.seconds for o in outcomes] == [1e-3, None, 2e-3]
    assert outcomes[1].error == "compile: ValueError: no code for you"
    assert evaluator.best == 1e-3


def test_a_late_job_times_out_and_the_others_go_on():
    with Evaluator(FakeExecutors(slow_s=30), "cuda-sim", timeout=0.5) as evaluator:
        begin = time.monotonic()
        outcomes, _ = evaluate(evaluator, [SLOW, FAST])
    assert time.monotonic() - begin < 5
    assert [(o.options, o.seconds) for o in outcomes] == [(FAST, 1e-3), (SLOW, None)]
    assert outcomes[1].error == "compile: timed out after 0.5 s"


def test_the_deadline_stops_everything():
    executors = FakeExecutors(slow_s=30, slots=1)
    with Evaluator(executors, "cuda-sim", timeout=60) as evaluator:
        begin = time.monotonic()
        outcomes, finished = evaluate(evaluator, [SLOW, FAST], deadline=time.monotonic() + 0.5)
    assert time.monotonic() - begin < 5
    assert outcomes == [] and not finished  # neither finished; FAST was never started
    assert executors.compiled == [SLOW.unroll]  # SLOW ran on, released at close


def test_the_deadline_is_kept_within_one_candidate():
    """Endless candidates of 0.3 s each: the run ends at the deadline, not
    after the candidates running then."""
    with Evaluator(FakeExecutors(slots=2, compile_s=0.3), "cuda-sim") as evaluator:
        begin = time.monotonic()
        outcomes, finished = evaluate(evaluator, numbered(), deadline=begin + 1.0)
        elapsed = time.monotonic() - begin
    assert not finished and 1.0 <= elapsed < 1.3
    assert 4 <= len(outcomes) <= 6


def test_every_compile_slot_stays_busy():
    """Compiles of fixed length: 4 slots measure about 4 times as many
    candidates as 1 slot in the same time, and the slots are busy all along."""
    counts = {}
    for slots in (1, 4):
        with Evaluator(FakeExecutors(slots=slots, compile_s=0.1), "cuda-sim") as evaluator:
            outcomes, _ = evaluate(evaluator, numbered(), deadline=time.monotonic() + 1.5)
        counts[slots] = len(outcomes)
        assert evaluator.usage.compile_busy > 0.9
    assert 10 <= counts[1] <= 15
    assert counts[4] >= 3.5 * counts[1]


def test_a_slow_compile_holds_up_no_other_slot():
    """No generation barrier: while one slot compiles a slow candidate, the
    other takes candidate after candidate."""
    candidates = itertools.chain([SLOW], numbered())
    with Evaluator(FakeExecutors(slow_s=1.0, slots=2, compile_s=0.05), "cuda-sim") as evaluator:
        outcomes, _ = evaluate(evaluator, candidates, deadline=time.monotonic() + 1.5)
    assert outcomes[0].options != SLOW and SLOW in [o.options for o in outcomes]
    assert len(outcomes) > 15


def test_cpu_profiles_only_while_nothing_compiles():
    executors = FakeExecutors(slow_s=0.5)
    order: list[str] = []
    profile = executors.profile

    def logged_profile(*args: Any) -> Future[float]:
        order.append(f"profile with {len(executors.compiled)} compiled")
        return profile(*args)

    executors.profile = logged_profile
    with Evaluator(executors, "cpu") as evaluator:
        evaluate(evaluator, [FAST, SLOW])
    assert order == ["profile with 2 compiled"] * 2


def test_cpu_profiles_in_batches_and_never_while_compiling(monkeypatch):
    """On the CPU, compiles and profiles never overlap; the artifacts are
    profiled in batches, of one per compile slot first, then doubling up to
    `CPU_BATCH_PER_SLOT` per slot (the last one smaller), and every candidate
    is measured."""
    monkeypatch.setattr("tcir.tuner.evaluate.CPU_BATCH_PER_SLOT", 3)
    executors = FakeExecutors(slots=2, compile_s=0.02)
    events: list[str] = []
    compile, profile = executors.compile, executors.profile

    def logged(kind, submit):
        def call(*args: Any) -> Future:
            future = submit(*args)
            events.append(f"{kind} start")
            future.add_done_callback(lambda _: events.append(f"{kind} end"))
            return future

        return call

    executors.compile = logged("compile", compile)
    executors.profile = logged("profile", profile)
    with Evaluator(executors, "cpu") as evaluator:
        outcomes, finished = evaluate(evaluator, (tcir.MappingOptions(tile=[k]) for k in range(1, 16)))
    assert finished and len(outcomes) == 15
    running = {"compile": 0, "profile": 0}
    batches, last = [], None
    for event in events:
        kind, what = event.split()
        running[kind] += 1 if what == "start" else -1
        assert not (running["compile"] and running["profile"]), events
        if what == "start" and kind == "profile":
            if last != "profile":
                batches.append(0)
            batches[-1] += 1
        if what == "start":
            last = kind
    # One artifact per slot, then twice as many each time, up to 3 per slot.
    floors = [2 * min(2**k, 3) for k in range(len(batches) - 1)]
    assert sum(batches) == 15 and len(batches) >= 3
    assert all(b >= floor for b, floor in zip(batches, floors)), batches


def _tmm_benchmarks() -> list[tuple[Benchmark, bool]]:
    """A tmm benchmark whose expected outputs are right, and one whose are wrong."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZES["M"], SIZES["K"])).astype(np.float32)
    b = rng.standard_normal((SIZES["N"], SIZES["K"])).astype(np.float32)
    right = a.astype(np.float64) @ b.T.astype(np.float64)
    wrong = np.zeros((SIZES["M"], SIZES["N"]))
    problem = Problem(tmm().definition, SIZES, "cpu")
    return [(Benchmark(problem, [a, b], [right]), True), (Benchmark(problem, [a, b], [wrong]), False)]


def test_local_pools_compile_and_profile_a_real_candidate(monkeypatch):
    monkeypatch.undo()  # real artifacts
    for benchmark, good in _tmm_benchmarks():
        with Evaluator(LocalExecutors(benchmark, workers=1), "cpu") as evaluator:
            (outcome,), _ = evaluate(evaluator, [tcir.MappingOptions(tile=[2, 2, 2])])
        if good:
            assert outcome.error is None and 0 < outcome.seconds < 1
        else:
            assert outcome.error.startswith("run: CandidateError: wrong result: C")


def test_large_inputs_reach_profile_workers_as_mapped_files(monkeypatch):
    """Inputs from `SPILL_BYTES` go to the profile workers as .npy files they
    map (here every input): the candidate is checked against them as before,
    and the files go with the pools."""
    monkeypatch.undo()  # real artifacts
    monkeypatch.setattr(jobs, "SPILL_BYTES", 0)
    for benchmark, good in _tmm_benchmarks():
        executors = LocalExecutors(benchmark, workers=1)
        folder = executors._inputs_folder.name
        assert [type(x).__name__ for x in executors.benchmark.inputs] == ["SpilledArray"] * 2
        assert sorted(os.listdir(folder)) == ["input0.npy", "input1.npy"]
        with Evaluator(executors, "cpu") as evaluator:
            (outcome,), _ = evaluate(evaluator, [tcir.MappingOptions(tile=[2, 2, 2])])
        assert (outcome.error is None) == good, outcome.error
        assert not os.path.exists(folder)


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


def test_a_compile_far_longer_than_the_others_is_cut(monkeypatch):
    monkeypatch.setattr("tcir.tuner.evaluate.STRAGGLER_MIN_S", 0.5)
    candidates = [tcir.MappingOptions(unroll=1, tile=[k]) for k in range(1, 8)] + [SLOW]
    with Evaluator(FakeExecutors(slow_s=30, slots=8), "cuda-sim", timeout=60) as evaluator:
        begin = time.monotonic()
        outcomes, finished = evaluate(evaluator, candidates)
    assert finished and time.monotonic() - begin < 5
    assert [o.seconds for o in outcomes[:7]] == [1e-3] * 7
    assert outcomes[7].error == "compile: timed out after 0.5 s, far longer than the other compiles"


def test_a_kernel_far_slower_than_the_best_is_stopped(monkeypatch):
    """A profile worker ends itself once a run goes on far longer than the
    best allows, and the device's standby pool takes the next candidate."""
    monkeypatch.undo()
    sizes = {"M": 1024, "K": 1024, "N": 1024}  # about 1 s a run on one core
    a = np.ones((1024, 1024), np.float32)
    problem = Problem(tmm().definition, sizes, "cpu")
    executors = LocalExecutors(Benchmark(problem, [a, a], [a @ a.T]), workers=1)
    with Evaluator(executors, "cpu") as evaluator:
        evaluator.best = 1e-6  # each job stops 0.7 s into its first run
        candidates = [tcir.MappingOptions(tile=[k]) for k in (32, 64)]
        begin = time.monotonic()
        outcomes, finished = evaluate(evaluator, candidates)
        elapsed = time.monotonic() - begin
        profilers, standbys = list(executors._profilers), list(executors._standbys)
    assert finished
    assert [o.error for o in outcomes] == ["run: stopped: far slower than the best"] * 2
    assert standbys[0] is not None and standbys[0] is not profilers[0]
    assert elapsed < 60
