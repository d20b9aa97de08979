"""The autotuner, and what calls of a def use from the cache.

    best = tune(mod.mm, A, B, generations=5, population=16)   # or mod.mm.tune(A, B)

`tune` searches mapping options for one def on concrete inputs (their shapes
and dtypes; the values are the test data each candidate is checked on), with
the paper's genetic search seeded by the default options and the best known
options of the same TC at other shapes. Every measurement and, as the search
goes, the code of the best version land in the compilation cache, so a tuner
killed midway leaves the best found so far. (`tcir.compiler.compiled` is how
`Function.__call__` uses the cache.)
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcir.compiler.artifacts import target_architecture
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.compiled import open_cache
from tcir.compiler.lowering import DefIR, default_options
from tcir.compiler.options import MappingOptions
from tcir.compiler.targets import resolve_backend
from tcir.errors import TCError
from tcir.frontend.ast import CheckedDef
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind
from tcir.tuner.evaluate import Evaluator, Outcome, Problem
from tcir.tuner.genetic import GeneticSearch, RandomSearch, Search, distinct
from tcir.tuner.space import SearchSpace

log = logging.getLogger(__name__)

SEARCHES = ("genetic", "random")


@dataclass(frozen=True)
class Progress:
    """The tuner's state after each measured candidate."""

    generation: int
    """1-based."""
    generations: int
    done: int
    """Candidates measured in this generation so far."""
    pending: int
    """Candidates this generation measures in all."""
    measured: int
    failed: int
    best: Outcome | None
    last: Outcome
    elapsed: float

    @property
    def rate(self) -> float:
        """Candidates per second since the tuner started."""
        return self.measured / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class TuningResult:
    """The best options found, their time and the default options' time."""

    best: MappingOptions
    best_seconds: float
    default_seconds: float | None
    generations: int
    """Generations completed."""
    outcomes: list[Outcome] = field(repr=False)
    """Every candidate measured, in order."""

    @property
    def speedup(self) -> float | None:
        """Default time over best time (None if the default failed)."""
        if self.default_seconds is None:
            return None
        return self.default_seconds / self.best_seconds


