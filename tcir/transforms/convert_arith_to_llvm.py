"""The `convert-arith-to-llvm` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i1,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tcir.backends.cpu import llvm_ext
from tcir.backends.cpu.llvm_conversion import (
    call_intrinsic,
    convert_type,
    llvm_operands,
    replace_with_llvm,
)
from tcir.errors import TCError

_INTEGER_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

_FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,
    arith.MinnumfOp: llvm.VectorFMinOp,
}

_CASTS: dict[type[Operation], type[Operation]] = {
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.UIToFPOp: llvm_ext.UIToFPOp,
    arith.FPToSIOp: llvm_ext.FPToSIOp,
    arith.FPToUIOp: llvm_ext.FPToUIOp,
    arith.BitcastOp: llvm.BitcastOp,
}

# Ops with an LLVM intrinsic of the same semantics. `minimumf`/`maximumf`
# propagate NaN (LLVM `minimum`/`maximum`), unlike `minnumf`/`maxnumf`.
_INTRINSICS: dict[type[Operation], str] = {
    arith.MinimumfOp: "llvm.minimum",
    arith.MaximumfOp: "llvm.maximum",
    arith.MinSIOp: "llvm.smin",
    arith.MaxSIOp: "llvm.smax",
    arith.MinUIOp: "llvm.umin",
    arith.MaxUIOp: "llvm.umax",
}


class ConstantLowering(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant` (index constants become i64)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter):
        value = op.value
        result_type = convert_type(op.result.type)
        if isinstance(value, IntegerAttr):
            assert isinstance(result_type, IntegerType)
            value = IntegerAttr(value.value.data, result_type)
        elif not isinstance(value, FloatAttr):
            raise TCError(f"cpu backend: unsupported constant {value}")
        constant = llvm.ConstantOp(value, result_type)
        replace_with_llvm(rewriter, op, [constant], constant.results)


class BinaryLowering(RewritePattern):
    """Integer and float binary ops -> their `llvm` counterparts (fast-math
    flags kept)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        int_op = _INTEGER_BINARY.get(type(op))
        float_op = _FLOAT_BINARY.get(type(op))
        if int_op is None and float_op is None:
            return
        lhs, rhs = llvm_operands(rewriter, op.operands)
        if int_op is not None:
            new_op = int_op(lhs, rhs)
        else:
            assert isinstance(op, arith.FloatingPointLikeBinaryOperation)
            assert float_op is not None
            new_op = float_op(lhs, rhs, llvm.FastMathAttr(op.fastmath.data))
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class CastLowering(RewritePattern):
    """Float/integer extensions, truncations and conversions -> `llvm` casts."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        cast_op = _CASTS.get(type(op))
        if cast_op is None:
            return
        (operand,) = llvm_operands(rewriter, op.operands)
        new_op = cast_op(operand, convert_type(op.results[0].type))
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class IndexCastLowering(RewritePattern):
    """`arith.index_cast` -> `llvm.sext`/`llvm.trunc` to or from i64, or nothing
    for i64."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter):
        (operand,) = llvm_operands(rewriter, [op.input])
        target = convert_type(op.result.type)
        assert isinstance(operand.type, IntegerType)
        assert isinstance(target, IntegerType)
        source_width, target_width = operand.type.width.data, target.width.data
        if source_width == target_width:
            replace_with_llvm(rewriter, op, [], [operand])
            return
        if source_width < target_width:
            new_op = llvm.SExtOp(operand, target)
        else:
            new_op = llvm.TruncOp(operand, target)
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class IntrinsicLowering(RewritePattern):
    """Min/max ops -> calls of the LLVM intrinsics with the same semantics."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _INTRINSICS.get(type(op))
        if base is not None:
            call_intrinsic(rewriter, op, base, llvm_operands(rewriter, op.operands))


class NegfLowering(RewritePattern):
    """`arith.negf` -> `llvm.fneg`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter):
        (operand,) = llvm_operands(rewriter, op.operands)
        new_op = llvm.FNegOp(operand, llvm.FastMathAttr(op.fastmath.data))
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class CmpiLowering(RewritePattern):
    """`arith.cmpi` -> `llvm.icmp` with the same predicate."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter):
        lhs, rhs = llvm_operands(rewriter, op.operands)
        name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        predicate = llvm.ICmpPredicateFlag(name).to_int()
        new_op = llvm.ICmpOp(lhs, rhs, IntegerAttr(predicate, 64))
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class CmpfLowering(RewritePattern):
    """`arith.cmpf` -> `llvm.fcmp`.

    xDSL's llvmlite converter mistranslates the `ord`, `uno`, `false` and `true`
    predicates, so these are expressed with `oeq`/`une` self-comparisons (a value
    is ordered iff it equals itself) and constants.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter):
        lhs, rhs = llvm_operands(rewriter, op.operands)
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        new_ops: list[Operation]
        match name:
            case "false" | "true":
                new_ops = [llvm.ConstantOp(IntegerAttr(int(name == "true"), i1), i1)]
            case "ord" | "uno":
                self_pred = "oeq" if name == "ord" else "une"
                lhs_cmp = llvm.FCmpOp(lhs, lhs, self_pred)
                rhs_cmp = llvm.FCmpOp(rhs, rhs, self_pred)
                combine = llvm.AndOp if name == "ord" else llvm.OrOp
                new_ops = [lhs_cmp, rhs_cmp, combine(lhs_cmp.res, rhs_cmp.res)]
            case _:
                new_ops = [llvm.FCmpOp(lhs, rhs, name)]
        replace_with_llvm(rewriter, op, new_ops, new_ops[-1].results)


class SelectLowering(RewritePattern):
    """`arith.select` -> `llvm.select`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter):
        cond, lhs, rhs = llvm_operands(rewriter, op.operands)
        new_op = llvm.SelectOp(cond, lhs, rhs)
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


@dataclass(frozen=True)
class ConvertArithToLlvmPass(ModulePass):
    """Lower scalar `arith` ops to the `llvm` dialect.

    Integer/float arithmetic, comparisons, `select`, casts and min/max become
    `llvm` ops or intrinsic calls; `index` values become `i64`. Operands and
    results of unconverted types are bridged with
    `builtin.unrealized_conversion_cast`. `floordivsi`/`ceildivsi`/`ceildivui`
    must have been expanded first (`arith-expand`).
    """

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ConstantLowering(),
                    BinaryLowering(),
                    CastLowering(),
                    IndexCastLowering(),
                    IntrinsicLowering(),
                    NegfLowering(),
                    CmpiLowering(),
                    CmpfLowering(),
                    SelectLowering(),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
