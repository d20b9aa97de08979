"""Every paper kernel through the CUDA pipeline, run on the simulated GPU.

The kernels are those the CUDA backend launches (same IR, grid, block,
shared and private arrays, barriers); results match numpy in float64, and
the simulator finds no race, conflict, divergent barrier or bad access.
"""

from pathlib import Path

import numpy as np
import pytest
from cases import PAPER_KERNELS, as_float64, assert_matches

import tcir
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

EXAMPLES = Path(__file__).parents[2] / "examples"

OPTIONS = {
    "default": None,
    "tiled": tcir.MappingOptions(tile=[16, 16, 8]),
    "min-fusion": tcir.MappingOptions(fusion="min", threads=[64]),
    "small-grid": tcir.MappingOptions(tile=[4, 4, 4], blocks=[2, 3], threads=[4, 2]),
    # Register micro-tiles: 4x4 outputs per thread of 16x16 tiles, in registers.
    "micro-tile": tcir.MappingOptions(tile=[16, 16, 8], threads=[4, 4], max_private_elements=64),
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
    assert text == tcir.print_ir(function.lowered(bind(function.definition, (a, b)), None, "cuda"))


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


def test_no_output_is_read_before_it_is_written():
    """MLP3 fused in one kernel (`MappingOptions()`, its default until the
    chain-of-layers rule) copied O2 and O4 into shared memory before any
    write (compute-sanitizer's initcheck saw it on an H100; the copies were
    overwritten, so the numbers were right): the shared buffer's live-in
    elements must count the writes of every thread of the block."""
    function = tcir.define((EXAMPLES / "MLP3.tc").read_text()).MLP3
    inputs = random_inputs(function.definition, {"B": 16, "N": 32, "O": 16, "P": 8, "Q": 2}, 0)
    fused = tcir.MappingOptions()
    outputs = function(*inputs, backend="cuda-sim", options=fused)
    expected = reference_outputs(function.definition, bind(function.definition, inputs))
    assert_matches(outputs, tuple(expected))
    first_loop = function.ir(*inputs, backend="cuda", options=fused).split("for (")[0]
    assert "= O2[" not in first_loop, "no load of O2 before the first loop"
