"""The autotuner, and what calls of a def use from the cache.

    best = tune(mod.mm, A, B, candidates=100, population=16)   # or mod.mm.tune(A, B)

`tune` searches mapping options for one def on concrete inputs (their shapes
and dtypes; the values are the test data each candidate is checked on), with
the paper's genetic search seeded by the default options and the best known
options of the same TC at other shapes. The search proposes each candidate
when a compile slot frees, from every measurement so far (no generation
waits for its slowest candidate). Every measurement and, as the search goes,
the code of the best version land in the compilation cache, so a tuner
killed midway leaves the best found so far. (`tcir.compiler.compiled` is how
`Function.__call__` uses the cache.)
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tcir.compiler.artifacts import Artifact, build_artifact, target_architecture
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.compiled import open_cache
from tcir.compiler.defaults import default_options
from tcir.compiler.lowering import DefIR, default_rewrites
from tcir.compiler.options import MappingOptions
from tcir.compiler.targets import resolve_backend
from tcir.errors import TCError, check_keywords
from tcir.frontend.ast import CheckedDef
from tcir.runtime.host_program import to_numpy
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind
from tcir.tuner.evaluate import Evaluator, Outcome, Usage
from tcir.tuner.executors import DaskExecutors, Executors, LocalExecutors, dask_client
from tcir.tuner.jobs import Benchmark, Problem, Profiler, output_specs
from tcir.tuner.genetic import GeneticSearch, RandomSearch, Search, distinct
from tcir.tuner.report import Progress, Stop, TuningResult
from tcir.tuner.space import SearchSpace

log = logging.getLogger(__name__)

CANDIDATES = 100
"""Candidates a run measures by default."""
POPULATION = 16
"""The genetic search's default population (candidates kept for breeding)."""
CONVERGED_AFTER = 100
"""The search has converged (the run stops) after this many proposals in a
row that were all measured, running or pruned already."""
SEARCHES = ("genetic", "random", "tpe")
VERIFY_ROUNDS = 3
"""After the search, the best candidate and the default are timed this many
times more each, alternately, in the tuner's process: the fastest of many
measurements is biased low (a candidate as fast as the default wins by
noise), so the result is the faster of the two by the median of these times."""


