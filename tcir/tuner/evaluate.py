"""Compile candidates in parallel, profile them one at a time, never die of one.

The paper's tuning pipeline (section 5.2): candidates go to a queue of
compilation jobs served by a pool of worker processes (tcir pipeline and
backend code generation); each compiled artifact goes to a queue of profiling
jobs served by one process per device (every visible GPU for CUDA; one
process for the CPU backend, which only profiles while no compilation runs,
so compiles do not disturb its timings). A profiling job loads the artifact,
runs it once on poisoned outputs, checks every output against the numpy
reference, and only then times it.

Workers are `tcir.tuner.worker` processes. A job that raises, is
wrong, crashes its worker (the worker is restarted) or runs past `timeout`
(the worker is killed and restarted) yields a failed `Outcome` with the
reason, logged; the other jobs go on.
"""

from __future__ import annotations

import logging
import math
import os
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

import numpy as np

from tcir.compiler.artifacts import Artifact, artifact_from_json, artifact_of
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.lowering import DefIR, StagedLowering
from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.frontend.ast import CheckedDef
from tcir.runtime.inputs import within_tolerance
from tcir.runtime.signature import NUMPY_DTYPES, Binding
from tcir.tuner.worker import Worker

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 300.0
"""How long a worker may take to import tcir and set up before it is an error."""
TIMING_BUDGET_S = 0.2
"""Timed runs per candidate stop after this much run time (at least `MIN_RUNS`)."""
MIN_RUNS, MAX_RUNS = 3, 100


@dataclass(frozen=True)
class Problem:
    """What every worker needs: the checked def and the sizes to specialize to."""

    definition: CheckedDef
    sizes: dict[str, int]
    backend: str


@dataclass(frozen=True)
class OutputSpec:
    """An output buffer: shape, dtype, and whether it must start at zero."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    zero: bool


def output_specs(problem: Problem) -> list[OutputSpec]:
    """The outputs of `problem`'s def (zero-filled when first accumulated into)."""
    definition = problem.definition
    binding = Binding(problem.sizes, ())
    specs = []
    for output in definition.outputs:
        first = next(s for s in definition.stmts if s.lhs == output.name)
        zero = first.reduces and not first.initializes
        specs.append(OutputSpec(output.name, binding.shape(definition, output), output.dtype, zero))
    return specs


@dataclass(frozen=True)
class Outcome:
    """What became of one candidate: its time in seconds, or why it failed."""

    options: MappingOptions
    seconds: float | None = None
    error: str | None = None
    artifact: Artifact | None = field(default=None, repr=False, compare=False)
    from_cache: bool = False

    @property
    def time(self) -> float:
        """Seconds, `inf` for a failed candidate (for ranking)."""
        return math.inf if self.seconds is None else self.seconds


class CandidateError(Exception):
    """A candidate failed in a worker (the message says why)."""


# --- inside the workers ----------------------------------------------------


def _compiler(problem: Problem) -> Callable[[str], dict[str, Any]]:
    """The compile job handler: options JSON -> artifact JSON. The worker
    gets the problem once and keeps its staged lowering: each candidate
    only runs the passes that depend on its options."""
    ir = DefIR.of(problem.definition)
    staged = StagedLowering(ir, Binding(problem.sizes, ()))

    def compile_job(options_json: str) -> dict[str, Any]:
        options = MappingOptions.from_json(options_json)
        module = staged.lowered(options, problem.backend)
        return artifact_of(module, ir.name, problem.backend).to_json()

    return compile_job


class _Profiler:
    """The profile job handler on one device: artifact JSON -> seconds."""

    def __init__(
        self,
        backend: str,
        device: int,
        inputs: Sequence[Any],
        expected: Sequence[np.ndarray],
        outputs: Sequence[OutputSpec],
    ):
        self.backend = backend
        self.expected = expected
        self.specs = outputs
        if backend == "cuda":
            from tcir.backends.cuda.runtime import cupy_module

            self.xp = cupy_module()
            self.xp.cuda.Device(device).use()
            self.inputs = [self.xp.asarray(a) if hasattr(a, "shape") else a for a in inputs]
        else:
            self.xp = np
            self.inputs = list(inputs)

    def _outputs(self) -> list[Any]:
        """Fresh outputs: zeros where required, else poisoned (NaN or -1)."""
        outputs = []
        for spec in self.specs:
            dtype = NUMPY_DTYPES[spec.dtype]
            poison = 0 if spec.zero else (np.nan if np.dtype(dtype).kind == "f" else -1)
            outputs.append(self.xp.full(spec.shape, poison, dtype))
        return outputs

    def _check(self, outputs: Sequence[Any]) -> None:
        for spec, got, expected in zip(self.specs, outputs, self.expected):
            host = self.xp.asnumpy(got) if self.backend == "cuda" else got
            good, error = within_tolerance(host, expected, spec.dtype)
            if not good:
                raise CandidateError(f"wrong result: {spec.name} has max rel. error {error:.3g}")

    def _run_once(self, kernel: Callable[..., None], outputs: list[Any]) -> float:
        for spec, out in zip(self.specs, outputs):
            if spec.zero:
                out.fill(0)
        if self.backend == "cuda":
            start, end = self.xp.cuda.Event(), self.xp.cuda.Event()
            start.record()
            kernel(*self.inputs, *outputs)
            end.record()
            end.synchronize()
            return self.xp.cuda.get_elapsed_time(start, end) / 1e3
        begin = time.perf_counter()
        kernel(*self.inputs, *outputs)
        return time.perf_counter() - begin

    def __call__(self, artifact_json: dict[str, Any]) -> float:
        kernel = artifact_from_json(artifact_json).load()
        outputs = self._outputs()
        kernel(*self.inputs, *outputs)
        if self.backend == "cuda":
            self.xp.cuda.get_current_stream().synchronize()
        self._check(outputs)
        times = [self._run_once(kernel, outputs)]
        while len(times) < MAX_RUNS and (len(times) < MIN_RUNS or sum(times) < TIMING_BUDGET_S):
            times.append(self._run_once(kernel, outputs))
        return statistics.median(times)


