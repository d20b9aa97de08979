"""The layer zoo of `tools/bench_zoo.py`, checked without a GPU.

Every case at its small sizes on the simulated GPU with the default
mapping, and each def once more with the mapping that its benchmark sizes
get by default (the one the zoo times), against numpy in float64; the
zoo's own defs on the CPU backend too; the PyTorch eager peers (CPU torch)
against the same reference, so that the benchmark compares like with like.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from cases import assert_matches

import tcir
from tcir.compiler.defaults import default_options
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import bench_zoo  # noqa: E402

CASES = bench_zoo.cases()
DEFS = sorted({(c.file, c.entry) for c in CASES})


@cache
def _function(file: str, entry: str) -> tcir.api.Function:
    return bench_zoo.function(next(c for c in CASES if (c.file, c.entry) == (file, entry)))


def _check(function: tcir.api.Function, sizes: dict[str, int], backend: str, options: object = None) -> None:
    inputs = random_inputs(function.definition, sizes, 0)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    assert_matches(function(*inputs, backend=backend, options=options), tuple(expected))


def test_the_zoo_covers_the_layer_families():
    names = [c.name for c in CASES]
    assert len(CASES) >= 40 and len(set(names)) == len(names)
    entries = {c.entry for c in CASES}
    for layout in ("nn", "nt", "tn", "tt"):
        assert f"matmul_{layout}" in entries
    families = ("batch_matmul", "conv2d_1x1", "conv2d_stride2", "conv2d_pad1", "conv2d_grouped", "conv2d_depthwise",
                "maxpool2d_2x2", "avgpool2d_2x2", "softmax", "log_softmax", "layernorm", "rmsnorm", "colsum",
                "rowsum", "batch_mean", "bias_gelu", "silu", "transpose", "add_col_row", "embedding",
                "embedding_bag_sum", "linear_relu", "attention", "multihead_attention")
    assert set(families) <= entries


def test_every_zoo_def_has_a_case_and_every_case_its_def_sizes():
    for path in sorted((bench_zoo.EXAMPLES / "zoo").glob("*.tc")):
        module = tcir.define(path.read_text(), str(path))
        file = f"zoo/{path.name}"
        assert {(file, name) for name in module.names} <= set(DEFS), file
    for case in CASES:
        params = set(_function(case.file, case.entry).definition.size_params)
        assert set(case.sizes) == params and set(case.small) == params, case.name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_zoo_case_at_small_sizes_on_cuda_sim(case):
    _check(_function(case.file, case.entry), case.small, "cuda-sim")


def _benchmark_mappings(file: str, entry: str) -> dict[str, bench_zoo.Case]:
    """The default options of the def's cases at their benchmark sizes that
    differ from those at their small sizes, each with its first case."""
    function = _function(file, entry)
    mappings: dict[str, bench_zoo.Case] = {}
    for case in (c for c in CASES if (c.file, c.entry) == (file, entry)):
        real = default_options(function.definition, bind(function.definition, bench_zoo.host_inputs(
            function.definition, case.sizes)))
        small = default_options(function.definition, bind(function.definition, random_inputs(
            function.definition, case.small, 0)))
        if real != small:
            mappings.setdefault(real.to_json(), case)
    return mappings


@pytest.mark.parametrize(("file", "entry"), DEFS, ids=[entry for _, entry in DEFS])
def test_zoo_def_with_its_benchmark_mapping_on_cuda_sim(file, entry):
    """The mapping the zoo times (register tiles, float4 copies, pipelining,
    block reductions...) on small inputs: partial tiles included."""
    for text, case in _benchmark_mappings(file, entry).items():
        _check(_function(file, entry), case.small, "cuda-sim", tcir.MappingOptions.from_json(text))


ZOO_DEFS = [d for d in DEFS if d[0].startswith("zoo/")]


@pytest.mark.parametrize(("file", "entry"), ZOO_DEFS, ids=[entry for _, entry in ZOO_DEFS])
def test_zoo_def_on_cpu(file, entry):
    """The zoo's own defs on the CPU backend (the examples' are tested there elsewhere)."""
    case = next(c for c in CASES if (c.file, c.entry) == (file, entry))
    _check(_function(file, entry), case.small, "cpu")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_eager_peer_computes_the_def(case):
    torch = pytest.importorskip("torch")
    function = _function(case.file, case.entry)
    inputs = random_inputs(function.definition, case.small, 0)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    got = case.peer(*(torch.from_numpy(x) for x in inputs))
    assert_matches(tuple(np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))), tuple(expected))


def test_list_and_compile_only_need_no_gpu(capsys):
    assert bench_zoo.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert f"{len(CASES)} cases" in listed and "zoo/conv.tc" in listed
    assert bench_zoo.main(["--compile-only", "--only", "transpose 8192"]) == 0
    lowered = capsys.readouterr().out.splitlines()
    assert len(lowered) == 2 and lowered[1].startswith("transpose 8192x8192")
    assert lowered[1].split()[4] == "1", "one kernel"


def test_compile_only_in_a_half_type(capsys):
    """`--dtype`: each def's float tensors in that type, lowered at the case's sizes."""
    assert bench_zoo.main(["--compile-only", "--dtype", "bfloat16", "--only", "softmax 4096x1024"]) == 0
    lowered = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lowered[1:]] == ["softmax", "log_softmax"]  # "softmax 4096x1024" in both
    case = next(c for c in CASES if c.name == "softmax 4096x1024")
    fn = bench_zoo.function(case, "bfloat16")
    assert {p.dtype for p in fn.definition.inputs} == {"bfloat16"}
    assert "__nv_bfloat16" in fn.ir(*bench_zoo.host_inputs(fn.definition, case.sizes), backend="cuda")
