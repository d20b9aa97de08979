"""The `llvm` target of `tcir-translate`/`tcir-opt -t`: optimized LLVM IR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class CpuLLVMTarget(Target):
    """Lower a loop-level module with the CPU pipeline and print the LLVM IR
    after O3 for the host (`optimize=false` prints it before O3)."""

    name = "llvm"

    optimize: bool = True

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcir.backends.cpu.jit import translate_to_llvm_ir

        output.write(translate_to_llvm_ir(module, optimize=self.optimize))
