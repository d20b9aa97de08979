"""What the tuner's worker processes run: compile a candidate, profile an artifact.

The jobs are plain module-level functions, so that any executor can run them
(a pebble process pool here, Dask workers on a cluster). A worker receives
its problem once: a pool's initializer `install`s it, and jobs then name it
by its token; a Dask worker receives it as a scattered object. Each worker
process keeps the problem's staged lowering (the scop, its dependences and
the schedules computed so far) and its profiler across jobs.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from tcir.compiler.artifacts import CudaArtifact, artifact_from_json, artifact_of
from tcir.compiler.lowering import DefIR, StagedLowering
from tcir.compiler.options import MappingOptions
from tcir.frontend.ast import CheckedDef
from tcir.runtime.inputs import within_tolerance
from tcir.runtime.signature import NUMPY_DTYPES, Binding

TIMING_BUDGET_S = 0.2
"""Timed runs per candidate stop after this much run time (at least `MIN_RUNS`)."""
MIN_RUNS, MAX_RUNS = 3, 30
LAUNCHED_S, MAX_LAUNCHES = 200e-6, 16
"""A GPU timed run launches the candidate back to back for about this long, at most this often."""
SPIN_CLOCK_HZ = 2e9
"""Cycles a second of the spin that queues a GPU timed run (an H100 clocks up to 1.98 GHz)."""
SPIN_SOURCE = r"""
extern "C" __global__ void tcir_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
"""
PROFILE_GRACE_S = 0.5
"""Time to load and check a candidate, on a host whose cores all compile."""
SLOW_EXIT_CODE = 75
"""The exit code of a profile worker that ended a candidate far slower than the best."""


@dataclass(frozen=True)
class Problem:
    """What every compile job needs: the checked def and the sizes to specialize to."""

    definition: CheckedDef
    sizes: dict[str, int]
    backend: str
    arch: str | None = None
    """The GPU architecture (`sm_90`) that compile jobs make cubins for, if any."""
    token: str = field(default_factory=lambda: uuid.uuid4().hex, compare=False)
    """Names the problem in the workers that hold it."""


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
        zero = first.op != "=" and not first.initializes
        specs.append(OutputSpec(output.name, binding.shape(definition, output), output.dtype, zero))
    return specs


@dataclass(frozen=True)
class Benchmark:
    """What every profile job needs: the inputs (numpy), the expected outputs."""

    problem: Problem
    inputs: list[Any]
    expected: list[np.ndarray]

    @property
    def token(self) -> str:
        return self.problem.token


SPILL_BYTES = 64 << 20
"""Inputs from this size reach local profile workers as .npy files that they
map, not pickled through the pipe that starts them (1LUT's 2.5 GB table: a
worker, and a new one after a crash, starts in seconds less, and a pool
stopped while a worker starts finds it past its start-up)."""


@dataclass(frozen=True)
class SpilledArray:
    """An input saved as a .npy file; `install` maps it, read-only."""

    path: str


def spill(benchmark: Benchmark) -> tuple[Benchmark, tempfile.TemporaryDirectory[str] | None]:
    """`benchmark` with each input of at least `SPILL_BYTES` saved in a new
    folder (which must outlive the workers) and named by its file, and that
    folder; `benchmark` itself and None where no input is that large."""
    large = [isinstance(a, np.ndarray) and a.nbytes >= SPILL_BYTES for a in benchmark.inputs]
    if not any(large):
        return benchmark, None
    folder = tempfile.TemporaryDirectory(prefix="tcir-inputs-")
    inputs: list[Any] = []
    for k, (array, spilled) in enumerate(zip(benchmark.inputs, large)):
        if spilled:
            path = os.path.join(folder.name, f"input{k}.npy")
            np.save(path, array)
            array = SpilledArray(path)
        inputs.append(array)
    return replace(benchmark, inputs=inputs), folder


class CandidateError(Exception):
    """A candidate failed in a worker (the message says why)."""


# --- per-process state -------------------------------------------------------

_INSTALLED: dict[str, Any] = {}
"""Problems and benchmarks installed in this worker process, by token."""
_STAGED: dict[str, tuple[DefIR, StagedLowering]] = {}
_PROFILERS: dict[tuple[str, int], Profiler] = {}


def install(*objects: Problem | Benchmark) -> None:
    """A pool's initializer: keep `objects` in this process, named by token."""
    for obj in objects:
        if isinstance(obj, Benchmark):
            mapped = [np.load(a.path, mmap_mode="r") if isinstance(a, SpilledArray) else a for a in obj.inputs]
            obj = replace(obj, inputs=mapped)
        _INSTALLED[f"{type(obj).__name__}:{obj.token}"] = obj


def _resolve(ref: Any, kind: type) -> Any:
    return _INSTALLED[f"{kind.__name__}:{ref}"] if isinstance(ref, str) else ref


# --- jobs --------------------------------------------------------------------


def compile_candidate(problem: Problem | str, options_json: str) -> dict[str, Any]:
    """Options JSON -> artifact JSON: only the passes that depend on the
    options run; the rest is computed once per process and problem. CUDA
    code comes with its cubin for `problem.arch`."""
    problem = _resolve(problem, Problem)
    if problem.token not in _STAGED:
        ir = DefIR.of(problem.definition)
        _STAGED[problem.token] = ir, StagedLowering(ir, Binding(problem.sizes, ()))
    ir, staged = _STAGED[problem.token]
    module = staged.lowered(MappingOptions.from_json(options_json), problem.backend)
    artifact = artifact_of(module, ir.name, problem.backend)
    if isinstance(artifact, CudaArtifact) and problem.arch is not None:
        artifact = artifact.compiled_for(problem.arch)  # NVRTC here, not in the profiler
    return artifact.to_json()


