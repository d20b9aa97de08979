"""TPE search (Optuna's Tree-structured Parzen Estimator) over a `SearchSpace`.

The same steady-state protocol as the genetic search
(`tcir.tuner.genetic.Search`): seeds first, then one candidate per
`propose`, each measurement told as it comes. Each candidate is an Optuna
trial of an in-memory study (ask-and-tell, which allows any number of
trials in flight), one categorical parameter per gene over the *indices* of
the gene's values (the values themselves mix None, bools, ints and
strings). The seeds are enqueued as the first trials, so TPE starts from the
default and the cached best options; a measurement of a candidate no trial
proposed (of a resumed run) is added as a finished trial. After
`startup_trials` trials TPE samples from the multivariate TPE model of all
measurements so far.

Optuna is imported only by this module (only `search="tpe"` needs it).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.trial import Trial, create_trial

from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.tuner.genetic import distinct
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
    measurements told in the same order."""

    space: SearchSpace
    seed: int | None = 0
    startup_trials: int = STARTUP_TRIALS
    study: optuna.Study = field(init=False, repr=False)
    _distributions: dict[str, BaseDistribution] = field(init=False, repr=False)
    _seeds: deque[MappingOptions] = field(default_factory=deque, init=False, repr=False)
    _pending: dict[str, list[Trial]] = field(default_factory=dict, init=False, repr=False)
    """The trials proposed and not yet told, by options JSON."""

    def __post_init__(self) -> None:
        if self.startup_trials < 0:
            raise TCError(f"tuner: startup trials must be non-negative, got {self.startup_trials}")
        # Optuna logs every trial at INFO on its own logger ("optuna"): keep
        # warnings only, leaving the program's other logging alone.
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(
            seed=self.seed,
            n_startup_trials=self.startup_trials,
            # Genes interact (tile sizes with each other and with unrolling).
            multivariate=True,
            # Candidates are asked while others are measured: the trials in
            # flight count as bad ones, so concurrent proposals spread out.
            constant_liar=True,
        )
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self._distributions = {
            g.name: CategoricalDistribution(tuple(range(len(g.values)))) for g in self.space.genes
        }

    def _params(self, options: MappingOptions) -> dict[str, int] | None:
        """The trial parameters of `options`' genes (the nearest sizes for
        sizes outside the space); None if a gene has no counterpart."""
        genes = self.space.encode(options)
        params = {g.name: gene_index(g, genes[g.name]) for g in self.space.genes}
        return None if any(k is None for k in params.values()) else params  # type: ignore[return-value]

    def start(self, seeds: Sequence[MappingOptions]) -> None:
        self._seeds = deque(distinct(seeds))
        for seed in self._seeds:
            params = self._params(seed)
            if params is not None:
                self.study.enqueue_trial(params)

    def propose(self) -> MappingOptions:
        """A seed (as a trial at its genes, when it has them), else TPE's
        next candidate."""
        if self._seeds:
            seed = self._seeds.popleft()
            if self._params(seed) is not None:
                self._pending.setdefault(seed.to_json(), []).append(self.study.ask(self._distributions))
            return seed
        trial = self.study.ask(self._distributions)
        genes = {g.name: g.values[trial.params[g.name]] for g in self.space.genes}
        candidate = self.space.decode(genes)
        self._pending.setdefault(candidate.to_json(), []).append(trial)
        return candidate

    def tell(self, options: MappingOptions, seconds: float) -> None:
        """Tell every trial that proposed `options` its time; a measurement no
        trial proposed becomes a finished trial."""
        value = seconds if math.isfinite(seconds) else FAILED_SECONDS
        trials = self._pending.pop(options.to_json(), [])
        for trial in trials:
            self.study.tell(trial, value)
        params = self._params(options)
        if not trials and params is not None:
            self.study.add_trial(
                create_trial(params=params, distributions=self._distributions, value=value)
            )
