"""Compile candidates in parallel, profile them one at a time, never die of one.

The paper's tuning pipeline (section 5.2): candidates go to compile jobs run
on every core; each compiled artifact goes to a profile job on a device
(every visible GPU for CUDA; the CPU backend profiles only while no compile
job runs, so that compiles do not disturb its timings). A profile job loads
the artifact, runs it once on poisoned outputs, checks every output against
the numpy reference, and only then times it. Jobs run on `Executors`: local
process pools or a Dask cluster (`tcir.tuner.executors`).

A job that raises, is wrong, crashes its worker or runs past `timeout`
(it is cancelled: a local worker is killed and replaced) yields a failed
`Outcome` with the reason, logged; the other jobs go on. So does a compile
job that straggles far behind the rest of its batch. Past the `deadline`,
every job still running is cancelled.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from dataclasses import dataclass, field

from tcir.compiler.artifacts import Artifact, artifact_from_json
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.tuner.executors import Executors

log = logging.getLogger(__name__)

MESSAGE_LENGTH = 400
CUTOFF_FACTOR = 10.0
"""A candidate slower than this many times the best so far is timed once."""
STRAGGLER_SHARE, STRAGGLER_FACTOR, STRAGGLER_MIN_S = 0.75, 3.0, 4.0
"""Once this share of a batch is done, a compile job running longer than this
many times the batch's median compile time (and `STRAGGLER_MIN_S`) is
cancelled: the batch would wait for it with every other worker idle."""


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


def describe(error: BaseException) -> str:
    """`Type: first line of the message`, bounded in length."""
    from pebble import ProcessExpired

    if isinstance(error, ProcessExpired):
        return f"worker crashed (exit code {error.exitcode})"
    lines = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return message[:MESSAGE_LENGTH]


@dataclass
class _Job:
    index: int
    started: float
    device: int | None = None
    """The device of a profile job; None for a compile job."""
    artifact: Artifact | None = None
    cached: bool = False


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

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executors.close()

    def evaluate(
        self,
        candidates: Sequence[MappingOptions],
        on_outcome: Callable[[Outcome], None] | None = None,
        deadline: float | None = None,
    ) -> list[Outcome]:
        """The outcomes of the candidates measured before `deadline` (a
        `time.monotonic()` value), in order; `on_outcome` sees each as it comes."""
        outcomes: dict[int, Outcome] = {}
        to_compile: deque[int] = deque()
        to_profile: deque[tuple[int, Artifact, bool]] = deque()
        for index, options in enumerate(candidates):
            artifact = self._cached(options)
            if artifact is None:
                to_compile.append(index)
            else:
                to_profile.append((index, artifact, True))
        running: dict[Future, _Job] = {}
        free_devices = list(range(self.executors.devices))
        compile_times: list[float] = []

        def limit(job: _Job) -> float:
            """How long `job` may run."""
            if (
                job.device is not None
                or len(candidates) - len(to_compile) - sum(j.device is None for j in running.values())
                < STRAGGLER_SHARE * len(candidates)
                or len(compile_times) < 4
            ):
                return self.timeout
            typical = STRAGGLER_FACTOR * statistics.median(compile_times)
            return min(self.timeout, max(STRAGGLER_MIN_S, typical))

        def finish(job: _Job, seconds: float | None = None, error: str | None = None) -> None:
            if job.device is not None:
                free_devices.append(job.device)
            outcome = Outcome(candidates[job.index], seconds, error, job.artifact, job.cached)
            outcomes[job.index] = outcome
            if error is not None:
                log.info("candidate %s discarded: %s", outcome.options, error)
                if job.cached and self.cache is not None and self.key is not None:
                    self.cache.drop_code(self.key, outcome.options)
            else:
                self.best = min(self.best, outcome.time)
            if on_outcome is not None:
                on_outcome(outcome)

        while to_compile or to_profile or running:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                for future in running:
                    future.cancel()
                break
            compiling = [j for j in running.values() if j.device is None]
            while to_compile and len(compiling) < self.executors.compile_slots:
                index = to_compile.popleft()
                job = _Job(index, now)
                running[self.executors.compile(candidates[index].to_json())] = job
                compiling.append(job)
            if not (self.backend == "cpu" and (compiling or to_compile)):
                while to_profile and free_devices:
                    index, artifact, cached = to_profile.popleft()
                    job = _Job(index, now, free_devices.pop(), artifact, cached)
                    future = self.executors.profile(
                        job.device, artifact.to_json(), self.best * CUTOFF_FACTOR
                    )
                    running[future] = job
            wake = min(job.started + limit(job) for job in running.values())
            if deadline is not None:
                wake = min(wake, deadline)
            done, _ = wait(running, max(0.0, wake - time.monotonic()), FIRST_COMPLETED)
            for future in done:
                job = running.pop(future)
                try:
                    result = future.result()
                except CancelledError:
                    continue
                except Exception as e:  # a failing job fails its candidate only
                    kind = "compile" if job.device is None else "run"
                    finish(job, error=f"{kind}: {describe(e)}")
                    continue
                if job.device is None:
                    compile_times.append(time.monotonic() - job.started)
                    to_profile.append((job.index, artifact_from_json(result), False))
                else:
                    finish(job, seconds=float(result))
            now = time.monotonic()
            for future, job in list(running.items()):
                allowed = limit(job)
                if now - job.started >= allowed:
                    future.cancel()
                    del running[future]
                    kind = "compile" if job.device is None else "run"
                    why = "" if allowed == self.timeout else ", far behind the rest of its batch"
                    finish(job, error=f"{kind}: timed out after {allowed:g} s{why}")
        return [outcomes[k] for k in sorted(outcomes)]

    def _cached(self, options: MappingOptions) -> Artifact | None:
        if self.cache is None or self.key is None:
            return None
        return self.cache.get_code(self.key, options)
