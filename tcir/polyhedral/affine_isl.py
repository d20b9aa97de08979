"""xDSL affine expressions as isl piecewise quasi-affine functions.

TC subscripts and ranges are `AffineExpr`s whose dimensions and symbols are
bound by the caller (iteration variables, size names); here they become
`isl.PwAff`s on a given isl set space, so that domains, access relations and
tensor extents are built with isl's operations rather than with strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)


class NotAffine(Exception):
    """The expression is not (quasi-)affine in the bound variables."""


@dataclass(frozen=True)
class IslAffineBuilder:
    """Builds `isl.PwAff`s on the set space `space`.

    An expression's dimension `k` is `dims[k]`: an isl set dimension position,
    a parameter name (an integer scalar used as a size), or None for a value
    that is not an affine variable (an indirection); its symbol `k` is the
    parameter named `symbols[k]`.
    """

    space: isl.Space
    dims: Sequence[int | str | None] = ()
    symbols: Sequence[str] = ()

    def _local_space(self) -> isl.LocalSpace:
        return isl.LocalSpace.from_space(self.space)

    def constant(self, value: int) -> isl.PwAff:
        aff = isl.Aff.val_on_domain(self._local_space(), isl.Val(value))
        return isl.PwAff.from_aff(aff)

    def variable(self, kind: isl.dim_type, position: int) -> isl.PwAff:
        aff = isl.Aff.var_on_domain(self._local_space(), kind, position)
        return isl.PwAff.from_aff(aff)

    def parameter(self, name: str) -> isl.PwAff:
        position = self.space.find_dim_by_name(isl.dim_type.param, name)
        if position < 0:
            raise NotAffine(f"'{name}' is not a size")
        return self.variable(isl.dim_type.param, position)

    def build(self, expr: AffineExpr) -> isl.PwAff:
        """`expr` as a PwAff; raises `NotAffine` for semi-affine or indirect parts."""
        match expr:
            case AffineConstantExpr(value=value):
                return self.constant(value)
            case AffineDimExpr(position=position):
                dim = self.dims[position]
                if dim is None:
                    raise NotAffine("a subscript read from a tensor")
                if isinstance(dim, str):
                    return self.parameter(dim)
                return self.variable(isl.dim_type.set, dim)
            case AffineSymExpr(position=position):
                return self.parameter(self.symbols[position])
            case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
                return self._binary(kind, lhs, rhs)
        raise NotAffine(f"unknown affine expression {expr}")

    def _binary(
        self, kind: AffineBinaryOpKind, lhs: AffineExpr, rhs: AffineExpr
    ) -> isl.PwAff:
        if kind == AffineBinaryOpKind.Add:
            return self.build(lhs).add(self.build(rhs))
        if kind == AffineBinaryOpKind.Mul:
            if isinstance(lhs, AffineConstantExpr):
                lhs, rhs = rhs, lhs
            if not isinstance(rhs, AffineConstantExpr):
                raise NotAffine(f"product '{lhs} * {rhs}' of non-constants")
            return self.build(lhs).scale_val(isl.Val(rhs.value))
        if not isinstance(rhs, AffineConstantExpr) or rhs.value <= 0:
            raise NotAffine(f"division by '{rhs}', not by a positive constant")
        divisor = isl.Val(rhs.value)
        value = self.build(lhs)
        if kind == AffineBinaryOpKind.FloorDiv:
            return value.scale_down_val(divisor).floor()
        if kind == AffineBinaryOpKind.CeilDiv:
            return value.scale_down_val(divisor).ceil()
        return value.mod_val(divisor)


def box(
    space: isl.Space,
    bounds: Sequence[tuple[isl.PwAff, isl.PwAff] | None],
) -> isl.Set:
    """The set of `space` where `lo <= x_k < hi` for each `(lo, hi)` of `bounds`
    (None: unbounded dimension)."""
    result = isl.Set.universe(space)
    builder = IslAffineBuilder(space)
    for k, bound in enumerate(bounds):
        if bound is not None:
            lo, hi = bound
            var = builder.variable(isl.dim_type.set, k)
            result = result.intersect(lo.le_set(var)).intersect(var.lt_set(hi))
    return result


def relation(
    domain_space: isl.Space,
    target: str,
    outputs: Sequence[isl.PwAff | None],
) -> isl.Map:
    """The map `{ S[i] -> target[f_0(i), ...] }` of the functions `outputs` on
    `domain_space`; a None output is left unconstrained."""
    space = domain_space.from_domain().add_dims(isl.dim_type.out, len(outputs))
    zero = IslAffineBuilder(domain_space).constant(0)
    functions = isl.PwAffList.alloc(isl.DEFAULT_CONTEXT, len(outputs))
    for output in outputs:
        functions = functions.add(zero if output is None else output)
    result = isl.Map.from_multi_pw_aff(isl.MultiPwAff.from_pw_aff_list(space, functions))
    for k, output in enumerate(outputs):
        if output is None:
            result = result.project_out(isl.dim_type.out, k, 1).insert_dims(
                isl.dim_type.out, k, 1
            )
    return result.set_tuple_name(isl.dim_type.out, target)
