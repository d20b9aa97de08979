"""MappingOptions: validation, JSON round trip, the pipeline it implies."""

from dataclasses import replace

import numpy as np
import pytest

import tcir


def test_defaults_and_str():
    options = tcir.MappingOptions()
    assert options.fusion == "max" and options.tile == [] and options.unroll == 1
    assert str(tcir.MappingOptions(tile=[16, 16])) == "MappingOptions(tile=[16, 16])"


def test_json_round_trip_and_equality():
    options = tcir.MappingOptions(fusion="preserve3", tile=[32, 8], blocks=[64], threads=[32, 4], unroll=8)
    again = tcir.MappingOptions.from_json(options.to_json())
    assert again is options  # equal value, made of other arguments: the first object


def test_equal_arguments_give_one_object_and_unequal_types_do_not():
    fields = {"tile": [32, 32], "threads": [16, 8], "unroll": 4, "async_copies": True}
    options = tcir.MappingOptions(**fields)
    assert tcir.MappingOptions(**fields) is options
    assert tcir.MappingOptions(**{**fields, "tile": (32, 32)}) is options
    assert replace(tcir.MappingOptions(), **fields) is options
    assert tcir.MappingOptions(unroll=1) is tcir.MappingOptions(unroll=1)
    # `True == 1` and `1.0 == 1`, but neither is a valid unroll; a numpy
    # integer (which the key does not take) is checked as any argument is.
    for unroll in (True, 1.0, np.int64(1)):
        with pytest.raises(tcir.TCError, match="unroll must be a positive integer"):
            tcir.MappingOptions(unroll=unroll)
    with pytest.raises(tcir.TCError, match="tile must be a list of integers"):
        tcir.MappingOptions(tile=[True, True])


def test_pipeline_string():
    options = tcir.MappingOptions(fusion="min", tile=[32, 32, 32], unroll=4)
    assert options.pipeline({"M": 128, "K": 32}) == (
        'tc-specialize{sizes="M=128,K=32"},convert-tc-to-poly,'
        "poly-schedule{fusion=min allow-skewing=false positive-coefficients=true},"
        "poly-tile{sizes=32,32,32},poly-sink,poly-unroll{factor=4},convert-poly-to-loops"
    )


def test_parallel_reductions_replace_the_scheduler():
    options = tcir.MappingOptions(parallel_reductions=True, fusion="min", tile=[1, 256])
    assert options.pipeline(backend="cuda").startswith("convert-tc-to-poly,poly-parallel-reduction,poly-tile")
    assert "poly-schedule" not in options.pipeline(backend="cpu")
    assert options.scheduler_key != tcir.MappingOptions(fusion="min").scheduler_key
    with pytest.raises(tcir.TCError, match="parallel_reductions must be a bool"):
        tcir.MappingOptions(parallel_reductions=1)


def test_split_k_deals_k_tiles_to_a_third_block_dimension():
    options = tcir.MappingOptions(split_k=8, tile=[64, 64, 32], threads=[16, 16])
    assert options.pipeline(backend="cuda") == (
        "convert-tc-to-poly,poly-parallel-reduction{coincident-reductions=false},"
        "poly-tile{sizes=64,64,32},poly-sink,poly-split-k{slices=8},"
        "poly-map-to-gpu{blocks=0,0,0 threads=16,16},"
        "poly-promote{shared=true private=true max-shared-bytes=49152 max-private-elements=32},"
        "poly-map-to-mma{allow-tf32=false},poly-separate-full-tiles,convert-poly-to-gpu,scf-for-loop-specialization,gpu-check-indices,gpu-simplify-index,gpu-hoist-loads"
    )
    assert options.pipeline(backend="cpu").endswith("poly-sink,poly-split-k{slices=8},convert-poly-to-loops")
    assert "blocks=4,2 " in replace(options, blocks=[4, 2]).pipeline(backend="cuda")
    untiled = tcir.MappingOptions(split_k=2, unroll=4).pipeline()
    assert "{coincident-reductions=false},poly-split-k{slices=2},poly-unroll{factor=4}," in untiled
    assert "poly-split-k" not in tcir.MappingOptions(split_k=1, tile=[32]).pipeline()
    # The schedule depends on whether the sums are split, not on the slices.
    assert options.scheduler_key == replace(options, split_k=2).scheduler_key
    assert options.scheduler_key != replace(options, split_k=1).scheduler_key
    assert options.scheduler_key != tcir.MappingOptions(parallel_reductions=True).scheduler_key
    assert tcir.MappingOptions.from_json(options.to_json()) == options
    assert str(options) == "MappingOptions(tile=[64, 64, 32], threads=[16, 16], split_k=8)"