class Evaluator:
    """Measures candidates of one problem on `inputs` (see the module docstring).

    `cache` and `key` (the problem's), when given, supply code compiled before
    so that it is not compiled again; code from the cache that fails is dropped.
    """

    def __init__(
        self,
        problem: Problem,
        inputs: Sequence[Any],
        expected: Sequence[np.ndarray],
        *,
        workers: int | None = None,
        timeout: float = 60.0,
        devices: int = 1,
        cache: CompilationCache | None = None,
        key: ProblemKey | None = None,
    ):
        if timeout <= 0:
            raise TCError(f"tuner: timeout must be positive, got {timeout}")
        self.problem = problem
        self.timeout = timeout
        self.cache = cache
        self.key = key
        self._compile_args = (problem,)
        self._compiler_count = max(1, workers or os.cpu_count() or 1)
        profile_args = (list(inputs), list(expected), output_specs(problem))
        self._profile_args = [(problem.backend, d, *profile_args) for d in range(devices)]
        self._compilers: list[Worker] = []
        self._profilers: list[Worker] = []

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker."""
        for worker in (*self._compilers, *self._profilers):
            worker.stop()
        self._compilers, self._profilers = [], []

    def _start_workers(self) -> None:
        if not self._compilers:
            self._compilers = [
                Worker(f"tcir-compile-{k}", _compiler, self._compile_args, STARTUP_TIMEOUT_S)
                for k in range(self._compiler_count)
            ]
            self._profilers = [
                Worker(f"tcir-profile-{k}", _Profiler, args, STARTUP_TIMEOUT_S)
                for k, args in enumerate(self._profile_args)
            ]

    def evaluate(
        self,
        candidates: Sequence[MappingOptions],
        on_outcome: Callable[[Outcome], None] | None = None,
    ) -> list[Outcome]:
        """The outcome of every candidate, in order; `on_outcome` sees each as it comes."""
        self._start_workers()
        outcomes: dict[int, Outcome] = {}
        to_compile: deque[int] = deque()
        to_profile: deque[tuple[int, Artifact, bool]] = deque()
        for index, options in enumerate(candidates):
            artifact = self._cached(options)
            if artifact is None:
                to_compile.append(index)
            else:
                to_profile.append((index, artifact, True))

        def finish(index: int, outcome: Outcome) -> None:
            outcomes[index] = outcome
            if outcome.error is not None:
                log.info("candidate %s discarded: %s", outcome.options, outcome.error)
                if outcome.from_cache and self.cache is not None and self.key is not None:
                    self.cache.drop_code(self.key, outcome.options)
            if on_outcome is not None:
                on_outcome(outcome)

        while len(outcomes) < len(candidates):
            for worker in self._compilers:
                if worker.idle and to_compile:
                    index = to_compile.popleft()
                    worker.submit(index, candidates[index].to_json(), self.timeout)
            compiling = bool(to_compile) or any(w.job is not None for w in self._compilers)
            if not (self.problem.backend == "cpu" and compiling):
                for worker in self._profilers:
                    if worker.idle and to_profile:
                        index, artifact, cached = to_profile.popleft()
                        worker.submit((index, artifact, cached), artifact.to_json(), self.timeout)
            for worker, job, (kind, payload) in self._replies():
                if worker in self._compilers:
                    if kind == "ok":
                        to_profile.append((job, artifact_from_json(payload), False))
                    else:
                        finish(job, Outcome(candidates[job], error=f"compile: {payload}"))
                    continue
                index, artifact, cached = job
                if kind == "ok":
                    finish(
                        index, Outcome(candidates[index], float(payload), None, artifact, cached)
                    )
                else:
                    error = f"run: {payload}"
                    finish(index, Outcome(candidates[index], None, error, artifact, cached))
        return [outcomes[k] for k in range(len(candidates))]

    def _cached(self, options: MappingOptions) -> Artifact | None:
        if self.cache is None or self.key is None:
            return None
        return self.cache.get_code(self.key, options)

    def _replies(self) -> list[tuple[Worker, Any, tuple[str, Any]]]:
        """Wait for workers; (worker, job, reply) for each finished job. A
        worker that died or ran late is restarted and its job gets an error."""
        workers = [
            w for w in (*self._compilers, *self._profilers) if w.job is not None or not w.ready
        ]
        if not workers:
            return []
        deadline = min(w.deadline for w in workers)
        wait([w.connection for w in workers], max(0.0, deadline - time.monotonic()))
        replies: list[tuple[Worker, Any, tuple[str, Any]]] = []
        for worker in workers:
            message = worker.receive()
            if message is None:
                continue
            kind, payload = message
            if kind == "late":
                payload = f"timed out after {self.timeout:g} s"
            if kind == "ready":
                worker.ready, worker.deadline = True, math.inf
            elif kind == "fatal" or not worker.ready:
                self.close()
                raise TCError(f"tuner: worker {worker.name} cannot start: {payload}")
            else:
                job = worker.job
                if kind in ("late", "died"):
                    worker.restart()
                    kind = "error"
                else:
                    worker.job, worker.deadline = None, math.inf
                replies.append((worker, job, (kind, payload)))
        return replies
