"""The `cuda` target: CUDA C of every kernel of a gpu-level module.

`tcir-opt -t cuda` and `tcir-translate --target=cuda` use `CudaTarget` once it
is registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from tcir.errors import TCError


@dataclass(frozen=True)
class CudaTarget(Target):
    """Print the CUDA C translation unit of all `gpu.func` kernels."""

    name = "cuda"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcir.backends.cuda.printer import print_cuda

        if not any(isinstance(op, gpu.FuncOp) for op in module.walk()):
            raise TCError("target cuda: the module has no gpu.func kernel (lower it with convert-poly-to-gpu)")
        output.write(print_cuda(module))
