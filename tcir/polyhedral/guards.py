"""Affine guards of reductions, moved from a statement's body into its domain.

A padded convolution sums `c ? I(...) * W(...) : 0.0`: where the affine
condition `c` on the indices and sizes does not hold, the instance adds the
reduction's identity, which changes nothing. `guarded_reduction` finds such
a body (a `tc.yield` of an `scf.if` or `arith.select` whose other value is
the identity) and gives the condition as an isl set; `unguard` then makes
the body yield the guarded value alone. `convert-tc-to-poly` intersects the
statement's domain with the set: isl's loops skip those instances (a padded
convolution's taps outside the image), and the body has no branch left to
keep its products from fusing with the sums (`fma`). A scatter's sum too:
its skipped instances would write elements the guard keeps it from (a
strided, padded convolution's input gradient).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import islpy as isl
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.tc import SizeOp, YieldOp
from tcir.polyhedral.affine_isl import IslAffineBuilder, NotAffine

_IDENTITY = {"+": 0.0, "*": 1.0, "max": -math.inf, "min": math.inf}
_CONDITION_OPS = (
    arith.ConstantOp, arith.IndexCastOp, arith.ExtSIOp, arith.AddiOp, arith.SubiOp, arith.MuliOp,
    arith.CmpiOp, arith.AndIOp, arith.OrIOp, SizeOp,
)
"""The ops an affine condition is computed by (`_Affine`)."""
_COMPARISONS = {
    "slt": isl.PwAff.lt_set,
    "sle": isl.PwAff.le_set,
    "sgt": isl.PwAff.gt_set,
    "sge": isl.PwAff.ge_set,
    "eq": isl.PwAff.eq_set,
    "ne": isl.PwAff.ne_set,
}


class _Affine:
    """Integer values of a body as `isl.PwAff`s on a statement space whose
    set dimensions are the body's block arguments."""

    def __init__(self, space: isl.Space, args: Sequence[BlockArgument]):
        self.builder = IslAffineBuilder(space, list(range(len(args))))
        self.args = list(args)

    def value(self, value: SSAValue) -> isl.PwAff:
        if isinstance(value, BlockArgument) and value in self.args:
            return self.builder.variable(isl.dim_type.set, self.args.index(value))
        op = value.owner
        match op:
            case arith.IndexCastOp() | arith.ExtSIOp():
                return self.value(op.input)
            case arith.ConstantOp(value=IntegerAttr() as attr):
                return self.builder.constant(attr.value.data)
            case SizeOp():
                sizes = IslAffineBuilder(self.builder.space, (), op.symbol_names)
                return sizes.build(op.size)
            case arith.AddiOp():
                return self.value(op.lhs).add(self.value(op.rhs))
            case arith.SubiOp():
                return self.value(op.lhs).sub(self.value(op.rhs))
            case arith.MuliOp():
                lhs, rhs = self.value(op.lhs), self.value(op.rhs)
                if not (lhs.is_cst() or rhs.is_cst()):
                    raise NotAffine("a product of two indices")
                return lhs.mul(rhs)
            case _:
                raise NotAffine(f"a value of '{getattr(op, 'name', 'an argument')}'")

    def condition(self, value: SSAValue) -> isl.Set:
        op = value.owner
        match op:
            case arith.CmpiOp():
                predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
                if predicate not in _COMPARISONS:
                    raise NotAffine(f"an unsigned comparison '{predicate}'")
                return _COMPARISONS[predicate](self.value(op.lhs), self.value(op.rhs))
            case arith.AndIOp():
                return self.condition(op.lhs).intersect(self.condition(op.rhs))
            case arith.OrIOp():
                return self.condition(op.lhs).union(self.condition(op.rhs)).coalesce()
            case arith.ConstantOp(value=IntegerAttr() as attr):
                universe = isl.Set.universe(self.builder.space)
                return universe if attr.value.data else isl.Set.empty(self.builder.space)
            case _:
                raise NotAffine("a condition that is no comparison of indices")


def _constant(value: SSAValue) -> float | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr | IntegerAttr):
        return float(op.value.value.data)
    return None


def _branches(value: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """(condition, value where it holds, value where not) of an `scf.if` or
    `arith.select` that yields one value."""
    op = value.owner
    if isinstance(op, arith.SelectOp):
        return op.cond, op.lhs, op.rhs
    if isinstance(op, scf.IfOp) and len(op.results) == 1 and op.false_region.blocks:
        then_yield, else_yield = op.true_region.block.last_op, op.false_region.block.last_op
        assert isinstance(then_yield, scf.YieldOp) and isinstance(else_yield, scf.YieldOp)
        return op.cond, then_yield.arguments[0], else_yield.arguments[0]
    return None


def identity_guard(value: SSAValue, reduction: str) -> SSAValue | None:
    """The condition `c` of a `value` that is `c ? x : identity` of
    `reduction` (a select, or an `scf.if` of a guarded ternary); else None."""
    branches = _branches(value)
    if branches is None or _constant(branches[2]) != _IDENTITY[reduction]:
        return None
    return branches[0]


def guarded_reduction(block: Block, reduction: str, space: isl.Space) -> isl.Set | None:
    """The instances (a set on `space`) where `block`'s yielded value is not
    the identity of `reduction`, where the body yields `c ? x : identity`
    with `c` affine; None otherwise."""
    last = block.last_op
    condition = identity_guard(last.value, reduction) if isinstance(last, YieldOp) else None
    if condition is None:
        return None
    try:
        return _Affine(space, block.args).condition(condition)
    except NotAffine:
        return None


def unguard(block: Block) -> None:
    """Make `block` (which `guarded_reduction` accepted) yield the guarded
    value alone: the branch's ops inlined, the condition's ops erased."""
    last = block.last_op
    assert isinstance(last, YieldOp)
    op = last.value.owner
    assert isinstance(op, Operation)
    if isinstance(op, scf.IfOp):
        then_block = op.true_region.block
        then_yield = then_block.last_op
        assert isinstance(then_yield, scf.YieldOp)
        value = then_yield.arguments[0]
        for inner in list(then_block.ops)[:-1]:
            inner.detach()
            Rewriter.insert_op(inner, InsertPoint.before(op))
    else:
        assert isinstance(op, arith.SelectOp)
        value = op.lhs
    op.results[0].replace_all_uses_with(value)
    Rewriter.erase_op(op)
    for dead in reversed(list(block.ops)):  # the condition's arithmetic
        if isinstance(dead, _CONDITION_OPS) and not any(r.uses for r in dead.results):
            Rewriter.erase_op(dead)
