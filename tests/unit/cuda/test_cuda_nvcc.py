"""Every kernel the printer emits for the FileCheck inputs is valid CUDA C++."""

from __future__ import annotations

from pathlib import Path

import pytest
import numpy as np
from cuda_helpers import PRINTABLE, load, needs_nvcc, nvcc_compile

import tcir
from tcir.backends.cuda.printer import print_cuda

EXAMPLES = Path(__file__).parents[3] / "examples"


@needs_nvcc
@pytest.mark.parametrize("name", PRINTABLE)
def test_generated_source_compiles(name: str, tmp_path: Path):
    nvcc_compile(print_cuda(load(name)), tmp_path)


@needs_nvcc
@pytest.mark.parametrize(
    "options",
    [
        tcir.MappingOptions(split_k=8, tile=[64, 64, 32], threads=[16, 16], max_private_elements=64, num_stages=2),
        tcir.MappingOptions(split_k=3, tile=[32, 32, 32], threads=[32, 8], use_private_memory=False),
    ],
    ids=str,
)
def test_split_k_source_compiles(options: tcir.MappingOptions, tmp_path: Path):
    """A split-K matmul (ragged: 1000 = 31.25 k tiles of 32) with prefetched
    copies, and without accumulators. Warnings pass: a kernel declares every
    block and thread id, used or not."""
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    inputs = np.zeros((128, 1000), np.float32), np.zeros((1000, 1000), np.float32)
    source = tmm.ir(*inputs, backend="cuda", options=options)
    assert source.count("__global__") == 2 and "tc_atomic_add" in source
    nvcc_compile(source, tmp_path, warnings_are_errors=False)


@needs_nvcc
def test_short_rows_compile_to_warp_shuffles(tmp_path: Path):
    """The default softmax of 65536 rows of 77 points: a warp a row, four
    rows a block; its reductions are xor shuffles within the warp and its
    barriers the warp's, none of the block's."""
    import subprocess

    softmax = tcir.define((EXAMPLES / "softmax.tc").read_text()).softmax
    source = softmax.ir(np.zeros((65536, 77), np.float32), backend="cuda")
    assert "__launch_bounds__(128)" in source and "__syncthreads" not in source
    path = tmp_path / "kernel.cu"
    path.write_text(source)
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "kernel.ptx"), str(path)], check=True)
    ptx = (tmp_path / "kernel.ptx").read_text()
    assert ptx.count("shfl.sync.bfly") == 10 and "bar.warp.sync" in ptx and "bar.sync" not in ptx


@needs_nvcc
def test_atomic_adds_share_one_copy_of_the_warp_sum(tmp_path: Path):
    """The shuffles that sum a warp's lanes of one address are a call, not
    inlined at each atomic add: a kernel unrolled around many of them (16
    here) has one copy of them in its PTX (inlined, ptxas took minutes on a
    gconv candidate of 145)."""
    import subprocess

    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    inputs = np.zeros((128, 1000), np.float32), np.zeros((1024, 1000), np.float32)  # whole tiles: one version
    options = tcir.MappingOptions(split_k=4, tile=[64, 64, 32], threads=[16, 16], max_private_elements=16)
    source = tmm.ir(*inputs, backend="cuda", options=options)
    assert source.count("tc_atomic_add(&") == 16
    path = tmp_path / "kernel.cu"
    path.write_text(source)
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "kernel.ptx"), str(path)], check=True)
    ptx = (tmp_path / "kernel.ptx").read_text()
    assert ptx.count("match.any.sync") == 16  # each add still checks its lanes' addresses inline
    assert 0 < ptx.count("shfl.sync") <= 5 + 32  # one butterfly, one (unrolled) loop over the lanes


@needs_nvcc
def test_shared_memory_past_48_kib_is_dynamic(tmp_path: Path):
    """Double-buffered 128x128x32 tiles take 72 KiB of shared memory: more
    than a kernel may declare, so they live in its dynamic shared memory,
    which the launch requests."""
    from tcir.compiler.artifacts import CudaArtifact, build_artifact
    from tcir.runtime.signature import Binding

    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    options = tcir.MappingOptions(
        tile=[128, 128, 32], threads=[16, 16], max_private_elements=64, num_stages=3, vector_width=4,
        max_shared_memory=98304,
    )
    artifact = build_artifact(tmm.def_ir, Binding({"M": 128, "K": 256, "N": 256}, ()), options, "cuda")
    assert isinstance(artifact, CudaArtifact)
    (launch,) = artifact.host.launches
    assert launch.shared_bytes == 2 * 2 * 128 * 36 * 4
    assert "extern __shared__ __align__(16) unsigned char tc_dynamic_shared[];" in artifact.source
    assert "float (&shared_B)[2][128][36] = *reinterpret_cast<float (*)[2][128][36]>(tc_dynamic_shared + 36864);" in artifact.source
    assert "__shared__ float" not in artifact.source
    nvcc_compile(artifact.source, tmp_path)


