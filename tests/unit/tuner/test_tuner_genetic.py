"""Genetic search: parent selection, three-parent crossover, mutation, generations."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from tuner_helpers import tmm

import tcir
from tcir.tuner.genetic import (
    GeneticSearch,
    RandomSearch,
    crossover,
    distinct,
    fitness,
    mutate,
    select_parents,
)
from tcir.tuner.space import SearchSpace


@pytest.fixture
def space() -> SearchSpace:
    return SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cpu")


def test_fitness_is_inverse_runtime():
    assert fitness(0.5) == 2.0
    assert fitness(math.inf) == 0.0


def test_selection_prefers_fast_candidates():
    fast, slow, broken = (tcir.MappingOptions(unroll=u) for u in (2, 4, 8))
    scored = [(fast, 1e-3), (slow, 1e-1), (broken, math.inf)]
    picks = Counter(o.unroll for o in select_parents(scored, random.Random(0), 3000))
    assert picks[2] > 50 * picks[4] and picks[8] == 0


def test_selection_is_uniform_when_everything_failed():
    scored = [(tcir.MappingOptions(unroll=u), math.inf) for u in (1, 2)]
    picks = Counter(o.unroll for o in select_parents(scored, random.Random(0), 1000))
    assert picks[1] > 300 and picks[2] > 300


def test_three_parent_uniform_crossover(space):
    parents = [space.random_genes(random.Random(k)) for k in range(3)]
    rng = random.Random(1)
    children = [crossover(parents, rng) for _ in range(200)]
    for child in children:
        assert set(child) == set(parents[0])
        assert all(child[g] in {p[g] for p in parents} for g in child)
    contributed = {
        k for child in children for g in child for k, p in enumerate(parents) if child[g] == p[g]
    }
    assert contributed == {0, 1, 2}


def test_mutation_rate(space):
    genes = space.encode(tcir.MappingOptions())
    rng = random.Random(0)
    assert mutate(genes, space, rng, 0.0) == genes
    values = {g.name: g.values for g in space.genes}
    changed = 0
    for _ in range(50):
        mutated = mutate(genes, space, rng, 1.0)
        assert all(mutated[n] in values[n] for n in mutated)
        changed += mutated != genes
    assert changed > 40


def test_generations_keep_seeds_elites_and_size(space):
    seeds = [tcir.MappingOptions(), tcir.MappingOptions(tile=[8, 8, 8]), tcir.MappingOptions()]
    search = GeneticSearch(space, 6, random.Random(3), mutation_rate=0.2, elites=1)
    first = search.initial(seeds)
    assert first[:2] == distinct(seeds) and len(first) == 6
    assert len(distinct(first)) == 6
    scored = [(o, 1e-3 * (k + 1)) for k, o in enumerate(first)]
    second = search.next(scored)
    assert len(second) == 6 and second[0] == first[0], "the elite survives"


def test_genetic_search_is_deterministic(space):
    def run():
        search = GeneticSearch(space, 5, random.Random(11))
        population = search.initial([tcir.MappingOptions()])
        return search.next([(o, 1.0 + k) for k, o in enumerate(population)])

    assert run() == run()


def test_random_search(space):
    search = RandomSearch(space, 4, random.Random(0))
    assert search.initial([tcir.MappingOptions()])[0] == tcir.MappingOptions()
    assert len(search.next([])) == 4


def test_bad_knobs_are_user_errors(space):
    with pytest.raises(tcir.TCError):
        GeneticSearch(space, 0)
    with pytest.raises(tcir.TCError):
        GeneticSearch(space, 4, mutation_rate=2.0)
