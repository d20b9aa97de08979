"""Genetic search, steady state: tournament selection, three-parent crossover,
mutation, the population of the fastest candidates measured, seeds first."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from tuner_helpers import tmm

import tcir
from tcir.tuner.genetic import GeneticSearch, RandomSearch, crossover, distinct, mutate, tournament
from tcir.tuner.space import SearchSpace


@pytest.fixture
def space() -> SearchSpace:
    return SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cpu")


def test_tournament_prefers_fast_candidates():
    fast, slow, broken = (tcir.MappingOptions(unroll=u) for u in (2, 4, 8))
    scored = [(fast, 1e-3), (slow, 1e-1), (broken, math.inf)]
    rng = random.Random(0)
    picks = Counter(tournament(scored, rng).unroll for _ in range(3000))
    # The fastest of two drawn: fast unless both are others (4/9 of the time).
    assert 0.5 < picks[2] / 3000 < 0.62 and picks[4] > 2 * picks[8] > 0


def test_tournament_of_failures_picks_any():
    scored = [(tcir.MappingOptions(unroll=u), math.inf) for u in (1, 2)]
    rng = random.Random(0)
    picks = Counter(tournament(scored, rng).unroll for _ in range(1000))
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


def test_seeds_first_then_random_until_a_population_is_measured(space, monkeypatch):
    seeds = [tcir.MappingOptions(), tcir.MappingOptions(tile=[8, 8, 8]), tcir.MappingOptions()]
    search = GeneticSearch(space, random.Random(3), population=4, mutation_rate=0.2)
    search.start(seeds)
    assert [search.propose() for _ in range(2)] == distinct(seeds)
    monkeypatch.setattr(search, "breed", None)  # breeding before a population is measured fails
    first = [search.propose() for _ in range(6)]
    assert len(distinct(first)) == 6
    for k, options in enumerate(first[:3]):
        search.tell(options, 1e-3 * (k + 1))
    assert search.propose() not in first


def test_seeds_beyond_the_population_are_dropped(space):
    seeds = [tcir.MappingOptions(tile=[t]) for t in (1, 2, 4)]
    search = GeneticSearch(space, random.Random(0), population=2)
    search.start(seeds)
    search.tell(seeds[0], 1.0)
    search.tell(seeds[1], 2.0)
    assert search.propose() != seeds[2]


def test_the_population_is_the_fastest_measured(space):
    search = GeneticSearch(space, random.Random(0), population=3)
    options = [tcir.MappingOptions(tile=[t]) for t in (1, 2, 4, 8, 16)]
    for o, seconds in zip(options, (5.0, math.inf, 1.0, 3.0, 2.0)):
        search.tell(o, seconds)
    search.tell(options[0], 0.5)  # measured again, faster
    assert search.members() == [(options[0], 0.5), (options[2], 1.0), (options[4], 2.0)]


def test_children_come_from_the_population_and_an_elite(space):
    """Without mutation every gene of a child is one of its parents'; one
    parent is the elite, so a third of the genes come from it on average."""
    search = GeneticSearch(space, random.Random(5), population=4, mutation_rate=0.0, elites=1)
    members = [space.random(random.Random(k)) for k in range(6)]
    for k, o in enumerate(members):
        search.tell(o, 1.0 + k)
    population = [space.encode(o) for o, _ in search.members()]
    elite = population[0]
    shared = 0
    for _ in range(200):
        child = space.encode(search.propose())
        assert all(child[g] in {p[g] for p in population} for g in child)
        shared += sum(child[g] == elite[g] for g in child) / len(child)
    assert shared / 200 > 0.4


def test_genetic_search_is_deterministic(space):
    def run():
        search = GeneticSearch(space, random.Random(11), population=3)
        search.start([tcir.MappingOptions()])
        proposed = []
        for k in range(10):
            proposed.append(search.propose())
            search.tell(proposed[-1], 1.0 + k % 4)
        return proposed

    assert run() == run()


def test_random_search(space):
    search = RandomSearch(space, random.Random(0))
    search.start([tcir.MappingOptions()])
    assert search.propose() == tcir.MappingOptions()
    assert len(distinct([search.propose() for _ in range(4)])) == 4


def test_bad_knobs_are_user_errors(space):
    with pytest.raises(tcir.TCError, match="population"):
        GeneticSearch(space, population=0)
    with pytest.raises(tcir.TCError, match="mutation rate"):
        GeneticSearch(space, population=4, mutation_rate=2.0)
    with pytest.raises(tcir.TCError, match="elites"):
        GeneticSearch(space, elites=-1)