def _large_matmul(options: tcir.MappingOptions | None) -> str:
    """The CUDA of tmm 128x4096x16384 with `options` (None: the defaults)."""
    tmm = tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm
    inputs = np.zeros((128, 4096), np.float32), np.zeros((16384, 4096), np.float32)
    return tmm.ir(*inputs, backend="cuda", options=options)


def _ptx(source: str, arch: str, tmp_path: Path) -> str:
    """`source`'s PTX for `arch`, by nvcc."""
    import subprocess

    path = tmp_path / "kernels.cu"
    path.write_text(source)
    ptx = tmp_path / "kernels.ptx"
    subprocess.run(["nvcc", f"-arch={arch}", "-ptx", "-o", str(ptx), str(path)], check=True)
    return ptx.read_text()


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90", "sm_75"])
def test_async_copies_compile_with_cp_async_and_without(arch: str, tmp_path: Path):
    """The large-matmul default (float4 copies by cp.async into 72 KiB of
    double-buffered tiles, its vector step loop unrolled): cp.async and
    its group ops in the PTX for sm_90; for sm_75, which lacks them, plain
    copies; no local memory either way."""
    source = _large_matmul(None)
    assert "tc_cp_async_16(" in source and "tc_cp_async_wait<0>();" in source and "#pragma unroll" in source
    text = _ptx(source, arch, tmp_path)
    copies = text.count("cp.async.cg.shared.global")
    assert (copies, "cp.async.wait_group 0" in text) == ((16, True) if arch == "sm_90" else (0, False))
    assert ".local" not in text


MMA_SYNC = tcir.MappingOptions(
    tile=[128, 128, 64], threads=[4, 64], max_private_elements=64, num_stages=3, async_copies=True, vector_width=4,
    copy_vector_width=4, max_shared_memory=151552, allow_tf32=True,
)
"""The large matmul on warp-level TF32 `mma.sync`: 4 x 64 threads."""


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90", "sm_75"])
def test_tf32_mma_compiles_with_tensor_cores_and_without(arch: str, tmp_path: Path):
    """The large matmul on mma.sync: for sm_90, each fragment register
    loaded once (float4 loads of shared memory, none repeated per mma), no
    local memory; for sm_75 the shuffles' sums."""
    text = _ptx(_large_matmul(MMA_SYNC), arch, tmp_path)
    mmas = text.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
    assert ".local" not in text
    if arch == "sm_75":
        assert mmas == 0 and "shfl.sync" in text
        return
    loads = [line.split()[0] for line in text.splitlines() if "ld.shared" in line]
    # 128 rows x 16 of the 64 points of a step: per warp 2 A and 16 B float4 a 16-point step, 32 mmas.
    assert mmas == 128 and loads == ["ld.shared.v4.u32"] * 72


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90a", "sm_75"])
def test_tf32_wgmma_compiles_with_tensor_cores_and_without(arch: str, tmp_path: Path):
    """The TF32 default of the large matmul, on sm_90a's wgmma: per 32-point
    k step of a warpgroup, 4 m64n128k8 from the swizzled shared tiles (no
    shared loads of fragments), a proxy fence before each barrier that
    publishes cp.async's copies to the tensor cores, the tiles 1024-byte
    aligned in dynamic shared memory, no local memory, ptxas injecting no
    wait; for sm_75 (no
    wgmma) each thread's shared loads instead (a slow path, through the
    accumulators' addresses)."""
    source = _large_matmul(tcir.MappingOptions(allow_tf32=True))
    assert "extern __shared__ __align__(1024) unsigned char tc_dynamic_shared[];" in source
    assert "tc_wgmma_m64n128k32_tf32(" in source and "^ ((" in source  # swizzled copies
    text = _ptx(source, arch, tmp_path)
    wgmmas = text.count("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32")
    if arch == "sm_75":
        assert wgmmas == 0 and "ld.shared" in text
        return
    assert wgmmas % 4 == 0 and wgmmas and "fence.proxy.async.shared::cta" in text
    assert "ld.shared" not in text and ".local" not in text
    assert _ptxas_report(source, tmp_path) == (0, 0)


@needs_nvcc
def test_buffers_threads_exchange_are_not_restrict(tmp_path: Path):
    """A row's sum that thread 0 updates in global memory (no promotion) and
    every thread reads after the barrier: its pointer is not `__restrict__`,
    so nvcc loads it again after `bar.sync` (restricted, it reused the value
    each thread loaded before the barrier: wrong norms on an H100)."""
    import subprocess

    rmsnorm = tcir.define((EXAMPLES / "rmsnorm.tc").read_text()).rmsnorm
    inputs = np.zeros((8, 1024), np.float32), np.zeros(1024, np.float32)
    options = tcir.MappingOptions(threads=[256], block_reductions=True, use_shared_memory=False, use_private_memory=False)
    source = rmsnorm.ir(*inputs, backend="cuda", options=options)
    assert "float* ms)" in source and "const float* __restrict__ X" in source
    path = tmp_path / "kernel.cu"
    path.write_text(source)
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "kernel.ptx"), str(path)], check=True)
    ptx = (tmp_path / "kernel.ptx").read_text()
    after_last_barrier = ptx[ptx.rindex("bar.sync") :]
    assert "ld.global.f32" in after_last_barrier