class Tuner:
    """One tuning session of a def on `inputs` (see `tune` for the knobs)."""

    def __init__(
        self,
        function: DefIR | Any,
        inputs: Sequence[Any],
        *,
        backend: str | None = None,
        candidates: int | None = CANDIDATES,
        population: int = POPULATION,
        timeout: float = 60.0,
        max_time: float | None = None,
        search: str = "genetic",
        mutation_rate: float = 0.1,
        elites: int = 1,
        seed: int = 0,
        workers: int | None = None,
        cache: CompilationCache | str | os.PathLike[str] | None = None,
        space: SearchSpace | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        resume: bool = False,
        cluster: Any = None,
    ):
        self.created: float | None = time.monotonic()
        """When `max_time` starts counting (None once a run has used it)."""
        if candidates is None and max_time is None:
            raise TCError("tuner: give candidates, max_time or both")
        if candidates is not None and candidates < 1:
            raise TCError(f"tuner: candidates must be at least 1, got {candidates}")
        if population < 1:
            raise TCError(f"tuner: population must be at least 1, got {population}")
        if search not in SEARCHES:
            raise TCError(f"tuner: search must be one of {', '.join(SEARCHES)}, got '{search}'")
        self.backend = resolve_backend(backend, tuple(inputs))
        self.ir = _def_ir(function)
        self.definition: CheckedDef = self.ir.definition
        self.inputs = [to_numpy(a) for a in inputs]
        on_gpu = all(hasattr(a, "__cuda_array_interface__") for a in inputs if hasattr(a, "shape"))
        self.timing_inputs = list(inputs) if self.backend == "cuda" and on_gpu else self.inputs
        """What `verify` times on: the caller's GPU arrays where they are, not
        a new copy of the numpy ones (1LUT's table is 2.5 GB)."""
        self.binding = bind(self.definition, self.inputs)
        self.candidates = candidates
        self.max_time = max_time
        self.timeout = timeout
        self.workers = workers
        self.on_progress = on_progress
        self.resume = resume
        self.cluster = cluster
        self.cache = open_cache(cache)
        self.key = ProblemKey.of(
            self.definition, self.binding.sizes, target_architecture(self.backend)
        )
        self.space = space or SearchSpace.build(self.definition, self.binding.sizes, self.backend)
        self.default = default_options(self.definition, self.binding)
        """The default mapping: what a call without options uses on the GPU,
        the search's first seed. On the CPU, a call without options runs the
        canonical loops instead, which the tuner times as the default to beat."""
        rng = random.Random(seed)
        self.search: Search
        if search == "tpe":
            from tcir.tuner.tpe import TPESearch  # imports optuna: only when asked for

            self.search = TPESearch(self.space, seed)
        elif search == "genetic":
            self.search = GeneticSearch(self.space, rng, population, mutation_rate, elites)
        else:
            self.search = RandomSearch(self.space, rng)

    def _default_without_options(self) -> bool:
        """Whether a call without options on the GPU lowers what no single
        `MappingOptions` stands for (`default_rewrites`: attention's parts,
        a padded convolution's zero-padded copy, an einsum's collapsed
        form, a channels-last convolution's channels before its taps): the
        tuner then times that call as the default to beat, as the CPU's
        canonical loops."""
        return default_rewrites(self.definition, self.binding, self.backend)

    def seeds(self) -> list[MappingOptions]:
        """The default mapping, the best known for this problem, and the best
        of the same TC at other shapes."""
        known = self.cache.best(self.key)
        return distinct(
            [self.default, *([known[0]] if known else []), *self.cache.similar(self.key)]
        )

    def _devices(self) -> int:
        if self.backend != "cuda":
            return 1
        from tcir.backends.cuda.runtime import cupy_module

        return max(1, int(cupy_module().cuda.runtime.getDeviceCount()))

    def _arch(self) -> str | None:
        """The architecture of the GPU that candidates run on (CUDA only)."""
        if self.backend != "cuda":
            return None
        from tcir.backends.cuda.runtime import current_device, device_architecture

        return device_architecture(current_device())

    def _executors(self, benchmark: Benchmark) -> tuple[Executors, Any]:
        """Local pools, or Dask executors on `cluster` (an address, `local`, or a
        `distributed.Client`); and the client to close, if this tuner opened it."""
        if self.cluster is None:
            return LocalExecutors(benchmark, workers=self.workers, devices=self._devices()), None
        if isinstance(self.cluster, str):
            gpus = self._devices() if self.backend == "cuda" else 0
            client = dask_client(self.cluster, gpus)
            return DaskExecutors(client, benchmark), client
        return DaskExecutors(self.cluster, benchmark), None

    def run(self) -> TuningResult:
        """Tune; the best options are in the cache as soon as they are measured.
        Past `max_time`, the jobs still running are cancelled and the tuner stops."""
        # The first run's clock starts when the tuner was made: copying the
        # inputs to the host (1LUT's 2.5 GB table: 3.4 s) is part of the
        # caller's time. A later run counts from its own start.
        start, self.created = self.created or time.monotonic(), None
        deadline = None if self.max_time is None else start + self.max_time
        expected = reference_outputs(self.definition, self.binding)
        problem = Problem(self.definition, dict(self.binding.sizes), self.backend, self._arch())
        session = _Session(self, start)
        if self.resume:
            session.restore()
        self.search.start(self.seeds())
        benchmark = Benchmark(problem, self.inputs, expected)
        if self.backend == "cpu" or self._default_without_options():
            session.time_baseline(benchmark)
        executors, client = self._executors(benchmark)
        try:
            with Evaluator(
                executors, self.backend, timeout=self.timeout, cache=self.cache, key=self.key
            ) as evaluator:
                if session.best is not None:
                    evaluator.best = session.best.time
                if not evaluator.run(session.proposals(), session.record, deadline):
                    session.stopped = "max_time"
                session.usage = evaluator.usage
        finally:
            if client is not None:
                client.close()
        session.verify(benchmark)
        return session.result()