@pytest.mark.parametrize("value", [0, -2, True, 2.0, "4", None])
def test_split_k_must_be_a_positive_integer(value):
    with pytest.raises(tcir.TCError, match=f"split_k must be an integer >= 1, got {value!r}"):
        tcir.MappingOptions(split_k=value)


def test_split_k_excludes_parallel_reductions():
    with pytest.raises(tcir.TCError, match="split_k > 1 and parallel_reductions both spread"):
        tcir.MappingOptions(split_k=4, parallel_reductions=True)
    with pytest.raises(tcir.TCError, match="split_k > 1 and parallel_reductions"):
        tcir.MappingOptions.from_json('{"split_k": 2, "parallel_reductions": true}')
    assert tcir.MappingOptions(split_k=1, parallel_reductions=True).parallel_reductions


def test_two_stages_add_the_prefetch_pass_on_gpus():
    options = tcir.MappingOptions(tile=[32, 32, 32], num_stages=2)
    assert options.pipeline(backend="cuda").endswith("convert-poly-to-gpu,gpu-prefetch-copies,scf-for-loop-specialization,gpu-check-indices,gpu-simplify-index,gpu-hoist-loads")
    assert options.pipeline(backend="cpu").endswith("convert-poly-to-loops")
    assert "gpu-prefetch-copies" not in tcir.MappingOptions(tile=[32, 32, 32]).pipeline(backend="cuda")
    three = tcir.MappingOptions(tile=[32, 32, 32], num_stages=3, max_shared_memory=65536)
    assert "gpu-prefetch-copies{double-buffer=true max-shared-bytes=65536}" in three.pipeline(backend="cuda")
    copied = tcir.MappingOptions(tile=[32, 32, 32], num_stages=3, async_copies=True)
    assert "gpu-prefetch-copies{double-buffer=true max-shared-bytes=49152 async-copies=true}" in copied.pipeline(
        backend="cuda"
    )
    assert "async" not in tcir.MappingOptions(tile=[32, 32, 32], num_stages=2, async_copies=True).pipeline(
        backend="cuda"
    )
    assert tcir.MappingOptions.from_json(copied.to_json()) == copied
    # 4 and 5 stages: 3 and 4 buffers by cp.async; without it, 2 in registers.
    five = tcir.MappingOptions(tile=[32, 32, 32], num_stages=5, async_copies=True)
    assert "gpu-prefetch-copies{double-buffer=true max-shared-bytes=49152 async-copies=true buffers=4}" in five.pipeline(
        backend="cuda"
    )
    assert "gpu-prefetch-copies{double-buffer=true max-shared-bytes=49152}" in tcir.MappingOptions(
        tile=[32, 32, 32], num_stages=4
    ).pipeline(backend="cuda")
    tf32 = tcir.MappingOptions(tile=[32, 32, 32], threads=[4, 16], allow_tf32=True)
    assert "poly-map-to-mma,poly-separate-full-tiles,convert-poly-to-gpu" in tf32.pipeline(backend="cuda")
    assert "mma" not in tf32.pipeline(backend="cpu")
    assert "poly-map-to-mma{allow-tf32=false},poly-separate-full-tiles,convert-poly-to-gpu" in copied.pipeline(backend="cuda")  # half ones
    assert tcir.MappingOptions.from_json(tf32.to_json()) == tf32
    wgmma = tcir.MappingOptions(tile=[128, 128, 32], threads=[4, 8], warps=[1, 8], allow_tf32=True, warpgroup_mma=True)
    assert "poly-map-to-mma{warpgroup=true},poly-separate-full-tiles,convert-poly-to-gpu" in wgmma.pipeline(backend="cuda")
    half = replace(wgmma, allow_tf32=False)  # half contractions only
    assert "poly-map-to-mma{warpgroup=true allow-tf32=false},poly-separate-full-tiles,convert-poly-to-gpu" in half.pipeline(backend="cuda")
    assert tcir.MappingOptions.from_json(wgmma.to_json()) == wgmma
    with pytest.raises(tcir.TCError, match="warpgroup_mma must be a bool"):
        tcir.MappingOptions(warpgroup_mma="yes")
    with pytest.raises(tcir.TCError, match="async_copies must be a bool"):
        tcir.MappingOptions(async_copies="yes")


