"""Every paper kernel through the CUDA backend.

Without a GPU: the generated CUDA compiles with nvcc for sm_90 without a
warning (one kernel per def under max fusion; the default kernels at the
benchmark's sizes, no unused local among them). With one: results match
numpy in float64.
"""

import numpy as np
import pytest
from cases import EXAMPLES, PAPER_KERNELS, as_float64, assert_matches
from cuda_checks import assert_nvcc_compiles, needs_gpu, needs_nvcc

import tcir
from tcir.runtime.signature import NUMPY_DTYPES, evaluate

OPTIONS = {
    "default": None,
    "tiled": tcir.MappingOptions(tile=[16, 16, 8]),
    "min-fusion": tcir.MappingOptions(fusion="min", threads=[64]),
}


@needs_nvcc
@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_cuda_compiles(case, tmp_path):
    inputs = case.inputs(np.random.default_rng(0))
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    source = function.ir(*inputs, backend="cuda", options=tcir.MappingOptions())
    assert source.count("__global__") == 1, "max fusion gives one kernel"
    assert_nvcc_compiles(source, tmp_path / f"{case.name}.cu")


#: The sizes of tools/bench.py (tables of 1000 rows, not 10^7: the code is the same).
BENCH_SIZES = {
    "tmm 128x32x256": ("tmm", {"M": 128, "K": 32, "N": 256}),
    "tmm 128x1024x1024": ("tmm", {"M": 128, "K": 1024, "N": 1024}),
    "tmm 128x4096x16384": ("tmm", {"M": 128, "K": 4096, "N": 16384}),
    "tbmm": ("tbmm", {"B": 500, "N": 26, "M": 72, "K": 26}),
    **{
        f"gconv C=F={c} H=W={hw}": ("gconv", {"N": 32, "G": 32, "C": c, "F": c, "H": hw, "W": hw, "KH": 3, "KW": 3})
        for c, hw in [(4, 56), (16, 14)]
    },
    "1LUT": ("1LUT", {"E1": 1000, "D": 64, "B": 128, "L1": 50}),
    "2LUT": ("2LUT", {"E1": 1000, "E2": 1000, "D": 64, "B": 128, "L1": 50, "L2": 50}),
    "C3": ("C3", {"B": 128, "WX": 1000, "WY": 1024}),
    "MLP1": ("MLP1", {"B": 128, "M": 2000, "N": 128}),
    "mv": ("mv", {"M": 64, "K": 65536}),
    "rowsum": ("rowsum", {"B": 16, "K": 1 << 22}),
    "MLP3": ("MLP3", {"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2}),
    "softmax 4096x1024": ("softmax", {"B": 4096, "N": 1024}),
    "log-softmax 4096x1024": ("log_softmax", {"B": 4096, "N": 1024}),
    "layernorm 4096x1024": ("layernorm", {"B": 4096, "N": 1024}),
    "rmsnorm 4096x4096": ("rmsnorm", {"B": 4096, "N": 4096}),
    "colsum 8192x8192": ("colsum", {"B": 8192, "N": 8192}),
    "attention 64x512x64": ("attention", {"B": 64, "L": 512, "D": 64}),
}

#: Row-wise chains, a column sum and attention at sizes their default
#: mappings (a block per row, split-K, attention in parts) take, small.
REDUCTION_SIZES = {
    "softmax": {"B": 300, "N": 1000},
    "log_softmax": {"B": 129, "N": 70},
    "layernorm": {"B": 200, "N": 37},
    "rmsnorm": {"B": 130, "N": 4096},
    "colsum": {"B": 1000, "N": 300},
    "attention": {"B": 3, "L": 128, "D": 64},
}


@needs_nvcc
@pytest.mark.parametrize("label", BENCH_SIZES)
def test_bench_kernels_compile_without_warnings(label, tmp_path):
    example, sizes = BENCH_SIZES[label]
    function = tcir.define((EXAMPLES / f"{example}.tc").read_text(), f"{example}.tc")[example]
    definition = function.definition
    values = [sizes[name] for name in definition.size_params]
    inputs = [
        np.zeros([evaluate(d, values) for d in param.dims], NUMPY_DTYPES[param.dtype])
        for param in definition.inputs
    ]
    assert_nvcc_compiles(function.ir(*inputs, backend="cuda"), tmp_path / f"{example}.cu")


@needs_gpu
@pytest.mark.parametrize("variant", OPTIONS)
@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_on_gpu(case, variant, monkeypatch):
    import cupy

    monkeypatch.setattr(
        "tcir.api.uninitialized",
        lambda xp, shape, dtype: xp.full(shape, np.nan if np.dtype(dtype).kind == "f" else -1, dtype),
    )
    inputs = case.inputs(np.random.default_rng(0))
    device = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*device, options=OPTIONS[variant])
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert all(isinstance(o, cupy.ndarray) for o in outputs)
    assert_matches(tuple(cupy.asnumpy(o) for o in outputs), case.reference(*as_float64(inputs)))


@needs_gpu
def test_torch_tensors_in_torch_tensors_out():
    torch = pytest.importorskip("torch")
    case = next(c for c in PAPER_KERNELS if c.name == "tmm")
    a, b = case.inputs(np.random.default_rng(1))
    out = tcir.define(case.source)[case.entry](torch.tensor(a).cuda(), torch.tensor(b).cuda())
    assert isinstance(out, torch.Tensor) and out.is_cuda
    assert_matches(out.cpu().numpy(), case.reference(a.astype(np.float64), b.astype(np.float64)))


@needs_gpu
@pytest.mark.parametrize("name", REDUCTION_SIZES)
def test_reductions_by_default_on_gpu(name, monkeypatch):
    """The default mappings of the reduction examples on the GPU against the
    float64 numpy reference (outputs poisoned)."""
    import cupy

    from tcir.runtime.inputs import random_inputs
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import bind

    monkeypatch.setattr("tcir.api.uninitialized", lambda xp, shape, dtype: xp.full(shape, np.nan, dtype))
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text(), f"{name}.tc")[name]
    inputs = random_inputs(function.definition, REDUCTION_SIZES[name], 0)
    got = function(*[cupy.asarray(a) for a in inputs])
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    assert_matches((cupy.asnumpy(got),), tuple(expected))
