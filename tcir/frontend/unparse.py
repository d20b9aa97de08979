"""TC source text of checked expressions, sizes and parameters.

The derived backward of a def (`tcir.frontend.gradient`) is TC source that a
person reads and may edit; this prints the pieces it is made of, in TC's own
syntax: the types as written (`float`, `double`, `int`), sizes and ranges
with `/` for floor division, and expressions with the parentheses that TC's
precedence needs (none where it needs none).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from . import ast as A
from .dtypes import HALF_TYPES, is_float
from .linear import Div, Lin

TYPE_NAMES = {"float32": "float", "float64": "double", "int32": "int", "float16": "half"}
"""How TC sources usually spell a canonical type (others are written as they are)."""

_BINARY_LEVEL = {
    "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
    "+": 4, "-": 4, "*": 5, "/": 5, "%": 5,
}
_UNARY_LEVEL, _PRIMARY_LEVEL = 6, 7


def type_text(dtype: str) -> str:
    """`float32` -> `float`."""
    return TYPE_NAMES.get(dtype, dtype)


def affine_text(expr: AffineExpr, dims: Sequence[str], syms: Sequence[str]) -> str:
    """An affine expression as a TC integer expression (`M - N + 1`, `(H - 2) / 2`)."""
    return _Affine(dims, syms).text(expr)


def lin_text(lin: Lin) -> str:
    """A `Lin` (sizes and indices by name) as a TC integer expression, its
    positive terms first (`W - KW + 1`)."""
    terms = sorted((t for t in lin.terms if t[0]), key=lambda t: t[1] < 0)
    out = ""
    for mono, c in terms:
        factors = [a if isinstance(a, str) else _div_text(a) for a in mono]
        if abs(c) != 1 or len(mono) > 1:  # `2 * ((H + 1) / 2)`: a quotient is one factor
            factors = [f if isinstance(a, str) else f"({f})" for a, f in zip(mono, factors)]
        if abs(c) != 1:
            factors.insert(0, str(abs(c)))
        term = " * ".join(factors)
        out = (f"{out} - {term}" if out else f"-{term}") if c < 0 else (f"{out} + {term}" if out else term)
    const = dict(lin.terms).get((), 0)
    if not out:
        return str(const)
    return f"{out} - {-const}" if const < 0 else f"{out} + {const}" if const else out


def _div_text(div: Div) -> str:
    num = lin_text(div.num)
    return f"({num}) / {div.den}" if len(div.num.terms) > 1 else f"{num} / {div.den}"


class _Affine:
    def __init__(self, dims: Sequence[str], syms: Sequence[str]):
        self.dims, self.syms = dims, syms

    def text(self, expr: AffineExpr) -> str:
        terms: list[AffineExpr] = []
        self.flatten(expr, terms)
        out = ""
        for k, term in enumerate(terms):
            negated = self.negated(term)
            if k == 0:
                out = f"-{self.factor(negated)}" if negated is not None else self.term(term)
            else:
                out += f" - {self.factor(negated)}" if negated is not None else f" + {self.term(term)}"
        return out

    def flatten(self, e: AffineExpr, terms: list[AffineExpr]) -> None:
        if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Add:
            self.flatten(e.lhs, terms)
            self.flatten(e.rhs, terms)
        else:
            terms.append(e)

    @staticmethod
    def negated(e: AffineExpr) -> AffineExpr | None:
        if isinstance(e, AffineConstantExpr) and e.value < 0:
            return AffineConstantExpr(-e.value)
        if (
            isinstance(e, AffineBinaryOpExpr)
            and e.kind == AffineBinaryOpKind.Mul
            and isinstance(e.rhs, AffineConstantExpr)
            and e.rhs.value < 0
        ):
            if e.rhs.value == -1:
                return e.lhs
            return AffineBinaryOpExpr(AffineBinaryOpKind.Mul, e.lhs, AffineConstantExpr(-e.rhs.value))
        return None

    def factor(self, e: AffineExpr) -> str:
        text = self.term(e)
        compound = isinstance(e, AffineBinaryOpExpr) and e.kind != AffineBinaryOpKind.Mul
        return f"({text})" if compound else text

    def term(self, e: AffineExpr) -> str:
        if isinstance(e, AffineConstantExpr):
            return str(e.value)
        if isinstance(e, AffineDimExpr):
            return self.dims[e.position]
        if isinstance(e, AffineSymExpr):
            return self.syms[e.position]
        assert isinstance(e, AffineBinaryOpExpr)
        if e.kind == AffineBinaryOpKind.Add:
            return self.text(e)
        if e.kind == AffineBinaryOpKind.Mul:
            if isinstance(e.rhs, AffineConstantExpr):
                return f"{e.rhs.value} * {self.factor(e.lhs)}"
            return f"{self.factor(e.lhs)} * {self.factor(e.rhs)}"
        if e.kind == AffineBinaryOpKind.CeilDiv:  # ceil(a / b) = (a + b - 1) / b for b >= 1
            den = self.factor(e.rhs)
            return f"({self.text(e.lhs)} + {den} - 1) / {den}"
        op = "/" if e.kind == AffineBinaryOpKind.FloorDiv else "%"
        return f"{self.factor(e.lhs)} {op} {self.factor(e.rhs)}"


def param_text(param: A.Param, sizes: Sequence[str]) -> str:
    """`float(M, K) A`, or `float s` for a scalar."""
    if param.is_scalar:
        return f"{type_text(param.dtype)} {param.name}"
    dims = ", ".join(affine_text(d, (), sizes) for d in param.dims)
    return f"{type_text(param.dtype)}({dims}) {param.name}"


def expr_text(e: A.Expr, sizes: Sequence[str]) -> str:
    """`e` as TC text (sizes named by `sizes`, the def's size parameters)."""
    return _Printer(sizes).text(e)[0]


def constant_text(value: int | float | bool, dtype: str) -> str:
    """A literal of `value` (floats always with a `.` or an exponent; a half
    type's cast from one, `half(0.5)`: a bare literal is a float)."""
    if dtype == "bool":
        return "(0 == 0)" if value else "(0 != 0)"
    if not is_float(dtype):
        return str(int(value))
    if dtype in HALF_TYPES:
        return f"{type_text(dtype)}({constant_text(value, 'float32')})"
    value = float(value)
    if math.isnan(value):
        return "(0.0 / 0.0)"
    if math.isinf(value):
        return "(1.0 / 0.0)" if value > 0 else "(-1.0 / 0.0)"
    text = repr(value)
    return text if any(c in text for c in ".e") else text + ".0"


class _Printer:
    """Prints checked expressions; `text` returns the text and its precedence level."""

    def __init__(self, sizes: Sequence[str]):
        self.sizes = sizes

    def operand(self, e: A.Expr, level: int) -> str:
        text, own = self.text(e)
        return text if own >= level else f"({text})"

    def text(self, e: A.Expr) -> tuple[str, int]:
        match e:
            case A.Const(value=value):
                text = constant_text(value, e.type)  # `-1.0` is parenthesized after `-` and `*`
                return text, (_PRIMARY_LEVEL if not text.startswith("-") else _BINARY_LEVEL["*"])
            case A.IndexVar(name=name) | A.ScalarParam(name=name):
                return name, _PRIMARY_LEVEL
            case A.SizeRef(expr=expr):
                text = affine_text(expr, (), self.sizes)
                simple = isinstance(expr, AffineSymExpr | AffineConstantExpr)
                return (text, _PRIMARY_LEVEL) if simple else (f"({text})", _PRIMARY_LEVEL)
            case A.Access(tensor=tensor, subscripts=subscripts):
                return f"{tensor}({', '.join(self.text(s)[0] for s in subscripts)})", _PRIMARY_LEVEL
            case A.Call(name=name, args=args):
                return f"{name}({', '.join(self.text(a)[0] for a in args)})", _PRIMARY_LEVEL
            case A.Cast(x=x):
                return f"{type_text(e.type)}({self.text(x)[0]})", _PRIMARY_LEVEL
            case A.Unary(op=op, x=x):
                return f"{op}{self.operand(x, _UNARY_LEVEL)}", _UNARY_LEVEL
            case A.Binary(op=op, a=a, b=b):
                level = _BINARY_LEVEL[op]
                # Left-associative: a right operand of the same level keeps its
                # parentheses (and so does the order of float additions).
                return f"{self.operand(a, level)} {op} {self.operand(b, level + 1)}", level
            case A.Ternary(c=c, a=a, b=b):
                return f"{self.operand(c, 1)} ? {self.text(a)[0]} : {self.text(b)[0]}", 0
        raise AssertionError(f"unknown expression {type(e).__name__}")