def _to_numpy(value: Any) -> Any:
    """An input as a numpy array (copied from a GPU) or as the scalar it is."""
    if not hasattr(value, "shape"):
        return value
    if hasattr(value, "__cuda_array_interface__") and hasattr(value, "get"):
        return value.get()  # cupy
    if type(value).__module__.startswith("torch"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class Tuner:
    """One tuning session of a def on `inputs` (see `tune` for the knobs)."""

    def __init__(
        self,
        function: DefIR | Any,
        inputs: Sequence[Any],
        *,
        backend: str | None = None,
        generations: int = 5,
        population: int = 16,
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
    ):
        if generations < 1:
            raise TCError(f"tuner: generations must be at least 1, got {generations}")
        if search not in SEARCHES:
            raise TCError(f"tuner: search must be one of {', '.join(SEARCHES)}, got '{search}'")
        self.backend = resolve_backend(backend, tuple(inputs))
        self.definition: CheckedDef = _def_ir(function).definition
        self.inputs = [_to_numpy(a) for a in inputs]
        self.binding = bind(self.definition, self.inputs)
        self.generations = generations
        self.max_time = max_time
        self.timeout = timeout
        self.workers = workers
        self.on_progress = on_progress
        self.cache = open_cache(cache)
        self.key = ProblemKey.of(
            self.definition, self.binding.sizes, target_architecture(self.backend)
        )
        self.space = space or SearchSpace.build(self.definition, self.binding.sizes, self.backend)
        self.default = default_options(self.definition, self.binding)
        """What a call without options uses on the GPU (the seed to beat)."""
        rng = random.Random(seed)
        self.search: Search = (
            GeneticSearch(self.space, population, rng, mutation_rate, elites)
            if search == "genetic"
            else RandomSearch(self.space, population, rng)
        )

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

    def run(self) -> TuningResult:
        """Tune; the best options are in the cache as soon as they are measured."""
        expected = reference_outputs(self.definition, self.binding)
        problem = Problem(self.definition, dict(self.binding.sizes), self.backend)
        session = _Session(self, time.monotonic())
        population = self.search.initial(self.seeds())
        with Evaluator(
            problem,
            self.inputs,
            expected,
            workers=self.workers,
            timeout=self.timeout,
            devices=self._devices(),
            cache=self.cache,
            key=self.key,
        ) as evaluator:
            for generation in range(1, self.generations + 1):
                if self.max_time is not None and session.elapsed > self.max_time:
                    break
                fresh = distinct([c for c in population if c.to_json() not in session.measured])
                session.begin(generation, len(fresh))
                evaluator.evaluate(fresh, session.record)
                session.completed = generation
                if generation < self.generations:
                    scored = [(c, session.measured[c.to_json()].time) for c in population]
                    population = self.search.next(scored)
        return session.result()


class _Session:
    """The measurements of one `Tuner.run`, recorded in the cache as they come."""

    def __init__(self, tuner: Tuner, start: float):
        self.tuner = tuner
        self.start = start
        self.measured: dict[str, Outcome] = {}
        self.best: Outcome | None = None
        self.failed = 0
        self.generation = self.done = self.pending = self.completed = 0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def begin(self, generation: int, pending: int) -> None:
        self.generation, self.done, self.pending = generation, 0, pending

    def record(self, outcome: Outcome) -> None:
        """Store a measurement; keep the code of a new best; report progress."""
        tuner = self.tuner
        self.done += 1
        self.failed += outcome.error is not None
        self.measured[outcome.options.to_json()] = outcome
        tuner.cache.record(tuner.key, outcome.options, outcome.seconds, outcome.error)
        if outcome.seconds is not None and (self.best is None or outcome.time < self.best.time):
            self.best = outcome
            if outcome.artifact is not None and not outcome.from_cache:
                tuner.cache.put_code(tuner.key, outcome.options, outcome.artifact)
        if tuner.on_progress is not None:
            tuner.on_progress(
                Progress(
                    self.generation,
                    tuner.generations,
                    self.done,
                    self.pending,
                    len(self.measured),
                    self.failed,
                    self.best,
                    outcome,
                    self.elapsed,
                )
            )

    def result(self) -> TuningResult:
        if self.best is None:
            reasons = "; ".join(sorted({o.error or "" for o in self.measured.values()})[:3])
            raise TCError(f"tuner: no candidate compiled and ran correctly ({reasons})")
        default = self.measured.get(self.tuner.default.to_json())
        return TuningResult(
            self.best.options,
            self.best.time,
            None if default is None else default.seconds,
            self.completed,
            list(self.measured.values()),
        )


def _def_ir(function: DefIR | Any) -> DefIR:
    """A `DefIR`, or what an object exposing one as `def_ir` (a `tcir.Function`) holds."""
    ir = getattr(function, "def_ir", function)
    if not isinstance(ir, DefIR):
        raise TCError(f"tuner: expected a def (mod.name), got {type(function).__name__}")
    return ir


def tune(
    function: DefIR | Any,
    *inputs: Any,
    generations: int = 5,
    population: int = 16,
    timeout: float = 60.0,
    backend: str | None = None,
    **knobs: Any,
) -> MappingOptions:
    """Autotune a def (`mod.name`) for the shapes and dtypes of `inputs`; returns the
    best options found, which are also stored in the compilation cache (later
    calls with these shapes use them).

    `timeout` bounds each candidate's compilation and each profiling run, in
    seconds. Further knobs (see `Tuner`): `max_time` (seconds, checked between
    generations), `search` ("genetic" or "random"), `mutation_rate`, `elites`,
    `seed`, `workers` (compile processes), `cache`, `space`, `on_progress`.
    """
    tuner = Tuner(
        function,
        inputs,
        backend=backend,
        generations=generations,
        population=population,
        timeout=timeout,
        **knobs,
    )
    return tuner.run().best
