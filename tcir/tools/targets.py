"""The targets that `tcir-opt -t` and `tcir-translate --target` add to
xDSL's: `llvm` (tcir's CPU lowering to LLVM IR) and `cuda` (CUDA C).

Registered by the tools, not in the universe: xDSL has an `llvm` target of
its own (which prints modules already in the `llvm` dialect).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class LLVMTarget(Target):
    """Lower a loop-level module with the CPU pipeline and print the LLVM IR
    after O3 for the host (`optimize=false` prints it before O3)."""

    name = "llvm"

    optimize: bool = True

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcir.backends.cpu.jit import translate_to_llvm_ir
        from tcir.compiler.lowering import lower_to_llvm_dialect

        output.write(translate_to_llvm_ir(lower_to_llvm_dialect(module), optimize=self.optimize))
