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
    assert again == options and again is not options


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


def test_split_k_puts_reductions_outermost_on_a_three_dimensional_grid():
    options = tcir.MappingOptions(parallel_reductions=True, reductions_outermost=True, tile=[256, 32, 32])
    assert options.pipeline(backend="cuda") == (
        "convert-tc-to-poly,poly-parallel-reduction{reductions-outermost=true},"
        "poly-tile{sizes=256,32,32},poly-sink,poly-map-to-gpu{blocks=0,0,0 threads=0},"
        "poly-promote{shared=true private=true max-shared-bytes=49152 max-private-elements=32},"
        "convert-poly-to-gpu,gpu-check-indices,gpu-simplify-index"
    )
    assert "blocks=4,2 " in replace(options, blocks=[4, 2]).pipeline(backend="cuda")
    assert options.scheduler_key != tcir.MappingOptions(parallel_reductions=True).scheduler_key
    assert tcir.MappingOptions.from_json(options.to_json()) == options
    assert str(options).endswith("parallel_reductions=True, reductions_outermost=True)")
    with pytest.raises(tcir.TCError, match="reductions_outermost needs parallel_reductions=True"):
        tcir.MappingOptions(reductions_outermost=True)
    with pytest.raises(tcir.TCError, match="reductions_outermost must be a bool"):
        tcir.MappingOptions(parallel_reductions=True, reductions_outermost=1)


def test_two_stages_add_the_prefetch_pass_on_gpus():
    options = tcir.MappingOptions(tile=[32, 32, 32], num_stages=2)
    assert options.pipeline(backend="cuda").endswith("convert-poly-to-gpu,gpu-prefetch-copies,gpu-check-indices,gpu-simplify-index")
    assert options.pipeline(backend="cpu").endswith("convert-poly-to-loops")
    assert "gpu-prefetch-copies" not in tcir.MappingOptions(tile=[32, 32, 32]).pipeline(backend="cuda")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"fusion": "most"}, "fusion must be one of min, max, preserve3, outer"),
        ({"threads": [64, 32]}, "2048 threads per block"),
        ({"tile": [32, 0]}, "tile sizes must be positive"),
        ({"blocks": [1, 2, 3, 4]}, "at most 3 block"),
        ({"unroll": 0}, "unroll must be a positive integer"),
        ({"tile": "32"}, "tile must be a list of integers"),
        ({"max_shared_memory": 10**9}, "max_shared_memory must be in"),
        ({"max_private_elements": 256}, r"max_private_elements must be in \[0, 255\]"),
        ({"max_private_elements": "64"}, "max_private_elements must be in"),
        ({"num_stages": 3}, r"num_stages must be in \[1, 2\]"),
        ({"num_stages": 0}, r"num_stages must be in \[1, 2\]"),
        ({"num_stages": True}, r"num_stages must be in \[1, 2\], got True"),
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
