"""TPE search (Optuna's Tree-structured Parzen Estimator) over a `SearchSpace`.

The same protocol as the genetic search (`tcir.tuner.genetic.Search`): seeds
first, then one generation of `population` candidates per measured one. Each
candidate is an Optuna trial of an in-memory study (ask-and-tell), one
categorical parameter per gene over the *indices* of the gene's values (the
values themselves mix None, bools, ints and strings). The seeds are enqueued
as the first trials, so TPE starts from the default and the cached best
options; after `startup_trials` measured candidates it samples from the
multivariate TPE model of all measurements so far.

Optuna is imported only by this module (only `search="tpe"` needs it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.trial import Trial, TrialState

from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.tuner.genetic import ATTEMPTS_PER_SLOT, Scored, distinct
from tcir.tuner.space import Gene, SearchSpace

STARTUP_TRIALS = 10
"""Random candidates (seeds included) before TPE models the measurements."""

FAILED_SECONDS = 1e9
"""What a failed candidate is told. TPE only ranks the values (it splits the
trials into the best fraction and the rest), so any value behind every real
runtime works, and a failure told this way teaches TPE to avoid its region
(a compile error, a timeout); a trial told `TrialState.FAIL` would be ignored
by the model, which would keep proposing candidates like it."""


def gene_index(gene: Gene, value: Any) -> int | None:
    """The index of `value` among `gene`'s values, else of the nearest size
    (by ratio) for an int outside them, else None."""
    for k, v in enumerate(gene.values):
        if type(v) is type(value) and v == value:  # True == 1, but not as genes
            return k
    sizes = [
        (abs(math.log(v / value)), k)
        for k, v in enumerate(gene.values)
        if type(v) is int and type(value) is int and value > 0 and v > 0
    ]
    return min(sizes)[1] if sizes else None


@dataclass
class TPESearch:
    """Seeds first, then candidates proposed by Optuna's TPE sampler (see the
    module docstring). The same `seed` gives the same candidates for the same
    measurements."""

    space: SearchSpace
    population: int
    seed: int | None = 0
    startup_trials: int | None = None
    """Random candidates before TPE takes over; default `min(10, population)`,
    so TPE proposes from the second generation on."""
    study: optuna.Study = field(init=False, repr=False)
    _distributions: dict[str, BaseDistribution] = field(init=False, repr=False)
    _pending: dict[str, list[Trial]] = field(init=False, repr=False)
    """The trials of the last generation not yet told, by options JSON."""
    _measured: dict[str, float] = field(init=False, repr=False)
    """The seconds (`inf` if failed) of every candidate measured, by options JSON."""

    def __post_init__(self) -> None:
        if self.population < 1:
            raise TCError(f"tuner: population must be at least 1, got {self.population}")
        startup = (
            min(STARTUP_TRIALS, self.population)
            if self.startup_trials is None
            else self.startup_trials
        )
        if startup < 0:
            raise TCError(f"tuner: startup trials must be non-negative, got {startup}")
        # Optuna logs every trial at INFO on its own logger ("optuna"): keep
        # warnings only, leaving the program's other logging alone.
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(
            seed=self.seed,
            n_startup_trials=startup,
            # Genes interact (tile sizes with each other and with unrolling).
            multivariate=True,
            # A generation is asked before any of it is measured: the trials
            # in flight count as bad ones, so one generation spreads out.
            constant_liar=True,
        )
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self._distributions = {
            g.name: CategoricalDistribution(tuple(range(len(g.values)))) for g in self.space.genes
        }
        self._pending = {}
        self._measured = {}

    def _decode(self, trial: Trial) -> MappingOptions:
        return self.space.decode({g.name: g.values[trial.params[g.name]] for g in self.space.genes})

    def _tell(self, trial: Trial, seconds: float) -> None:
        self.study.tell(trial, seconds if math.isfinite(seconds) else FAILED_SECONDS)

    def _enqueue(self, seed: MappingOptions) -> None:
        """A trial at `seed`'s genes (the nearest sizes for sizes outside the
        space), measured as `seed` itself; none if a gene has no counterpart."""
        genes = self.space.encode(seed)
        params = {g.name: gene_index(g, genes[g.name]) for g in self.space.genes}
        if any(k is None for k in params.values()):
            return
        self.study.enqueue_trial(params)
        trial = self.study.ask(self._distributions)
        self._pending.setdefault(seed.to_json(), []).append(trial)

    def _fill(self, chosen: list[MappingOptions]) -> list[MappingOptions]:
        """`chosen` topped up with new candidates from the sampler. A proposal
        already measured is told its time and asked again; one already in this
        generation is kept aside (told its twin's time later) and asked again;
        after `ATTEMPTS_PER_SLOT` tries per slot any proposal is accepted."""
        keys = {o.to_json() for o in chosen}
        attempts = 0
        while len(chosen) < self.population:
            trial = self.study.ask(self._distributions)
            candidate = self._decode(trial)
            key = candidate.to_json()
            attempts += 1
            exhausted = attempts > ATTEMPTS_PER_SLOT * self.population
            if key in self._measured:
                self._tell(trial, self._measured[key])
            else:
                self._pending.setdefault(key, []).append(trial)
            if exhausted or (key not in keys and key not in self._measured):
                chosen.append(candidate)
                keys.add(key)
        return chosen

    def initial(self, seeds: Sequence[MappingOptions]) -> list[MappingOptions]:
        unique = distinct(seeds)[: self.population]
        for seed in unique:
            self._enqueue(seed)
        return self._fill(unique)

    def next(self, scored: Scored) -> list[MappingOptions]:
        for options, seconds in scored:
            key = options.to_json()
            self._measured[key] = min(seconds, self._measured.get(key, math.inf))
        for key, trials in self._pending.items():
            for trial in trials:
                if key in self._measured:
                    self._tell(trial, self._measured[key])
                else:  # not measured (not in `scored`): nothing to learn from it
                    self.study.tell(trial, state=TrialState.FAIL)
        self._pending = {}
        return self._fill([])
