"""A compile-time property that stands for contraction speed (no GPU needed):
in the PTX of the default tmm kernels, the compute loop issues at least 4
`fma.rn.f32` per shared-memory load (`ld.shared`, a vector load counting
once), and ptxas spills nothing (issue: contractions at cuBLAS speed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cuda_helpers import needs_nvcc

import tcir

TMM = tcir.define((Path(__file__).parents[3] / "examples" / "tmm.tc").read_text()).tmm
_LABEL = re.compile(r"^(\$L__BB\d+_\d+):", re.M)
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);")


def innermost_loops(ptx: str) -> list[str]:
    """The bodies of the PTX loops (a label up to a branch back to it) that
    hold no other loop."""
    loops = []
    for branch in _BRANCH.finditer(ptx):
        label = re.search(rf"^{re.escape(branch.group(1))}:", ptx, re.M)
        if label is not None and label.start() < branch.start():
            loops.append((label.start(), branch.end()))
    return [
        ptx[start:end]
        for start, end in loops
        if not any(start < s and e <= end and (s, e) != (start, end) for s, e in loops)
    ]


def compute_loop_ratio(source: str, tmp_path: Path) -> tuple[float, int]:
    """FMAs per shared load in the loop with the most FMAs, and the spill-store
    bytes ptxas reports."""
    path = tmp_path / "kernel.cu"
    path.write_text(source)
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "kernel.ptx"), str(path)], check=True)
    ptx = (tmp_path / "kernel.ptx").read_text()
    loop = max(innermost_loops(ptx), key=lambda body: body.count("fma.rn.f32"))
    loads = len(re.findall(r"\bld\.shared", loop))
    report = subprocess.run(
        ["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", "/dev/null", str(path)],
        capture_output=True, text=True, check=True,
    ).stderr
    spills = sum(int(b) for b in re.findall(r"(\d+) bytes spill stores", report))
    return loop.count("fma.rn.f32") / max(loads, 1), spills


@needs_nvcc
@pytest.mark.parametrize("sizes", [(128, 1024, 1024), (128, 4096, 16384)])
def test_default_tmm_compute_loop_issues_four_fmas_per_shared_load(sizes, tmp_path: Path):
    m, k, n = sizes
    source = TMM.ir(np.zeros((m, k), np.float32), np.zeros((n, k), np.float32), backend="cuda")
    ratio, spills = compute_loop_ratio(source, tmp_path)
    assert ratio >= 4, f"{ratio:.2f} fma.rn.f32 per ld.shared in the compute loop"
    assert spills == 0


@needs_nvcc
def test_the_ratio_tells_scalar_from_vector_loads(tmp_path: Path):
    """The check can fail: 4 accumulators a thread with scalar loads give 1."""
    options = tcir.MappingOptions(tile=[32, 32, 32], threads=[32, 8])
    source = TMM.ir(np.zeros((128, 1024), np.float32), np.zeros((1024, 1024), np.float32), backend="cuda", options=options)
    ratio, _ = compute_loop_ratio(source, tmp_path)
    assert ratio < 4


@needs_nvcc
def test_padded_convolution_fuses_its_products_with_its_sums(tmp_path: Path):
    """The guard of a "same" convolution (`c ? I(...) * W(...) : 0.0`) cuts
    the statement's domain instead of selecting 0 in the body: the compute
    loop multiplies and adds in `fma.rn.f32`, with no `selp` left between."""
    conv = tcir.define((Path(__file__).parents[3] / "examples" / "zoo" / "conv.tc").read_text()).conv2d_pad1
    image, filters = np.zeros((32, 64, 56, 56), np.float32), np.zeros((64, 64, 3, 3), np.float32)
    path = tmp_path / "kernel.cu"
    path.write_text(conv.ir(image, filters, backend="cuda"))
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "kernel.ptx"), str(path)], check=True)
    ptx = (tmp_path / "kernel.ptx").read_text()
    loop = max(innermost_loops(ptx), key=lambda body: body.count("fma.rn.f32"))
    assert loop.count("fma.rn.f32") >= 16 and "selp.f32" not in loop and "mul.rn.f32" not in loop
