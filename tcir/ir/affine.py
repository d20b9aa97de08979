"""Affine expressions that may be semi-affine until sizes are specialized.

xDSL's `AffineExpr` operators refuse products and divisions by non-constants;
TC needs them for strides given as scalar inputs (`sh * h`), so these helpers
build such nodes directly and fold them back once the operands are constants.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)


def mul(lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """`lhs * rhs`, falling back to a semi-affine node for symbol * dim."""
    if isinstance(lhs, AffineConstantExpr) or isinstance(rhs, AffineConstantExpr):
        return lhs * rhs
    return AffineBinaryOpExpr(AffineBinaryOpKind.Mul, lhs, rhs)


def binary(kind: AffineBinaryOpKind, lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """Build `lhs kind rhs`, semi-affine when `rhs` is not a constant."""
    if kind == AffineBinaryOpKind.Mul:
        return mul(lhs, rhs)
    if isinstance(rhs, AffineConstantExpr):
        if rhs.value == 0:
            raise ValueError(f"{kind.get_token()} by zero")
        if kind == AffineBinaryOpKind.FloorDiv:
            return lhs // rhs
        if kind == AffineBinaryOpKind.CeilDiv:
            return lhs.ceil_div(rhs)
        return lhs % rhs
    return AffineBinaryOpExpr(kind, lhs, rhs)


def substitute(
    expr: AffineExpr, dims: Sequence[AffineExpr], symbols: Sequence[AffineExpr]
) -> AffineExpr:
    """`expr` with dims and symbols replaced, constants folded on the way."""
    match expr:
        case AffineDimExpr(position=position):
            return dims[position]
        case AffineSymExpr(position=position):
            return symbols[position]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = substitute(lhs, dims, symbols)
            b = substitute(rhs, dims, symbols)
            if kind == AffineBinaryOpKind.Add:
                return a + b
            return binary(kind, a, b)
        case _:
            return expr


def is_constant(expr: AffineExpr) -> bool:
    return isinstance(expr, AffineConstantExpr)