def test_a_float2_copy_inside_a_guard_prints():
    """A staged float2 copy stored under a guard: the printer asked the C
    type of its vector value for `x op= e` and failed (fuzzed on an H100:
    "type 'vector<2xf32>' is not supported")."""
    from tcir.tools.options_fuzz import PROBLEMS
    from tcir.runtime.inputs import random_inputs

    rmsnorm = tcir.define((EXAMPLES / "rmsnorm.tc").read_text()).rmsnorm
    inputs = random_inputs(rmsnorm.definition, PROBLEMS["rmsnorm"], 0)
    options = tcir.MappingOptions(
        blocks=[3], copy_vector_width=2, fusion="outer", max_private_elements=16, num_stages=3,
        parallel_reductions=True, threads=[6, 14], tile=[4, 16], use_private_memory=False,
    )
    source = rmsnorm.ir(*inputs, backend="cuda", options=options)
    assert "float2" in source


@needs_nvcc
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_default_compiles_to_wgmma(dtype: str, tmp_path: Path):
    """The default mapping of a half tmm 128x1024x1024: sm_90a's wgmma
    m64n16k16 on .f16 or .bf16 operands with f32 accumulators, four a 64-point
    k tile, its copies by cp.async, no local memory (no spills); and where
    the reduction is not whole 64-point tiles (1008 points), m16n8k16
    mma.sync."""
    import ml_dtypes

    source = (EXAMPLES / "tmm.tc").read_text().replace("float(", f"{dtype}(")
    tmm = tcir.define(source).tmm
    element = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    ptx_type = "f16" if dtype == "float16" else "bf16"
    text = _ptx(tmm.ir(np.zeros((128, 1024), element), np.zeros((1024, 1024), element), backend="cuda"), "sm_90a", tmp_path)
    wgmmas = text.count(f"wgmma.mma_async.sync.aligned.m64n16k16.f32.{ptx_type}.{ptx_type}")
    assert wgmmas and wgmmas % 4 == 0 and text.count("wgmma.wait_group.sync.aligned 1") == wgmmas // 4
    assert "wgmma.wait_group.sync.aligned 0" in text  # before the epilogue
    assert "cp.async" in text and ".local" not in text
    text = _ptx(tmm.ir(np.zeros((4096, 1008), element), np.zeros((4096, 1008), element), backend="cuda"), "sm_90", tmp_path)
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{ptx_type}.{ptx_type}.f32" in text
    assert "cp.async" in text and ".local" not in text


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("layout", ["nn", "tn"])
def test_half_mn_major_default_compiles_to_transposed_wgmma(layout: str, arch: str, tmp_path: Path):
    """The default mapping of a float16 matmul 2048x1024x2048 whose B (and
    for `tn` A) is MN-major: wgmma m64n128k16 with transposeB (and
    transposeA) set, its copies by cp.async into column blocks of 64 rows,
    no local memory; for sm_80 (no wgmma) each thread's shared loads of the
    MN-major tiles instead. ptxas spills nothing and injects no wait: the
    wgmma of a step runs on into the next."""
    matmul = tcir.define((EXAMPLES / "zoo" / "matmul.tc").read_text().replace("float(", "float16("))[f"matmul_{layout}"]
    a = np.zeros((2048, 1024) if layout[0] == "n" else (1024, 2048), np.float16)
    source = matmul.ir(a, np.zeros((1024, 2048), np.float16), backend="cuda")
    assert "tc_wgmma_descriptor(b, 8192)" in source
    text = _ptx(source, arch, tmp_path)
    transposes = f"{int(layout[0] == 't')}, 1;"
    wgmmas = text.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16")
    if arch == "sm_80":
        assert wgmmas == 0 and "ld.shared" in text
        return
    assert wgmmas and wgmmas % 4 == 0 and text.count(transposes) >= wgmmas
    assert "cp.async" in text and ".local" not in text
    assert _ptxas_report(source, tmp_path) == (0, 0)


def _ptxas_report(source: str, tmp_path: Path) -> tuple[int, int]:
    """What ptxas says of `source` for sm_90a: the bytes it spills and the
    waits it injects for wgmma's registers (where code touches them while
    a wgmma runs: the pipeline serialized)."""
    import re
    import subprocess

    path = tmp_path / "kernels.cu"
    path.write_text(source)
    result = subprocess.run(
        ["nvcc", "-arch=sm_90a", "-c", "-o", str(tmp_path / "kernels.o"), "-Xptxas", "-v", str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", result.stderr))
    return spills, result.stderr.count("warpgroup.wait is injected")
