"""Helpers of the CPU backend tests: parse hand-written loop IR and JIT it."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from tcir.backends.cpu.jit import CompiledModule, compile_module, function_signatures
from tcir.compiler.lowering import lower_to_llvm_dialect


def parse(text: str) -> ModuleOp:
    """Parse loop-level IR written with xDSL's dialects."""
    ctx = Context()
    for name, dialect in get_all_dialects().items():
        ctx.register_dialect(name, dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def jit(text: str) -> CompiledModule:
    """Parse, lower and JIT-compile loop-level IR."""
    module = parse(text)
    return compile_module(lower_to_llvm_dialect(module), function_signatures(module))


def elementwise(
    body: str, inputs: list[str], output: str, n: int, scalars: str = ""
) -> str:
    """IR of `@f(%in0, %in1, ..., %out[, scalars])` computing, for i < n,
    `out[i] = body` where `body` reads `%a`, `%b`, ... (loaded inputs) and
    defines `%r`."""
    names = "abcd"
    params = [f"%in{k}: memref<{n}x{t}>" for k, t in enumerate(inputs)]
    params.append(f"%out: memref<{n}x{output}>")
    if scalars:
        params.append(scalars)
    loads = "\n".join(
        f"    %{names[k]} = memref.load %in{k}[%i] : memref<{n}x{t}>"
        for k, t in enumerate(inputs)
    )
    return f"""
func.func @f({", ".join(params)}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  scf.for %i = %c0 to %cn step %c1 {{
{loads}
    {body}
    memref.store %r, %out[%i] : memref<{n}x{output}>
  }}
  func.return
}}
"""
