"""Every paper kernel through the CUDA pipeline, run on the simulated GPU.

The kernels are those the CUDA backend launches (same IR, grid, block,
shared and private arrays, barriers); results match numpy in float64, and
the simulator finds no race, conflict, divergent barrier or bad access.
"""

import numpy as np
import pytest
from cases import PAPER_KERNELS, as_float64, assert_matches

import tcir

OPTIONS = {
    "default": None,
    "tiled": tcir.MappingOptions(tile=[16, 16, 8]),
    "min-fusion": tcir.MappingOptions(fusion="min", threads=[64]),
    "small-grid": tcir.MappingOptions(tile=[4, 4, 4], blocks=[2, 3], threads=[4, 2]),
}


def poisoned(xp, shape, dtype):
    return xp.full(shape, np.nan if np.dtype(dtype).kind == "f" else -1, dtype)


@pytest.mark.parametrize("variant", OPTIONS)
@pytest.mark.parametrize("case", PAPER_KERNELS, ids=lambda c: c.name)
def test_paper_kernel_on_cuda_sim(case, variant, monkeypatch):
    monkeypatch.setattr("tcir.api.uninitialized", poisoned)
    inputs = case.inputs(np.random.default_rng(0))
    function = tcir.define(case.source, f"{case.name}.tc")[case.entry]
    outputs = function(*inputs, backend="cuda-sim", options=OPTIONS[variant])
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert all(isinstance(o, np.ndarray) for o in outputs)
    assert_matches(outputs, case.reference(*as_float64(inputs)))


def test_ir_is_what_the_simulator_runs():
    case = next(c for c in PAPER_KERNELS if c.name == "tmm")
    a, b = case.inputs(np.random.default_rng(0))
    function = tcir.define(case.source)[case.entry]
    text = function.ir(a, b, backend="cuda-sim")
    assert '"gpu.launch_func"' in text and "memref<32x33xf32, 3 : i64>" not in text
    assert text == tcir.print_ir(function.lowered(tcir.runtime.signature.bind(function.definition, (a, b)), None, "cuda"))


def test_removing_the_barriers_of_a_promoted_matmul_is_a_race():
    """The tiled tmm stages A and B in shared memory: without its barriers,
    threads read tiles other threads are still writing."""
    from tcir.backends.cuda.launch import extract_host_program
    from tcir.backends.cuda_sim.runtime import SimProgram

    case = next(c for c in PAPER_KERNELS if c.name == "tmm")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((33, 40), np.float32), rng.standard_normal((17, 40), np.float32)
    function = tcir.define(case.source)[case.entry]
    options = tcir.MappingOptions(tile=[16, 16, 8], threads=[16, 4])
    text = function.ir(a, b, backend="cuda-sim", options=options)
    assert "3 : i64>" in text, "operands are promoted to shared memory"
    broken = tcir.parse_ir(text.replace('"gpu.barrier"() : () -> ()', ""))
    c = np.zeros((33, 17), np.float32)
    with pytest.raises(tcir.KernelFault, match=r"data race on shared memory 'shared_[AB]' at \[") as info:
        SimProgram(broken, extract_host_program(broken, "tmm"))(a, b, c)
    assert info.value.fault == "race"


def test_cuda_sim_checks_backend_and_arguments():
    function = tcir.define("def f(float(N) A) -> (B) { B(i) = A(i) }").f
    with pytest.raises(tcir.TCError, match="unknown backend 'cuda-simulator'"):
        function(np.ones(3, np.float32), backend="cuda-simulator")
    with pytest.raises(tcir.ShapeError, match="argument #0 'A' of f must have dtype float32, got float64"):
        function(np.ones(3), backend="cuda-sim")
