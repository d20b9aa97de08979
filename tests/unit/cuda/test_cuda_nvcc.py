"""Every kernel the printer emits for the FileCheck inputs is valid CUDA C++."""

from __future__ import annotations

from pathlib import Path

import pytest
from cuda_helpers import PRINTABLE, load, needs_nvcc, nvcc_compile

from tcir.backends.cuda.printer import print_cuda


@needs_nvcc
@pytest.mark.parametrize("name", PRINTABLE)
def test_generated_source_compiles(name: str, tmp_path: Path):
    nvcc_compile(print_cuda(load(name)), tmp_path)
