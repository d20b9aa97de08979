"""Every paper kernel through the CUDA backend.

Without a GPU: the generated CUDA compiles with nvcc for sm_90 (one kernel
per def under max fusion). With one: results match numpy in float64.
"""

import numpy as np
import pytest
from cases import PAPER_KERNELS, as_float64, assert_matches
from cuda_checks import assert_nvcc_compiles, needs_gpu, needs_nvcc

import tcir

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
