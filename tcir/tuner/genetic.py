"""Search strategies over a `SearchSpace`: the paper's genetic search, and random search.

A search proposes one candidate at a time (`propose`) and learns each
measurement as it comes (`tell`, `inf` seconds for a candidate that failed),
so that the tuner can ask for the next candidate whenever a compile slot
frees instead of waiting for a whole generation (a steady-state search). Both
start with the seed options (the defaults and the best options known for
similar kernels).

Genetic search (Goldberg; TC paper section 5.2), steady state: the
population is the `population` fastest candidates measured so far. The
first `population` proposals are the seeds and random candidates, as the
paper's first generation, and proposals stay random until that many
candidates are measured. After that every proposal is a child of three
parents from the population, each the fastest of `TOURNAMENT_SIZE` drawn at
random (tournament selection: fitness, inversely proportional to runtime,
decides), except that one parent is one of the `elites` fastest when
`elites` > 0; each gene comes from one of the three parents (three-parent
uniform crossover), then is re-drawn from the space with probability
`mutation_rate`.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.tuner.space import Genes, SearchSpace

Scored = Sequence[tuple[MappingOptions, float]]
"""Measured candidates: options and their runtime in seconds (`inf` if failed)."""

TOURNAMENT_SIZE = 2
"""Candidates drawn for each parent; the fastest of them is the parent."""


def distinct(options: Sequence[MappingOptions]) -> list[MappingOptions]:
    """`options` without repeats, in order (options are unhashable: compared by JSON)."""
    seen: dict[str, MappingOptions] = {}
    for o in options:
        seen.setdefault(o.to_json(), o)
    return list(seen.values())


def tournament(scored: Scored, rng: random.Random, size: int = TOURNAMENT_SIZE) -> MappingOptions:
    """The fastest of `size` candidates of `scored` drawn at random (with repeats)."""
    return min((rng.choice(scored) for _ in range(size)), key=lambda s: s[1])[0]


def crossover(parents: Sequence[Genes], rng: random.Random) -> Genes:
    """Uniform crossover: each gene comes from a parent chosen at random."""
    return {name: rng.choice(parents)[name] for name in parents[0]}


def mutate(genes: Genes, space: SearchSpace, rng: random.Random, rate: float) -> Genes:
    """`genes` with each gene re-drawn from `space` with probability `rate`."""
    mutated = dict(genes)
    for gene in space.genes:
        if rng.random() < rate:
            mutated[gene.name] = rng.choice(gene.values)
    return mutated


class Search(Protocol):
    """A steady-state search strategy (see the module docstring)."""

    def start(self, seeds: Sequence[MappingOptions]) -> None:
        """Propose `seeds` first."""

    def propose(self) -> MappingOptions:
        """The next candidate to measure (possibly one measured already)."""

    def tell(self, options: MappingOptions, seconds: float) -> None:
        """The time of a candidate measured (`inf` if it failed or cannot run)."""


@dataclass
class RandomSearch:
    """Seeds first, then uniformly random candidates."""

    space: SearchSpace
    rng: random.Random = field(default_factory=random.Random)
    _seeds: deque[MappingOptions] = field(default_factory=deque, init=False, repr=False)

    def start(self, seeds: Sequence[MappingOptions]) -> None:
        self._seeds = deque(distinct(seeds))

    def propose(self) -> MappingOptions:
        return self._seeds.popleft() if self._seeds else self.space.random(self.rng)

    def tell(self, options: MappingOptions, seconds: float) -> None:
        pass


@dataclass
class GeneticSearch(RandomSearch):
    """The paper's genetic search, steady state (see the module docstring)."""

    population: int = 16
    mutation_rate: float = 0.1
    elites: int = 1
    _times: dict[str, tuple[MappingOptions, float]] = field(default_factory=dict, init=False, repr=False)
    """The best time of every candidate measured, by options JSON."""

    def __post_init__(self) -> None:
        if self.population < 1:
            raise TCError(f"tuner: population must be at least 1, got {self.population}")
        if not 0 <= self.mutation_rate <= 1:
            raise TCError(f"tuner: mutation rate must be in [0, 1], got {self.mutation_rate}")
        if self.elites < 0:
            raise TCError(f"tuner: elites must be non-negative, got {self.elites}")

    def start(self, seeds: Sequence[MappingOptions]) -> None:
        super().start(distinct(seeds)[: self.population])

    def tell(self, options: MappingOptions, seconds: float) -> None:
        key = options.to_json()
        known = self._times.get(key)
        if known is None or seconds < known[1]:
            self._times[key] = (options, seconds)

    def members(self) -> list[tuple[MappingOptions, float]]:
        """The population: the `population` fastest candidates measured, fastest first."""
        return sorted(self._times.values(), key=lambda s: s[1])[: self.population]

    def propose(self) -> MappingOptions:
        if self._seeds or len(self._times) < self.population:
            return super().propose()
        return self.breed(self.members())

    def breed(self, population: Scored) -> MappingOptions:
        """A child of three parents of `population` (fastest first), mutated."""
        parents = [tournament(population, self.rng) for _ in range(3)]
        if self.elites:
            parents[0] = self.rng.choice(population[: self.elites])[0]
        genes = mutate(
            crossover([self.space.encode(p) for p in parents], self.rng),
            self.space,
            self.rng,
            self.mutation_rate,
        )
        return self.space.decode(genes)
