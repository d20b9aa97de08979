"""Profiling checks every candidate against the reference before timing it."""

from __future__ import annotations

import numpy as np
import pytest
from tuner_helpers import SIZES, tmm, tmm_binding

import tcir
from tcir.compiler.artifacts import build_artifact
from tcir.tuner.jobs import CandidateError, Problem, Profiler, output_specs


@pytest.fixture(scope="module")
def artifact_json():
    return build_artifact(
        tmm().def_ir, tmm_binding(), tcir.MappingOptions(tile=[2, 2, 2]), "cpu"
    ).to_json()


def _inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZES["M"], SIZES["K"])).astype(np.float32)
    b = rng.standard_normal((SIZES["N"], SIZES["K"])).astype(np.float32)
    return [a, b]


def test_output_specs():
    accumulate = tcir.define("def acc(float(M,K) A) -> (C) { C(m) += A(m,k) }").acc.definition
    assert [s.zero for s in output_specs(Problem(accumulate, {"M": 3, "K": 2}, "cpu"))] == [True]
    (spec,) = output_specs(Problem(tmm().definition, SIZES, "cpu"))
    assert (spec.shape, spec.dtype, spec.zero) == ((8, 6), "float32", False)


def test_correct_candidate_is_timed(artifact_json):
    a, b = _inputs()
    specs = output_specs(Problem(tmm().definition, SIZES, "cpu"))
    profiler = Profiler("cpu", 0, [a, b], [a.astype(np.float64) @ b.T.astype(np.float64)], specs)
    assert 0 < profiler(artifact_json) < 1


def test_wrong_candidate_is_rejected(artifact_json):
    a, b = _inputs()
    specs = output_specs(Problem(tmm().definition, SIZES, "cpu"))
    profiler = Profiler("cpu", 0, [a, b], [np.zeros((8, 6))], specs)
    with pytest.raises(CandidateError, match="wrong result: C has max rel. error"):
        profiler(artifact_json)


@pytest.mark.parametrize(("cutoff", "runs"), [(0.0, 1), (float("inf"), 4)])
def test_a_candidate_past_the_cutoff_runs_once(artifact_json, monkeypatch, cutoff, runs):
    """The checked run is timed: past `cutoff` (slower than the best so far
    allows) nothing more runs; else at least `MIN_RUNS` timed runs follow it."""
    a, b = _inputs()
    specs = output_specs(Problem(tmm().definition, SIZES, "cpu"))
    profiler = Profiler("cpu", 0, [a, b], [a.astype(np.float64) @ b.T.astype(np.float64)], specs)
    times = iter([2.0, *[1.0] * 99])  # the first run's time, then the others'
    calls = []

    def run_once(kernel, outputs, launches=1):
        calls.append(kernel(*profiler.inputs, *outputs))
        return next(times)

    monkeypatch.setattr(profiler, "_run_once", run_once)
    monkeypatch.setattr("tcir.tuner.jobs.TIMING_BUDGET_S", 0.0)
    assert profiler(artifact_json, cutoff) == (2.0 if runs == 1 else 1.0)
    assert len(calls) == runs


def test_gpu_runs_launch_short_kernels_back_to_back():
    """A timed run on the GPU fills about LAUNCHED_S with calls (the host's
    launch time hides behind the queue); the CPU times single calls."""
    from tcir.tuner.jobs import LAUNCHED_S, MAX_LAUNCHES, launches_per_run

    assert launches_per_run("cpu", 1e-6) == 1
    assert launches_per_run("cuda", 1e-6) == MAX_LAUNCHES
    assert launches_per_run("cuda", LAUNCHED_S / 4) == 4
    assert launches_per_run("cuda", 1e-3) == 1
