"""Search strategies over a `SearchSpace`: the paper's genetic search, and random search.

Both start from seed options (the defaults and the best options known for
similar kernels) and propose one generation of candidates at a time; the
tuner measures them and hands back `(options, seconds)` pairs, `inf` for a
candidate that failed.

Genetic search (Goldberg; TC paper section 5.2): fitness is inversely
proportional to runtime; the best `elites` candidates survive unchanged; every
other child takes each gene from one of three parents picked with probability
proportional to fitness (three-parent uniform crossover), then each gene is
re-drawn from the space with probability `mutation_rate`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tcir.errors import TCError
from tcir.compiler.options import MappingOptions
from tcir.tuner.space import Genes, SearchSpace

Scored = Sequence[tuple[MappingOptions, float]]
"""A measured generation: options and their runtime in seconds (`inf` if failed)."""

ATTEMPTS_PER_SLOT = 20
"""Tries to breed a candidate not yet in the generation before accepting any."""


def distinct(options: Sequence[MappingOptions]) -> list[MappingOptions]:
    """`options` without repeats, in order (options are unhashable: compared by JSON)."""
    seen: dict[str, MappingOptions] = {}
    for o in options:
        seen.setdefault(o.to_json(), o)
    return list(seen.values())


def fitness(seconds: float) -> float:
    """Inversely proportional to runtime; 0 for a failed candidate."""
    return 0.0 if not math.isfinite(seconds) or seconds <= 0 else 1.0 / seconds


def select_parents(scored: Scored, rng: random.Random, count: int = 3) -> list[MappingOptions]:
    """`count` parents drawn with probability proportional to fitness
    (uniformly when nothing has a positive fitness)."""
    weights = [fitness(t) for _, t in scored]
    if not any(weights):
        weights = [1.0] * len(scored)
    return [o for o, _ in rng.choices(list(scored), weights=weights, k=count)]


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
    """A search strategy: the first generation, then one from each measured one."""

    def initial(self, seeds: Sequence[MappingOptions]) -> list[MappingOptions]: ...

    def next(self, scored: Scored) -> list[MappingOptions]: ...


@dataclass
class RandomSearch:
    """Seeds first, then uniformly random candidates."""

    space: SearchSpace
    population: int
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        if self.population < 1:
            raise TCError(f"tuner: population must be at least 1, got {self.population}")

    def _fill(self, chosen: list[MappingOptions]) -> list[MappingOptions]:
        """`chosen` topped up with distinct random candidates (duplicates when
        the space is nearly exhausted)."""
        attempts = 0
        while len(chosen) < self.population:
            candidate = self.space.random(self.rng)
            attempts += 1
            if candidate not in chosen or attempts > ATTEMPTS_PER_SLOT * self.population:
                chosen.append(candidate)
        return chosen

    def initial(self, seeds: Sequence[MappingOptions]) -> list[MappingOptions]:
        unique = distinct(seeds)[: self.population]
        return self._fill(unique)

    def next(self, scored: Scored) -> list[MappingOptions]:
        return self._fill([])


@dataclass
class GeneticSearch(RandomSearch):
    """The paper's genetic search (see the module docstring)."""

    mutation_rate: float = 0.1
    elites: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.mutation_rate <= 1:
            raise TCError(f"tuner: mutation rate must be in [0, 1], got {self.mutation_rate}")
        if self.elites < 0:
            raise TCError(f"tuner: elites must be non-negative, got {self.elites}")

    def breed(self, scored: Scored) -> MappingOptions:
        """One child of three fitness-selected parents, mutated."""
        parents = [self.space.encode(p) for p in select_parents(scored, self.rng)]
        child = mutate(crossover(parents, self.rng), self.space, self.rng, self.mutation_rate)
        return self.space.decode(child)

    def next(self, scored: Scored) -> list[MappingOptions]:
        ranked = sorted((s for s in scored if math.isfinite(s[1])), key=lambda s: s[1])
        children = distinct([o for o, _ in ranked])[: self.elites]
        attempts = 0
        while len(children) < self.population:
            child = self.breed(scored)
            attempts += 1
            if child not in children or attempts > ATTEMPTS_PER_SLOT * self.population:
                children.append(child)
        return children
