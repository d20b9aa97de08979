"""tcir: a Tensor Comprehensions compiler built MLIR-style on xDSL.

    import tcir
    mod = tcir.define(source)       # parse + check every def
    out = mod.mm(A, B)              # specialize, compile, run

Compiler developers use `tcir.parse_ir`, `tcir.PassManager` and
`tcir.print_ir`. Every mistake in user input raises a `tcir.TCError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tcir.errors import (
    IRError,
    KernelFault,
    ParseError,
    RangeError,
    ShapeError,
    SourceLocation,
    TCError,
    TypeError_,
)

if TYPE_CHECKING:
    from tcir.api import Function, Module, define
    from tcir.compiler.options import MappingOptions
    from tcir.backends.cuda.runtime import synchronize
    from tcir.passmanager import PassManager, parse_ir, print_ir

__all__ = [
    "Function",
    "Module",
    "define",
    "IRError",
    "KernelFault",
    "MappingOptions",
    "ParseError",
    "PassManager",
    "RangeError",
    "ShapeError",
    "SourceLocation",
    "TCError",
    "TypeError_",
    "parse_ir",
    "print_ir",
    "synchronize",
]

_LAZY = {
    "MappingOptions": "tcir.compiler.options",
    "define": "tcir.api",
    "Module": "tcir.api",
    "Function": "tcir.api",
    "PassManager": "tcir.passmanager",
    "parse_ir": "tcir.passmanager",
    "print_ir": "tcir.passmanager",
    "synchronize": "tcir.backends.cuda.runtime",
}


def __getattr__(name: str) -> Any:
    # Imported on first use: loading xDSL costs ~0.2 s.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tcir' has no attribute '{name}'")
