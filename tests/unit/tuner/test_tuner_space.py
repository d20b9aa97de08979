"""The search space: admissible values from the problem sizes, genes <-> options."""

from __future__ import annotations

import random

import pytest
from tuner_helpers import tmm

import tcir
from tcir.tuner.space import (
    SearchSpace,
    ceil_divisors,
    powers_of_two,
    size_candidates,
)


def test_powers_of_two_and_ceil_divisors():
    assert powers_of_two(4096)[-1] == 4096 and len(powers_of_two(4096)) == 13
    assert powers_of_two(100) == [1, 2, 4, 8, 16, 32, 64]
    assert ceil_divisors(10) == {10, 5, 4, 3, 2, 1}
    assert 65 in ceil_divisors(130)


def test_size_candidates_avoid_tail_effects():
    values = size_candidates({130}, 1024)
    assert {1, 2, 64, 128, 65, 130, 44, 33} <= set(values)
    assert 256 not in values, "no power of two beyond the extent"
    assert list(values) == sorted(set(values))
    assert max(size_candidates({5000}, 1024)) == 1024


def test_cpu_space_for_tmm():
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 130, "K": 32}, "cpu")
    genes = {g.name: g.values for g in space.genes}
    assert set(genes) == {
        "fusion",
        "allow_skewing",
        "positive_coefficients",
        "tile_0",
        "tile_1",
        "tile_2",
        "pad_tiles",
        "unroll",
    }
    assert genes["fusion"] == ("min", "max", "preserve3", "outer")
    assert genes["unroll"] == tuple(2**k for k in range(7)), "LLVM unrolls beyond 64"
    assert genes["tile_0"][0] is None and {65, 64, 32, 130} <= set(genes["tile_0"])
    gpu = SearchSpace.build(tmm().definition, {"M": 64, "N": 130, "K": 32}, "cuda")
    assert dict((g.name, g.values) for g in gpu.genes)["unroll"] == tuple(2**k for k in range(13))


def test_prune_names_what_cannot_run():
    cuda = SearchSpace.build(tmm().definition, {"M": 512, "N": 512, "K": 512}, "cuda")
    assert cuda.prune(tcir.MappingOptions(threads=[32, 32], blocks=[16, 16])) is None
    assert cuda.prune(tcir.MappingOptions(threads=[2, 2, 65])) == "threads in z 65 over the limit 64"
    assert cuda.prune(tcir.MappingOptions(blocks=[1, 70000])) == "blocks in y 70000 over the limit 65535"
    cpu = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cpu")
    assert cpu.prune(tcir.MappingOptions(unroll=64)) is None
    assert cpu.prune(tcir.MappingOptions(unroll=128)) == "unroll 128 over the space's largest 64"
    assert cpu.prune(tcir.MappingOptions(threads=[2, 2, 65])) is None, "the CPU ignores threads"


def test_cuda_space_keeps_blocks_within_limits():
    space = SearchSpace.build(tmm().definition, {"M": 512, "N": 512, "K": 512}, "cuda")
    names = space.names
    assert {"blocks_0", "blocks_1", "threads_0", "threads_1", "use_shared_memory"} <= set(names)
    assert {"blocks_2", "threads_2", "split_k"} <= set(names), "split-K maps (slice, m tile, n tile)"
    assert dict((g.name, g.values) for g in space.genes)["split_k"] == (1, 2, 4, 8, 16)
    rng = random.Random(0)
    split_k = 0
    for _ in range(300):
        options = space.random(rng)
        split_k += options.split_k > 1
        total = 1
        for t in options.threads:
            total *= t
        assert total <= 1024
    assert split_k > 0
    maximum = tcir.define("def tmax(float(M,K) A, float(N,K) B) -> (C) { C(m,n) max=! A(m,kk) * B(n,kk) }")
    names = SearchSpace.build(maximum.tmax.definition, {"M": 512, "N": 512, "K": 512}, "cuda").names
    assert {"blocks_2", "split_k"} <= set(names), "a float maximum combines by atomics too"
    wide = tcir.define("def lmax(int64(M,K) A, int64(N,K) B) -> (C) { C(m,n) max=! A(m,kk) * B(n,kk) }")
    names = SearchSpace.build(wide.lmax.definition, {"M": 512, "N": 512, "K": 512}, "cuda").names
    assert "blocks_2" not in names and "split_k" not in names, "a 64-bit maximum has no atomic: two parallel dimensions"


def test_split_k_and_parallel_reductions_exclude_each_other():
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cuda")
    genes = space.encode(tcir.MappingOptions())
    assert genes["split_k"] == 1 and genes["parallel_reductions"] is False
    assert space.decode({**genes, "parallel_reductions": True, "split_k": 8}).split_k == 1
    split_k = tcir.MappingOptions(split_k=4, tile=[32, 32, 16], blocks=[2, 2, 4])
    assert space.decode(space.encode(split_k)) == split_k


def test_random_candidates_are_deterministic():
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cpu")
    first = [space.random(random.Random(7)) for _ in range(5)]
    again = [space.random(random.Random(7)) for _ in range(5)]
    assert first == again


@pytest.mark.parametrize(
    "options",
    [
        tcir.MappingOptions(),
        tcir.MappingOptions(fusion="min", tile=[32, 16], unroll=8),
        tcir.MappingOptions(tile=[4, 4, 4], allow_skewing=True, positive_coefficients=False),
    ],
    ids=str,
)
def test_encode_decode_round_trip(options):
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cpu")
    assert space.decode(space.encode(options)) == options


def test_decode_ends_lists_at_none_and_repairs_threads():
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cuda")
    genes = space.encode(tcir.MappingOptions())
    genes.update(tile_0=16, tile_1=None, tile_2=8, threads_0=512, threads_1=64)
    options = space.decode(genes)
    assert options.tile == [16]
    assert options.threads[0] * options.threads[1] <= 1024


def test_decode_keeps_a_warp_count_per_thread_size_within_the_block_limit():
    space = SearchSpace.build(tmm().definition, {"M": 64, "N": 64, "K": 64}, "cuda")
    assert {"warps_0", "warps_1"} <= set(space.names)
    genes = space.encode(tcir.MappingOptions(tile=[32, 32, 8], threads=[4, 8], warps=[2, 2]))
    assert space.decode(genes).warps == [2, 2]
    genes.update(threads_1=None)  # one thread size: one warp count
    assert space.decode(genes).warps == [2]
    genes.update(threads_0=256, threads_1=4, warps_0=4, warps_1=4)
    options = space.decode(genes)
    assert options.warps == [4, 4] and options.threads[0] * options.threads[1] * 16 <= 1024