class _Session:
    """The measurements of one `Tuner.run`, recorded in the cache as they come."""

    def __init__(self, tuner: Tuner, start: float):
        self.tuner = tuner
        self.start = start
        self.measured: dict[str, Outcome] = {}
        self.pruned: dict[str, str] = {}
        """Why each pruned candidate cannot run."""
        self.running: set[str] = set()
        """The candidates proposed and not measured yet, by options JSON."""
        self.best: Outcome | None = None
        self.failed = 0
        self.proposed = self.done = 0
        """Candidates of this run sent to be measured, and measured."""
        self.stopped: Stop = "candidates"
        self.usage: Usage | None = None
        self.verified_default: float | None = None
        """The default's median time in `verify`, once timed there."""
        self.baseline: tuple[Artifact, float] | None = None
        """What a call without options runs where no options stand for it (the
        CPU's canonical loops, a def the GPU's default lowers in parts) and
        its time: the default the candidates are compared with."""
        self.baseline_won = False
        """Whether `verify` found the baseline faster than the best candidate."""

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def restore(self) -> None:
        """Take the measurements of earlier runs from the cache (`resume`)."""
        for options, seconds, error in self.tuner.cache.measurements(self.tuner.key):
            outcome = Outcome(options, seconds, error, from_cache=True)
            self.measured[options.to_json()] = outcome
            self.failed += error is not None
            self.tuner.search.tell(options, outcome.time)
            if outcome.seconds is not None and (self.best is None or outcome.time < self.best.time):
                self.best = outcome

    def proposals(self) -> Iterator[MappingOptions]:
        """The search's proposals that are new and can run, until the run's
        `candidates` are proposed or the search converged. A proposal
        measured already is told its time again; one that cannot run is
        counted as pruned and told it failed."""
        tuner, search = self.tuner, self.tuner.search
        repeats = 0
        while tuner.candidates is None or self.proposed < tuner.candidates:
            if repeats == CONVERGED_AFTER:
                self.stopped = "converged"
                return
            options = search.propose()
            key = options.to_json()
            known = self.measured.get(key)
            if key in self.running or known is not None or key in self.pruned:
                repeats += 1
                if key not in self.running:
                    search.tell(options, math.inf if known is None else known.time)
                continue
            repeats = 0
            reason = tuner.space.prune(options)
            if reason is not None:
                log.info("candidate %s pruned: %s", options, reason)
                self.pruned[key] = reason
                search.tell(options, math.inf)
                continue
            self.running.add(key)
            self.proposed += 1
            yield options

    def record(self, outcome: Outcome) -> None:
        """Store a measurement, tell the search; keep the code of a new best; report progress."""
        tuner = self.tuner
        key = outcome.options.to_json()
        self.running.discard(key)
        self.done += 1
        self.failed += outcome.error is not None
        self.measured[key] = outcome
        tuner.cache.record(tuner.key, outcome.options, outcome.seconds, outcome.error)
        tuner.search.tell(outcome.options, outcome.time)
        improved = outcome.seconds is not None and (self.best is None or outcome.time < self.best.time)
        if improved:
            self.best = outcome
            if outcome.artifact is not None and not outcome.from_cache:
                tuner.cache.put_code(tuner.key, outcome.options, outcome.artifact)
        if tuner.on_progress is not None:
            tuner.on_progress(
                Progress(
                    self.done,
                    tuner.candidates,
                    len(self.measured),
                    self.failed,
                    len(self.pruned),
                    self.best,
                    outcome,
                    improved,
                    self.elapsed,
                    self.default_seconds,
                )
            )

    def time_baseline(self, benchmark: Benchmark) -> None:
        """Time a call without options (see `baseline`) as the candidates are
        timed (checked, then the median of timed runs) and record it as
        options None."""
        tuner = self.tuner
        try:
            artifact = build_artifact(tuner.ir, tuner.binding, None, tuner.backend)
            seconds = self._profiler(benchmark)(artifact.to_json())
        except Exception as e:  # noqa: BLE001  (the candidates are then compared with nothing)
            log.warning("tuner: timing a call without options failed: %s", e)
            return
        tuner.cache.record(tuner.key, None, seconds)
        self.baseline = artifact, seconds

    def _profiler(self, benchmark: Benchmark) -> Profiler:
        """A profiler in this process, as the profile workers time candidates."""
        tuner = self.tuner
        return Profiler(
            tuner.backend, _current_device(tuner.backend), tuner.timing_inputs, benchmark.expected,
            output_specs(benchmark.problem),
        )

    def result(self) -> TuningResult:
        if self.best is None:
            if not self.measured and self.tuner.max_time is not None:  # ran out before any measurement
                raise TCError(
                    f"tuner: no candidate was measured within max_time={self.tuner.max_time:g} s "
                    "(making the inputs and compiling take longer: give it more time)"
                )
            reasons = "; ".join(sorted({o.error or "" for o in self.measured.values()})[:3])
            raise TCError(f"tuner: no candidate compiled and ran correctly ({reasons})")
        best, seconds = self.best.options, self.best.time
        if self.baseline_won:
            best, seconds = None, self.verified_default
        assert seconds is not None
        return TuningResult(
            best,
            seconds,
            self.default_seconds,
            self.stopped,
            list(self.measured.values()),
            len(self.pruned),
            self.usage,
        )

    @property
    def default_seconds(self) -> float | None:
        """The time of a call without options: the canonical loops on the
        CPU, the default mapping on the GPU (its parts, where it lowers the
        def in parts; as timed again by `verify`)."""
        if self.verified_default is not None:
            return self.verified_default
        if self.baseline is not None or self.tuner.backend == "cpu":
            return None if self.baseline is None else self.baseline[1]
        default = self.measured.get(self.tuner.default.to_json())
        return None if default is None else default.seconds

    def verify(self, benchmark: Benchmark) -> None:
        """Time the best candidate and the default (what a call without
        options runs) `VERIFY_ROUNDS` times each, alternately, in this
        process, and record those times; the best is then the faster of the
        two by the medians of all their times (the default on a tie), its
        code kept. Not on the simulated GPU, whose times are the interpreter's."""
        tuner = self.tuner
        best = self.best
        if tuner.backend == "cuda-sim" or best is None:
            return  # the simulator's times are not a GPU's
        contenders: list[tuple[MappingOptions | None, float, Artifact | None]]
        if self.baseline is not None:
            contenders = [(None, self.baseline[1], self.baseline[0])]
        elif tuner.backend == "cpu":
            return
        else:
            default = self.measured.get(tuner.default.to_json())
            if default is None or default.seconds is None or best.options == default.options:
                return
            contenders = [(default.options, default.time, default.artifact)]
        contenders.append((best.options, best.time, best.artifact))
        artifacts = [a or tuner.cache.get_code(tuner.key, o) for o, _, a in contenders]
        if any(a is None for a in artifacts):
            return
        try:
            profiler = self._profiler(benchmark)
            times: list[list[float]] = [[], []]
            for _ in range(VERIFY_ROUNDS):
                for measured, artifact in zip(times, artifacts):
                    measured.append(profiler(artifact.to_json()))  # type: ignore[union-attr]
        except Exception as e:  # noqa: BLE001  (the search's result stands)
            log.warning("tuner: timing the best and the default again failed: %s", e)
            return
        for (options, _, _), measured in zip(contenders, times):
            for seconds in measured:
                tuner.cache.record(tuner.key, options, seconds)
        # Each by the median of all its times, as the cache ranks them.
        medians = [statistics.median([first, *measured]) for (_, first, _), measured in zip(contenders, times)]
        winner = 1 if medians[1] < medians[0] else 0
        self.verified_default = medians[0]
        options = contenders[winner][0]
        if options is None:  # the baseline: calls keep it (the cache's best says so)
            self.baseline_won = True
            return
        self.best = Outcome(options, medians[winner], artifact=artifacts[winner])
        if tuner.cache.get_code(tuner.key, options) is None:
            tuner.cache.put_code(tuner.key, options, artifacts[winner])  # type: ignore[arg-type]


