"""Private buffers of promoted kernels stay in registers.

Each thread's loops over its private elements have trip counts independent
of its thread id and are unrolled (`convert-poly-to-gpu`), so every access
to a private array has a constant index: ptxas reports no stack frame and
the PTX has no local memory, also where partial tiles leave a thread fewer
points.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from cuda_helpers import needs_nvcc, ptxas_report

import tcir

EXAMPLES = Path(__file__).parents[3] / "examples"


@needs_nvcc
@pytest.mark.parametrize(
    ("name", "shapes", "options"),
    [
        ("tmm", [(128, 1024), (1024, 1024)], None),  # the default: private_C[4][1]
        ("tmm", [(100, 1024), (1000, 1024)], None),  # partial tiles
        ("tbmm", [(3, 50, 1100), (3, 40, 1100)], tcir.MappingOptions(tile=[1, 32, 32, 32], threads=[32, 8])),
    ],
    ids=["tmm", "tmm-ragged", "tbmm-ragged"],
)
def test_private_arrays_need_no_local_memory(
    name: str, shapes: list[tuple[int, ...]], options: tcir.MappingOptions | None, tmp_path: Path
):
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    source = function.ir(*[np.zeros(s, np.float32) for s in shapes], backend="cuda", options=options)
    private = re.search(r"float private_\w+((\[\d+\])+);", source)
    assert private is not None and private.group(1).count("[4]") == 1, source
    ptx, report = ptxas_report(source, tmp_path)
    frames = re.findall(r"(\d+) bytes stack frame", report)
    assert frames and all(f == "0" for f in frames), report
    assert ".local" not in ptx


@needs_nvcc
@pytest.mark.parametrize(
    ("shapes", "options"),
    [
        # 64x64 block tiles on 8x8 threads.
        ([(128, 1024), (1024, 1024)],
         tcir.MappingOptions(tile=[64, 64, 8], threads=[8, 8], max_private_elements=64)),
        # 128x128x16 block tiles on 16x16 threads (the defaults' tiles are
        # checked by test_cuda_ptx_fma.py).
        ([(128, 4096), (16384, 4096)],
         tcir.MappingOptions(tile=[128, 128, 16], threads=[16, 16], max_private_elements=64)),
    ],
    ids=["options", "large"],
)
def test_register_micro_tiles_feed_four_fmas_per_shared_load(shapes, options, tmp_path: Path):
    """An 8x8 micro-tile per thread (`max_private_elements=64`): the compute
    loop loads 8 values of A and 8 of B from shared memory per k and does 64
    FMAs with them, in registers (no stack frame, no spill, no local memory)."""
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    source = tmm.ir(*[np.zeros(s, np.float32) for s in shapes], backend="cuda", options=options)
    assert "float private_C[8][8];" in source
    ptx, report = ptxas_report(source, tmp_path)
    fmas, loads = len(re.findall(r"\bfma\.rn\.f32\b", ptx)), len(re.findall(r"\bld\.shared\b", ptx))
    assert fmas >= 64 and fmas >= 4 * loads, (fmas, loads)
    assert re.search(r"\b0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert ".local" not in ptx


@needs_nvcc
def test_split_k_keeps_register_micro_tiles(tmp_path: Path):
    """Split-K over 64x64x32 block tiles on 8x8 threads: each thread loops
    over its k points outside its 8x8 micro-tile (one statement in the
    tile's two loops, which the CUDA compiler unrolls, updates all 64
    accumulators), 64 FMAs per 16 shared loads, in registers."""
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    options = tcir.MappingOptions(split_k=8, tile=[64, 64, 32], threads=[8, 8], max_private_elements=64)
    source = tmm.ir(np.zeros((128, 1024), np.float32), np.zeros((1024, 1024), np.float32), backend="cuda", options=options)
    assert "float private_C[8][8];" in source and "tc_atomic_add" in source
    lines = source[source.index("tmm_kernel1(") :].splitlines()
    start = next(k for k, line in enumerate(lines) if re.fullmatch(r"\s*for \(int (c\w+) = 0; \1 < 32; \+\+\1\) \{", line))
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    body = lines[start + 1 : lines.index(f"{indent}}}", start)]
    updates = [line for line in body if re.fullmatch(r"\s*private_C\[c\w+\]\[c\w+\] \+= shared_A\[.+\] \* shared_B\[.+\];", line)]
    assert len(updates) == 1 and sum(line.strip() == "#pragma unroll" for line in body) == 2, body
    ptx, report = ptxas_report(source, tmp_path)
    fmas, loads = len(re.findall(r"\bfma\.rn\.f32\b", ptx)), len(re.findall(r"\bld\.shared\b", ptx))
    assert fmas >= 64 and fmas >= 4 * loads, (fmas, loads)
    assert re.search(r"\b0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert ".local" not in ptx


@needs_nvcc
def test_staged_float4_copies_stay_in_registers(tmp_path: Path):
    """The large tmm's tiles with two stages stage their float4 copies
    (`copy_vector_width=4`) in `float4 prefetch[8]`, indexed by constants: no
    stack, no local memory."""
    function = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    options = tcir.MappingOptions(tile=[128, 128, 32], threads=[16, 16], max_private_elements=64, num_stages=2,
                                  vector_width=4, copy_vector_width=4)
    arrays = np.zeros((128, 4096), np.float32), np.zeros((16384, 4096), np.float32)
    source = function.ir(*arrays, backend="cuda", options=options)
    assert "float4 prefetch[8];" in source and "*reinterpret_cast<const float4*>(&B[" in source
    ptx, report = ptxas_report(source, tmp_path)
    frames = re.findall(r"(\d+) bytes stack frame", report)
    assert frames and all(f == "0" for f in frames), report
    assert ".local" not in ptx and "ld.global.nc.v4.f32" in ptx