def test_warps_add_a_thread_dimension_of_sub_tiles():
    options = tcir.MappingOptions(tile=[128, 128, 32], threads=[4, 8], warps=[2, 4])
    assert options.block == [4, 8, 8]
    assert "poly-map-to-gpu{blocks=0,0 threads=4,8 warps=2,4}" in options.pipeline(backend="cuda")
    assert "warps" not in tcir.MappingOptions(threads=[4, 8]).pipeline(backend="cuda")
    assert tcir.MappingOptions.from_json(options.to_json()) == options


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"fusion": "most"}, "fusion must be one of min, max, preserve3, outer"),
        ({"threads": [64, 32]}, "2048 threads per block"),
        ({"tile": [32, 0]}, "tile sizes must be positive"),
        ({"blocks": [1, 2, 3, 4]}, "at most 3 block"),
        ({"unroll": 0}, "unroll must be a positive integer"),
        ({"unroll": True}, "unroll must be a positive integer, got True"),
        ({"max_shared_memory": "48K"}, "max_shared_memory must be in"),
        ({"max_private_elements": True}, "max_private_elements must be in"),
        ({"tile": "32"}, "tile must be a list of integers"),
        ({"max_shared_memory": 10**9}, "max_shared_memory must be in"),
        ({"max_private_elements": 256}, r"max_private_elements must be in \[0, 255\]"),
        ({"max_private_elements": "64"}, "max_private_elements must be in"),
        ({"num_stages": 6}, r"num_stages must be in \[1, 5\]"),
        ({"num_stages": 0}, r"num_stages must be in \[1, 5\]"),
        ({"num_stages": True}, r"num_stages must be in \[1, 5\], got True"),
        ({"allow_tf32": 1}, r"allow_tf32 must be a bool, got 1"),
        ({"warps": [2]}, r"warps needs 1 or 2 thread sizes and at most as many counts, got warps=\[2\] threads=\[\]"),
        ({"threads": [4, 8, 2], "warps": [2]}, "warps needs 1 or 2 thread sizes"),
        ({"threads": [4], "warps": [2, 2]}, "warps needs 1 or 2 thread sizes"),
        ({"threads": [32, 8], "warps": [4, 2]}, r"2048 threads per block \(\[32, 8, 8\]\)"),
        ({"threads": [4, 8], "warps": [0]}, "warps sizes must be positive"),
    ],
)
def test_invalid_options_are_tc_errors(fields, message):
    with pytest.raises(tcir.TCError, match=message):
        tcir.MappingOptions(**fields)


@pytest.mark.parametrize(
    "text, message",
    [("{", "invalid JSON"), ("[1]", "expected a JSON object"), ('{"tiles": [1]}', "unknown fields tiles")],
)
def test_bad_json_is_a_tc_error(text, message):
    with pytest.raises(tcir.TCError, match=message):
        tcir.MappingOptions.from_json(text)
