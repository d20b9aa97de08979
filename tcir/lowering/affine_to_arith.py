"""Materialize affine expressions as `arith` index computations.

xDSL's `lower-affine` only handles plain dimension maps, and tcir's maps
carry named sizes, floordiv and semi-affine products, so expressions are
expanded here directly into `arith` ops on `index` values.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)


def index_constant(builder: Builder, value: int) -> SSAValue:
    return builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def as_index(builder: Builder, value: SSAValue) -> SSAValue:
    """`value` as an `index` (integer values are sign-extended)."""
    if isinstance(value.type, IndexType):
        return value
    return builder.insert(arith.IndexCastOp(value, IndexType())).result


def materialize(
    builder: Builder,
    expr: AffineExpr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
) -> SSAValue:
    """An `index` value computing `expr`; dims and symbols are `index` values.

    `mod` follows MLIR: the result has the sign of the (positive) divisor.
    """
    match expr:
        case AffineConstantExpr(value=value):
            return index_constant(builder, value)
        case AffineDimExpr(position=position):
            return dims[position]
        case AffineSymExpr(position=position):
            return symbols[position]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = materialize(builder, lhs, dims, symbols)
            b = materialize(builder, rhs, dims, symbols)
            match kind:
                case AffineBinaryOpKind.Add:
                    return builder.insert(arith.AddiOp(a, b)).result
                case AffineBinaryOpKind.Mul:
                    return builder.insert(arith.MuliOp(a, b)).result
                case AffineBinaryOpKind.FloorDiv:
                    return builder.insert(arith.FloorDivSIOp(a, b)).result
                case AffineBinaryOpKind.CeilDiv:
                    return builder.insert(arith.CeilDivSIOp(a, b)).result
                case AffineBinaryOpKind.Mod:
                    rem = builder.insert(arith.RemSIOp(a, b)).result
                    shifted = builder.insert(arith.AddiOp(rem, b)).result
                    return builder.insert(arith.RemSIOp(shifted, b)).result
    raise AssertionError(f"unknown affine expression {expr}")
