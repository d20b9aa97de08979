"""isl quasi-affine functions as xDSL `AffineExpr`s, and back.

The functions come from isl (buffer indices of promoted accesses, global
indices of copies); their domain dimensions become affine dimensions and
their parameters affine symbols, named by the caller. Code generation reads
the buffer indices back into isl (`affine_map_to_isl`) to simplify them
against the loops around each access.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import islpy as isl
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)


class NotExpressible(Exception):
    """The function has several pieces, or a parameter that is not a symbol."""


def _integer(value: isl.Val) -> int:
    if not value.is_int():
        raise NotExpressible(f"rational coefficient {value}")
    return value.to_python()


def aff_to_expr(aff: isl.Aff, symbols: Sequence[str]) -> AffineExpr:
    """`aff` with input dimension k as `d<k>` and parameter `symbols[j]` as `s<j>`."""
    denominator = aff.get_denominator_val()
    scaled = aff.scale_val(denominator)
    result = AffineExpr.constant(_integer(scaled.get_constant_val()))
    for k in range(aff.dim(isl.dim_type.in_)):
        coefficient = _integer(scaled.get_coefficient_val(isl.dim_type.in_, k))
        if coefficient:
            result = result + AffineExpr.dimension(k) * coefficient
    for k in range(aff.dim(isl.dim_type.param)):
        coefficient = _integer(scaled.get_coefficient_val(isl.dim_type.param, k))
        if coefficient:
            name = aff.get_dim_name(isl.dim_type.param, k)
            if name not in symbols:
                raise NotExpressible(f"parameter '{name}'")
            result = result + AffineExpr.symbol(list(symbols).index(name)) * coefficient
    for k in range(aff.dim(isl.dim_type.div)):
        coefficient = _integer(scaled.get_coefficient_val(isl.dim_type.div, k))
        if coefficient:
            result = result + _div_to_expr(aff.get_div(k), symbols) * coefficient
    one = denominator.is_one()
    return result if one else result // _integer(denominator)


def _div_to_expr(div: isl.Aff, symbols: Sequence[str]) -> AffineExpr:
    """`floor(div)` for the rational argument `div` of an integer division."""
    denominator = div.get_denominator_val()
    numerator = aff_to_expr(div.scale_val(denominator), symbols)
    return numerator // _integer(denominator)


def single_multi_aff(function: isl.PwMultiAff) -> isl.MultiAff:
    """The one piece of `function`; raises `NotExpressible` for several."""
    if function.n_piece() != 1:
        raise NotExpressible(f"{function.n_piece()} pieces in {function}")
    pieces: list[isl.MultiAff] = []
    function.foreach_piece(lambda _set, ma: pieces.append(ma))
    return pieces[0]


def function_of(relation: isl.Map, hidden: Sequence[str], late: Sequence[str] = ()) -> isl.MultiAff:
    """The single-valued `relation` as one quasi-affine function, once the
    parameters `hidden` are projected out (`_function_of`). Where every
    order of the projections gives several pieces, the same with the
    equalities isl detects made explicit: a block id bounded in a roundabout
    form (a batched product's row tile on two blocks, `128 block_x <= m -
    (m mod 128)` written through `256 floor((1 + block_x) / 2)`) hides that
    a warpgroup's private row index is `(m / 8) mod 2`."""
    try:
        return _function_of(relation, hidden, late)
    except NotExpressible:
        return _function_of(relation.detect_equalities(), hidden, late)


def _function_of(relation: isl.Map, hidden: Sequence[str], late: Sequence[str] = ()) -> isl.MultiAff:
    """The single-valued `relation` as one quasi-affine function, once the
    parameters `hidden` are projected out (they must be implied by the
    domain), and `late` too unless the function does not involve them.
    The order of the projections changes how isl writes the result, not
    what it is: projecting a block id out with the thread ids can split a
    function that is the same in every block (the private index of a
    warp's sub-tile, `(m mod 32) floordiv 8`) into dozens of pieces, and
    projecting the thread ids first can split the private index of a
    warpgroup's rows on a grid of several row tiles; the first order that
    gives one piece wins."""
    projected = _project(relation, hidden)
    present = [n for n in late if relation.find_dim_by_name(isl.dim_type.param, n) >= 0]
    if not present:
        return _one_function(projected)
    found = _independent_of(projected, present)
    if found is not None:
        return found
    try:
        return _one_function(_project(projected, present))
    except NotExpressible:
        return _one_function(_project(_project(relation, present), hidden))


def _project(relation: isl.Map, names: Sequence[str]) -> isl.Map:
    """`relation` with the parameters `names` projected out."""
    for name in names:
        position = relation.find_dim_by_name(isl.dim_type.param, name)
        if position >= 0:
            relation = relation.project_out(isl.dim_type.param, position, 1)
    return relation


Coalescible = TypeVar("Coalescible", isl.Set, isl.Map, isl.UnionSet, isl.UnionMap)


def coalesced(relation: Coalescible) -> Coalescible:
    """`relation` coalesced, or as it is where isl's coalescing fails inside
    (`original tableau does not correspond to original basic map`, seen on a
    padded convolution's split-K footprints): coalescing only merges the
    pieces of the same set, so the result means the same either way."""
    try:
        return relation.coalesce()
    except isl.Error:
        return relation


def _one_function(relation: isl.Map) -> isl.MultiAff:
    """The single-valued `relation` as one quasi-affine function."""
    if not relation.is_single_valued():
        raise NotExpressible(f"{relation} is not a function")
    try:
        function = isl.PwMultiAff.from_map(relation)
    except isl.Error as error:  # a function isl cannot write without the existentials it hides
        raise NotExpressible(str(error)) from None
    return single_multi_aff(function.coalesce())


def _independent_of(relation: isl.Map, names: Sequence[str]) -> isl.MultiAff | None:
    """`relation` as one function that involves none of the parameters
    `names`, without them; None where it is not one."""
    try:
        function = _one_function(relation)
    except NotExpressible:
        return None
    for name in names:
        position = function.find_dim_by_name(isl.dim_type.param, name)
        if function.involves_dims(isl.dim_type.param, position, 1):
            return None
        function = function.drop_dims(isl.dim_type.param, position, 1)
    return function


def affine_map_attr(function: isl.MultiAff, symbols: Sequence[str]) -> AffineMapAttr:
    """`function` as an affine map over its input dimensions and `symbols`."""
    n_in = function.dim(isl.dim_type.in_)
    exprs = [
        aff_to_expr(function.get_at(k), symbols)
        for k in range(function.dim(isl.dim_type.out))
    ]
    return AffineMapAttr(AffineMap(n_in, len(symbols), tuple(exprs)))


def _isl_text(expr: AffineExpr, symbols: Sequence[str]) -> str:
    """`expr` in isl syntax, with `d<k>` as is and `s<j>` as `symbols[j]`."""
    if isinstance(expr, AffineDimExpr):
        return f"d{expr.position}"
    if isinstance(expr, AffineSymExpr):
        return symbols[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return str(expr.value)
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = _isl_text(expr.lhs, symbols), _isl_text(expr.rhs, symbols)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return f"({lhs} + {rhs})"
        case AffineBinaryOpKind.Mul:  # isl reads a product as `constant * (expression)`
            if isinstance(expr.lhs, AffineConstantExpr):
                return f"({lhs} * ({rhs}))"
            return f"({rhs} * ({lhs}))"
        case AffineBinaryOpKind.Mod:
            return f"(({lhs}) mod {rhs})"
        case AffineBinaryOpKind.FloorDiv:
            return f"floor(({lhs})/{rhs})"
        case AffineBinaryOpKind.CeilDiv:
            return f"ceil(({lhs})/{rhs})"


def affine_map_to_isl(function: AffineMap, domain: str, symbols: Sequence[str]) -> isl.MultiAff:
    """The inverse of `affine_map_attr`: `function` on the tuple `domain`,
    its symbols the parameters `symbols`."""
    dims = ", ".join(f"d{k}" for k in range(function.num_dims))
    exprs = ", ".join(_isl_text(e, symbols) for e in function.results)
    return isl.MultiAff(f"[{', '.join(symbols)}] -> {{ {domain}[{dims}] -> [{exprs}] }}")
