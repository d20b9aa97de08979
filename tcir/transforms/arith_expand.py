"""The `arith-expand` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


def _constant(value: int, like: SSAValue) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, like.type))  # pyright: ignore[reportArgumentType]


class FloorDivSIExpansion(RewritePattern):
    """`floordivsi(a, b)` -> `q = divsi(a, b)`, minus one when the remainder is
    nonzero and its sign differs from `b`'s."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FloorDivSIOp, rewriter: PatternRewriter):
        _signed_adjusted_division(op, rewriter, adjust=-1, predicate="ne")


class CeilDivSIExpansion(RewritePattern):
    """`ceildivsi(a, b)` -> `q = divsi(a, b)`, plus one when the remainder is
    nonzero and has the sign of `b`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CeilDivSIOp, rewriter: PatternRewriter):
        _signed_adjusted_division(op, rewriter, adjust=1, predicate="eq")


def _signed_adjusted_division(
    op: arith.FloorDivSIOp | arith.CeilDivSIOp,
    rewriter: PatternRewriter,
    adjust: int,
    predicate: str,
) -> None:
    """`q = a / b` (truncating), then `q + adjust` if `a % b != 0` and
    `(a % b < 0) <predicate> (b < 0)`."""
    lhs, rhs = op.lhs, op.rhs
    zero, step = _constant(0, lhs), _constant(adjust, lhs)
    quotient = arith.DivSIOp(lhs, rhs)
    remainder = arith.RemSIOp(lhs, rhs)
    inexact = arith.CmpiOp(remainder, zero, "ne")
    remainder_negative = arith.CmpiOp(remainder, zero, "slt")
    divisor_negative = arith.CmpiOp(rhs, zero, "slt")
    signs = arith.CmpiOp(remainder_negative, divisor_negative, predicate)
    needs_adjust = arith.AndIOp(inexact, signs)
    adjusted = arith.AddiOp(quotient, step)
    result = arith.SelectOp(needs_adjust, adjusted, quotient)
    new_ops: list[Operation] = [
        zero,
        step,
        quotient,
        remainder,
        inexact,
        remainder_negative,
        divisor_negative,
        signs,
        needs_adjust,
        adjusted,
        result,
    ]
    rewriter.replace(op, new_ops, result.results)


class CeilDivUIExpansion(RewritePattern):
    """`ceildivui(a, b)` -> `divui(a, b)`, plus one when `remui(a, b) != 0`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CeilDivUIOp, rewriter: PatternRewriter):
        zero, one = _constant(0, op.lhs), _constant(1, op.lhs)
        quotient = arith.DivUIOp(op.lhs, op.rhs)
        remainder = arith.RemUIOp(op.lhs, op.rhs)
        inexact = arith.CmpiOp(remainder, zero, "ne")
        adjusted = arith.AddiOp(quotient, one)
        result = arith.SelectOp(inexact, adjusted, quotient)
        rewriter.replace(
            op,
            [zero, one, quotient, remainder, inexact, adjusted, result],
            result.results,
        )


@dataclass(frozen=True)
class ArithExpandPass(ModulePass):
    """Expand `arith` ops that have no LLVM counterpart into simpler `arith` ops.

    `floordivsi`, `ceildivsi` and `ceildivui` become truncating division,
    remainder, comparisons and `select`, as MLIR's `arith-expand` does.
    """

    name = "arith-expand"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FloorDivSIExpansion(), CeilDivSIExpansion(), CeilDivUIExpansion()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
