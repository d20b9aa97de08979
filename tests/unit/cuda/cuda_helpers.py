"""Shared helpers of the CUDA backend tests: IR inputs and a GPU check."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

import tcir
from tcir.backends.cuda.runtime import cuda_available

#: The FileCheck inputs of the CUDA printer double as unit-test inputs.
FILECHECK_DIR = Path(__file__).parents[2] / "filecheck" / "cuda"

#: Inputs that must print (every FileCheck input but the error case).
PRINTABLE = sorted(p.name for p in FILECHECK_DIR.glob("*.mlir") if p.stem != "unsupported")


def load(name: str) -> ModuleOp:
    """Parse a FileCheck input of `tests/filecheck/cuda` by file name."""
    return tcir.parse_ir((FILECHECK_DIR / name).read_text(), name)


def nvcc_compile(source: str, tmp_path: Path, warnings_are_errors: bool = True) -> None:
    """Compile `source` for sm_90 with nvcc; fail the test with its
    diagnostics (and its warnings, unless `warnings_are_errors` is off)."""
    path = tmp_path / "kernels.cu"
    path.write_text(source)
    werror = ["-Werror", "all-warnings"] if warnings_are_errors else []
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-c", "-o", "/dev/null", *werror, str(path)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr + "\n" + source


def ptxas_report(source: str, tmp_path: Path) -> tuple[str, str]:
    """nvcc's PTX for sm_90 of `source` and ptxas's resource usage report (`-v`)."""
    path = tmp_path / "kernels.cu"
    path.write_text(source)
    ptx = tmp_path / "kernels.ptx"
    for command in (
        ["nvcc", "-arch=sm_90", "-ptx", "-o", str(ptx), str(path)],
        ["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", "/dev/null", str(path)],
    ):
        result = subprocess.run(command, check=False, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr + "\n" + source
    return ptx.read_text(), result.stderr


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
needs_gpu = pytest.mark.skipif(not cuda_available(), reason="needs cupy and a CUDA device")