def _current_device(backend: str) -> int:
    """The GPU the tuner's process uses (0 off CUDA)."""
    if backend != "cuda":
        return 0
    from tcir.backends.cuda.runtime import current_device

    return current_device()


def _def_ir(function: DefIR | Any) -> DefIR:
    """A `DefIR`, or what an object exposing one as `def_ir` (a `tcir.Function`) holds."""
    ir = getattr(function, "def_ir", function)
    if not isinstance(ir, DefIR):
        raise TCError(f"tuner: expected a def (mod.name), got {type(function).__name__}")
    return ir


def tune(
    function: DefIR | Any,
    *inputs: Any,
    candidates: int | None = CANDIDATES,
    population: int = POPULATION,
    timeout: float = 60.0,
    backend: str | None = None,
    verbose: bool = True,
    **knobs: Any,
) -> MappingOptions | None:
    """Autotune a def (`mod.name`) for the shapes and dtypes of `inputs`; returns the
    best options found, which are also stored in the compilation cache (later
    calls with these shapes use them); None where no candidate beat a call
    without options where no options stand for one (the CPU's canonical
    loops; on the GPU, a def the default mapping lowers in parts, as a
    padded convolution's zero-padded copy): calls then keep it.

    With `verbose` (the default), the run says what it does as `tcir-tune`
    does (`tcir.tuner.report`): a live line through `rich` on a terminal or
    in a notebook, else log records at INFO (logger `tcir.tuner`), and the
    same summary at the end.

    `candidates` is how many candidates to measure (`None`: until
    `max_time`; the run also ends when the search proposes nothing new),
    `population` how many of the fastest the genetic search breeds from,
    `timeout` bounds each candidate's compilation and each profiling run, in
    seconds. Further knobs (see `Tuner`): `max_time` (seconds from the call; past
    it, the jobs still running are cancelled), `search` ("genetic", "random" or
    "tpe": Optuna's TPE sampler), `mutation_rate` and `elites` (genetic),
    `seed`, `workers` (compile processes), `cache`, `space`, `on_progress`,
    `resume` (count the cached measurements of this problem as done),
    `cluster` (a Dask address, "local" or a `distributed.Client`).
    """
    check_keywords("tune()", knobs, TUNE_KEYWORDS)
    from tcir.tuner.report import Display, ProgressReport, summary, varied_fields

    display = Display.make(printing=False) if verbose else None
    callbacks = [knobs.pop("on_progress", None), ProgressReport(display) if display else None]

    def on_progress(progress: Progress) -> None:
        for callback in callbacks:
            if callback is not None:
                callback(progress)

    tuner = Tuner(
        function,
        inputs,
        backend=backend,
        candidates=candidates,
        population=population,
        timeout=timeout,
        on_progress=on_progress,
        **knobs,
    )
    if display is None:
        return tuner.run().best
    shown = ", ".join(f"{n}={v}" for n, v in tuner.binding.sizes.items())
    display.line(f"tuning {tuner.definition.name}({shown}) on {tuner.backend}")
    try:
        result = tuner.run()
    finally:
        display.close()
    for line in summary(result, tuner.definition.name, tuner.backend, tuner.cache.path, varied_fields(tuner.space)):
        display.line(line)
    return result.best


TUNE_KEYWORDS = (*tuple(inspect.signature(Tuner).parameters)[2:], "verbose")
"""The keyword arguments of `tune` (those of `Tuner`, and `verbose`)."""
