"""Compile candidates in parallel, profile them one at a time, never die of one.

The paper's tuning pipeline (section 5.2), without generations: every
compile slot stays busy, pulling the next candidate from the search as soon
as it frees (while fewer compiled artifacts wait for a device than there are
slots), so the search proposes each candidate from everything measured so
far. Each compiled artifact goes to a profile job on a device (every visible
GPU for CUDA). The CPU backend never profiles while a compile job runs, so
that compiles do not disturb its timings: once a batch of artifacts waits
(one per compile slot, then twice as many each time up to
`CPU_BATCH_PER_SLOT` per slot; or the search has no more), it lets the
running compiles finish, profiles everything waiting, and only then
compiles again (a batch, but the search still proposes each candidate from
everything measured before it).
A profile job loads the artifact, runs it once on poisoned outputs, checks
every output against the numpy reference, and only then times it. Jobs run
on `Executors`: local process pools or a Dask cluster
(`tcir.tuner.executors`).

A job that raises, is wrong, crashes its worker, runs past `timeout`
(it is cancelled: a local worker is killed and replaced) or, on local
workers, runs far longer than timing a candidate near the best takes (its
worker ends itself: `jobs.profile_candidate`) yields a failed
`Outcome` with the reason, logged; the other jobs go on. So does a compile
job that runs far longer than the compiles so far (its slot could have
compiled several candidates meanwhile). Past the `deadline`, every job still
running is cancelled.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from dataclasses import dataclass, field

from tcir.compiler.artifacts import Artifact, artifact_from_json
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.tuner.executors import Executors
from tcir.tuner.jobs import SLOW_EXIT_CODE

log = logging.getLogger(__name__)

MESSAGE_LENGTH = 400
CUTOFF_FACTOR = 10.0
"""A candidate slower than this many times the best so far is timed once."""
CPU_BATCH_PER_SLOT = 8
"""The CPU backend profiles once this many artifacts per compile slot wait:
the compile slots idle from the first of them to finish until the last, so
large batches waste little."""
STRAGGLER_SAMPLES, STRAGGLER_FACTOR, STRAGGLER_MIN_S = 4, 3.0, 10.0
"""Once this many compile jobs finished, one running longer than this many
times their median (and `STRAGGLER_MIN_S`, so that a loaded machine's
slower compiles are not cut) is cancelled: its slot could compile several
candidates meanwhile."""


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


@dataclass
class Usage:
    """How busy the evaluator kept its workers (for benchmarks)."""

    compile_s: list[float] = field(default_factory=list)
    """The duration of every compile job that finished."""
    profile_s: list[float] = field(default_factory=list)
    """The duration of every profile job that finished."""
    compile_busy_s: float = 0.0
    """Compile slot-seconds used, cancelled jobs included."""
    wall_s: float = 0.0
    """Seconds spent in `Evaluator.run`."""
    compile_slots: int = 1

    @property
    def compile_busy(self) -> float:
        """The share of compile slot time used, 0 to 1."""
        total = self.wall_s * self.compile_slots
        return self.compile_busy_s / total if total > 0 else 0.0


def describe(error: BaseException) -> str:
    """`Type: first line of the message`, bounded in length."""
    from pebble import ProcessExpired

    if isinstance(error, ProcessExpired):
        if error.exitcode == SLOW_EXIT_CODE:
            return "stopped: far slower than the best"
        return f"worker crashed (exit code {error.exitcode})"
    lines = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return message[:MESSAGE_LENGTH]


@dataclass
class _Job:
    options: MappingOptions
    started: float
    device: int | None = None
    """The device of a profile job; None for a compile job."""
    artifact: Artifact | None = None
    cached: bool = False

    @property
    def kind(self) -> str:
        return "compile" if self.device is None else "run"


class Evaluator:
    """Measures candidates of one problem on `executors` (see the module docstring).

    `cache` and `key` (the problem's), when given, supply code compiled before
    so that it is not compiled again; code from the cache that fails is dropped.
    """

    def __init__(
        self,
        executors: Executors,
        backend: str,
        *,
        timeout: float = 60.0,
        cache: CompilationCache | None = None,
        key: ProblemKey | None = None,
    ):
        if timeout <= 0:
            raise TCError(f"tuner: timeout must be positive, got {timeout}")
        self.executors = executors
        self.backend = backend
        self.timeout = timeout
        self.cache = cache
        self.key = key
        self.best = math.inf
        """The best time measured so far (profile jobs stop early far above it)."""
        self.usage = Usage(compile_slots=executors.compile_slots)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executors.close()

    def run(
        self,
        candidates: Iterable[MappingOptions],
        on_outcome: Callable[[Outcome], None] | None = None,
        deadline: float | None = None,
    ) -> bool:
        """Measure the candidates that `candidates` yields, taking the next one
        whenever a compile slot frees; `on_outcome` sees each outcome as it
        comes (a search can tell it before the next candidate is taken). True
        once `candidates` is exhausted and every job finished; False at
        `deadline` (a `time.monotonic()` value), where the running jobs are
        cancelled."""
        began = time.monotonic()
        try:
            return _Run(self, iter(candidates), on_outcome).until(deadline)
        finally:
            self.usage.wall_s += time.monotonic() - began

    def _cached(self, options: MappingOptions) -> Artifact | None:
        if self.cache is None or self.key is None:
            return None
        return self.cache.get_code(self.key, options)


class _Run:
    """The state of one `Evaluator.run`: jobs running, artifacts waiting for a device."""

    def __init__(
        self,
        evaluator: Evaluator,
        candidates: Iterable[MappingOptions],
        on_outcome: Callable[[Outcome], None] | None,
    ):
        self.evaluator = evaluator
        self.executors = evaluator.executors
        self.candidates = iter(candidates)
        self.on_outcome = on_outcome
        self.exhausted = False
        self.running: dict[Future, _Job] = {}
        self.waiting: deque[_Job] = deque()
        """Compiled (or cached) candidates waiting for a device."""
        self.free_devices = list(range(self.executors.devices))
        self.profiling_phase = False
        """CPU only: compiles wait until the waiting artifacts are profiled."""
        self.batch_per_slot = 1
        """CPU only: artifacts per compile slot of the next batch, doubling up
        to `CPU_BATCH_PER_SLOT` (the first measurements come early: with
        batches of 8 from the start, a 6 s run on 2 cores measured none)."""

    def compiling(self) -> int:
        return sum(job.device is None for job in self.running.values())

    def until(self, deadline: float | None) -> bool:
        """Run until the candidates are exhausted and measured (True) or `deadline` (False)."""
        cpu = self.evaluator.backend == "cpu"
        slots = self.executors.compile_slots
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                # Close first: local pools then end their running jobs with
                # their workers, where cancelling each would start a
                # replacement worker only to stop it.
                self.executors.close()
                for future, job in self.running.items():
                    future.cancel()
                    self._account(job)
                return False
            if cpu:
                self._step_cpu(slots, self.batch_per_slot * slots)
            else:
                self._start_profiles()
                self._fill_compile_slots(slots, slots)
                self._start_profiles()  # code from the cache
            if not self.running:
                if self.exhausted and not self.waiting:
                    return True
                continue
            wake = min(job.started + self._limit(job) for job in self.running.values())
            if deadline is not None:
                wake = min(wake, deadline)
            done, _ = wait(self.running, max(0.0, wake - time.monotonic()), FIRST_COMPLETED)
            for future in done:
                self._collect(future, self.running.pop(future))
            self._cancel_late()

    def _step_cpu(self, slots: int, batch: int) -> None:
        """Compile until `batch` artifacts wait (or no candidate is left), then
        profile them all once no compile runs, then compile again."""
        if self.profiling_phase and not self.waiting and self.compiling() == len(self.running):
            self.profiling_phase = False
        if not self.profiling_phase:
            self._fill_compile_slots(slots, batch)
        if not self.profiling_phase and self.waiting and (len(self.waiting) >= batch or self.exhausted):
            self.profiling_phase = True
            self.batch_per_slot = min(CPU_BATCH_PER_SLOT, 2 * self.batch_per_slot)
        if self.profiling_phase and self.compiling() == 0:
            self._start_profiles()

    def _fill_compile_slots(self, slots: int, waiting: int) -> None:
        """Take candidates while one of the `slots` is free and fewer than
        `waiting` artifacts wait; code from the cache goes straight to waiting."""
        compiling = self.compiling()
        while not self.exhausted and compiling < slots and len(self.waiting) < waiting:
            options = next(self.candidates, None)
            if options is None:
                self.exhausted = True
                break
            now = time.monotonic()
            artifact = self.evaluator._cached(options)
            if artifact is not None:
                self.waiting.append(_Job(options, now, artifact=artifact, cached=True))
                continue
            self.running[self.executors.compile(options.to_json())] = _Job(options, now)
            compiling += 1

    def _start_profiles(self) -> None:
        while self.waiting and self.free_devices:
            job = self.waiting.popleft()
            job.device, job.started = self.free_devices.pop(), time.monotonic()
            assert job.artifact is not None
            cutoff = self.evaluator.best * CUTOFF_FACTOR
            self.running[self.executors.profile(job.device, job.artifact.to_json(), cutoff)] = job

    def _limit(self, job: _Job) -> float:
        """How long `job` may run."""
        timeout = self.evaluator.timeout
        times = self.evaluator.usage.compile_s
        if job.device is not None or len(times) < STRAGGLER_SAMPLES:
            return timeout
        return min(timeout, max(STRAGGLER_MIN_S, STRAGGLER_FACTOR * statistics.median(times)))

    def _account(self, job: _Job) -> None:
        """Count the time `job` ran, and free its device."""
        elapsed = time.monotonic() - job.started
        if job.device is None:
            self.evaluator.usage.compile_busy_s += elapsed
        else:
            self.free_devices.append(job.device)

    def _collect(self, future: Future, job: _Job) -> None:
        self._account(job)
        try:
            result = future.result()
        except CancelledError:
            return
        except Exception as e:  # a failing job fails its candidate only
            self._finish(job, error=f"{job.kind}: {describe(e)}")
            return
        elapsed = time.monotonic() - job.started
        usage = self.evaluator.usage
        if job.device is None:
            usage.compile_s.append(elapsed)
            self.waiting.append(_Job(job.options, job.started, artifact=artifact_from_json(result)))
        else:
            usage.profile_s.append(elapsed)
            self._finish(job, seconds=float(result))

    def _cancel_late(self) -> None:
        now = time.monotonic()
        for future, job in list(self.running.items()):
            allowed = self._limit(job)
            if now - job.started >= allowed:
                future.cancel()
                del self.running[future]
                self._account(job)
                why = "" if allowed == self.evaluator.timeout else ", far longer than the other compiles"
                self._finish(job, error=f"{job.kind}: timed out after {allowed:g} s{why}")

    def _finish(self, job: _Job, seconds: float | None = None, error: str | None = None) -> None:
        evaluator = self.evaluator
        outcome = Outcome(job.options, seconds, error, job.artifact, job.cached)
        if error is not None:
            log.info("candidate %s discarded: %s", outcome.options, error)
            if job.cached and evaluator.cache is not None and evaluator.key is not None:
                evaluator.cache.drop_code(evaluator.key, outcome.options)
        else:
            evaluator.best = min(evaluator.best, outcome.time)
        if self.on_outcome is not None:
            self.on_outcome(outcome)
