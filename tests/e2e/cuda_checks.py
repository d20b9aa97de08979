"""What the CUDA end-to-end tests need: skip markers and an nvcc check."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tcir.backends.cuda.runtime import cuda_available

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA device")


def assert_nvcc_compiles(source: str, path: Path) -> None:
    """Write `source` to `path` and compile it for sm_90; fail with nvcc's errors."""
    path.write_text(source)
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-c", "-o", "/dev/null", "-Werror", "all-warnings", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr + source
