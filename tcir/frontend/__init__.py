"""The TC language frontend: parse, check and infer ranges.

`parse(source, filename)` returns one `CheckedDef` per `def` (see `tcir.frontend.ast`)
and raises `tcir.errors.TCError` subclasses (ParseError, TypeError_, RangeError) with
`file:line:col` and a caret under the culprit.
"""

from __future__ import annotations

from tcir.errors import TypeError_

from .ast import (
    Access,
    Binary,
    Call,
    Cast,
    CheckedDef,
    Const,
    Expr,
    IndexVar,
    Loop,
    Param,
    ScalarParam,
    SizeRef,
    Stmt,
    Ternary,
    Unary,
)
from .linear import format_affine
from .parser import parse_source
from .ranges import infer_ranges
from .sema import DefChecker
from .source import Source
from .subscripts import subscript_to_affine

__all__ = [
    "Access", "Binary", "Call", "Cast", "CheckedDef", "Const", "Expr", "IndexVar", "Loop", "Param",
    "ScalarParam", "SizeRef", "Stmt", "Ternary", "Unary", "format_affine", "parse",
    "subscript_to_affine",
]


def parse(source: str, filename: str = "<string>") -> list[CheckedDef]:
    """Parse, check and infer ranges for every def in `source`."""
    src = Source(source, filename)
    defs = parse_source(src)
    seen: set[str] = set()
    out = []
    for d in defs:
        if d.name in seen:
            err = src.error(TypeError_, f"redefinition of def '{d.name}'", d.pos, d.length)
            raise err
        seen.add(d.name)
        out.append(infer_ranges(src, DefChecker(src, d).check()))
    return out