def profile_candidate(
    benchmark: Benchmark | str,
    device: int,
    artifact_json: dict[str, Any],
    cutoff: float,
    exit_when_slow: bool = False,
) -> float:
    """Check the artifact's outputs, then its median time in seconds (the
    checked run's time when that exceeds `cutoff`: it cannot be among the best).

    With `exit_when_slow`, a job still running `slow_limit(cutoff)` seconds
    after it began ends its process with `SLOW_EXIT_CODE`: a kernel cannot be
    stopped otherwise, and a random candidate can run thousands of times as
    long as the default (the device could time many candidates meanwhile).
    """
    profiler = _profiler(benchmark, device)
    if not exit_when_slow or math.isinf(cutoff):
        return profiler(artifact_json, cutoff)
    watchdog = threading.Timer(slow_limit(cutoff), os._exit, (SLOW_EXIT_CODE,))
    watchdog.daemon = True
    watchdog.start()
    try:
        return profiler(artifact_json, cutoff)
    finally:
        watchdog.cancel()


def slow_limit(cutoff: float) -> float:
    """How long profiling a candidate may take when `cutoff` seconds stop its
    timing: its checked run, then up to `TIMING_BUDGET_S` of timed runs and
    the one past it, with `PROFILE_GRACE_S` to load and check it."""
    return PROFILE_GRACE_S + 2 * cutoff + TIMING_BUDGET_S


def warm_profiler(benchmark: Benchmark | str, device: int) -> None:
    """Make this process's profiler of `benchmark` on `device` before any
    candidate comes (a CUDA context, the inputs on the device), so that a
    standby profile worker starts timing at once."""
    _profiler(benchmark, device)


def _profiler(benchmark: Benchmark | str, device: int) -> Profiler:
    benchmark = _resolve(benchmark, Benchmark)
    key = (benchmark.token, device)
    if key not in _PROFILERS:
        problem = benchmark.problem
        _PROFILERS[key] = Profiler(
            problem.backend, device, benchmark.inputs, benchmark.expected, output_specs(problem)
        )
    return _PROFILERS[key]


def launches_per_run(backend: str, first: float) -> int:
    """Calls per timed run of a candidate whose checked run took `first`
    seconds: on the GPU, enough back to back to fill `LAUNCHED_S` (at most
    `MAX_LAUNCHES`), so that the device time counts, not the host's time to
    launch one call (CUDA events around a single call of a short kernel
    measure the launch too)."""
    if backend != "cuda":
        return 1
    return max(1, min(MAX_LAUNCHES, int(LAUNCHED_S / first))) if first > 0 else MAX_LAUNCHES


class Profiler:
    """Runs artifacts of one problem on one device: artifact JSON -> seconds."""

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
            self.spin = self.xp.RawKernel(SPIN_SOURCE, "tcir_spin")
        else:
            self.xp = np
            self.inputs = list(inputs)
        self.host_per_call = 0.0
        """The host's time to queue one call, as last measured."""

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

    def _run_once(self, kernel: Callable[..., None], outputs: list[Any], launches: int = 1) -> float:
        """Seconds per call of `kernel`: on the GPU, the events' time around
        `launches` calls back to back, divided by them (outputs that start at
        zero are zeroed once: after the checked run, their values no longer matter)."""
        for spec, out in zip(self.specs, outputs):
            if spec.zero:
                out.fill(0)
        if self.backend == "cuda":
            # A spin keeps the GPU busy for twice the host's time to queue the
            # calls: the events time the kernels back to back, not the host's
            # launch rate (as tools/bench.py does).
            start, end = self.xp.cuda.Event(), self.xp.cuda.Event()
            cycles = int(2 * launches * self.host_per_call * SPIN_CLOCK_HZ)
            if cycles:
                self.spin((1,), (1,), (np.int64(cycles),))
            start.record()
            begin = time.perf_counter()
            for _ in range(launches):
                kernel(*self.inputs, *outputs)
            self.host_per_call = (time.perf_counter() - begin) / launches
            end.record()
            end.synchronize()
            return self.xp.cuda.get_elapsed_time(start, end) / 1e3 / launches
        begin = time.perf_counter()
        kernel(*self.inputs, *outputs)
        return time.perf_counter() - begin

    def __call__(self, artifact_json: dict[str, Any], cutoff: float = float("inf")) -> float:
        kernel = artifact_from_json(artifact_json).load()
        outputs = self._outputs()
        first = self._run_once(kernel, outputs)  # on the poisoned outputs, timed too
        self._check(outputs)
        if first > cutoff:  # cannot be among the best: no more runs
            return first
        launches = launches_per_run(self.backend, first)
        times: list[float] = []
        spent = 0.0
        while len(times) < MAX_RUNS and (len(times) < MIN_RUNS or spent < TIMING_BUDGET_S):
            times.append(self._run_once(kernel, outputs, launches))
            spent += times[-1] * launches
        return statistics.median(times)
