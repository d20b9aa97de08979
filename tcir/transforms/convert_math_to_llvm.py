"""The `convert-math-to-llvm` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, i1
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tcir.backends.cpu.llvm_conversion import (
    call_intrinsic,
    convert_type,
    llvm_operands,
    replace_with_llvm,
)

# Ops that xDSL's llvm dialect has as `llvm.intr.*` ops.
_UNARY_OPS: dict[type[Operation], type[Operation]] = {
    math.AbsFOp: llvm.FAbsOp,
    math.CeilOp: llvm.FCeilOp,
    math.CosOp: llvm.FCosOp,
    math.ExpOp: llvm.FExpOp,
    math.Exp2Op: llvm.FExp2Op,
    math.FloorOp: llvm.FFloorOp,
    math.LogOp: llvm.FLogOp,
    math.Log2Op: llvm.FLog2Op,
    math.SinOp: llvm.FSinOp,
    math.SqrtOp: llvm.FSqrtOp,
}

_BINARY_OPS: dict[type[Operation], type[Operation]] = {
    math.CopySignOp: llvm.FCopySignOp,
    math.PowFOp: llvm.FPowOp,
}

# Ops with an LLVM intrinsic that xDSL's llvm dialect has no op for; they
# become `llvm.call_intrinsic`, overloaded on the result type.
_INTRINSICS: dict[type[Operation], str] = {
    math.Log10Op: "llvm.log10",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    math.CtPopOp: "llvm.ctpop",
}

# Integer intrinsics with a trailing `i1` flag ("is zero/INT_MIN poison"),
# false to keep `math`'s defined results for those inputs.
_FLAGGED_INTRINSICS: dict[type[Operation], str] = {
    math.AbsIOp: "llvm.abs",
    math.CountLeadingZerosOp: "llvm.ctlz",
    math.CountTrailingZerosOp: "llvm.cttz",
}


class IntrinsicOpLowering(RewritePattern):
    """Math ops with an `llvm.intr.*` op -> that op."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (unary := _UNARY_OPS.get(type(op))) is not None:
            (operand,) = llvm_operands(rewriter, op.operands)
            if unary is llvm.FAbsOp:
                new_op = llvm.FAbsOp(operand, operand.type)
            else:
                new_op = unary(operand)
        elif (binary := _BINARY_OPS.get(type(op))) is not None:
            new_op = binary(*llvm_operands(rewriter, op.operands))
        else:
            return
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class IntrinsicCallLowering(RewritePattern):
    """Other math ops with an LLVM intrinsic -> `llvm.call_intrinsic`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (base := _INTRINSICS.get(type(op))) is not None:
            call_intrinsic(rewriter, op, base, llvm_operands(rewriter, op.operands))
        elif (base := _FLAGGED_INTRINSICS.get(type(op))) is not None:
            flag = llvm.ConstantOp(IntegerAttr(0, i1), i1)
            rewriter.insert(flag)
            operands = [*llvm_operands(rewriter, op.operands), flag.result]
            call_intrinsic(rewriter, op, base, operands)


class FmaLowering(RewritePattern):
    """`math.fma` -> `llvm.intr.fma`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp, rewriter: PatternRewriter):
        a, b, c = llvm_operands(rewriter, op.operands)
        new_op = llvm.FMAOp(a, b, c)
        replace_with_llvm(rewriter, op, [new_op], new_op.results)


class FPowILowering(RewritePattern):
    """`math.fpowi(x, n)` -> `llvm.intr.pow(x, sitofp(n))`.

    Not `llvm.powi`: LLVM expands it to a call of compiler-rt's `__powidf2`,
    which the JIT cannot resolve.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FPowIOp, rewriter: PatternRewriter):
        base, exponent = llvm_operands(rewriter, op.operands)
        exponent_float = llvm.SIToFPOp(exponent, base.type)
        power = llvm.FPowOp(base, exponent_float.result)
        replace_with_llvm(rewriter, op, [exponent_float, power], power.results)


class RsqrtLowering(RewritePattern):
    """`math.rsqrt(x)` -> `1 / llvm.intr.sqrt(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter):
        (operand,) = llvm_operands(rewriter, op.operands)
        result_type = convert_type(op.result.type)
        one = llvm.ConstantOp(FloatAttr(1.0, result_type), result_type)  # pyright: ignore[reportArgumentType]
        sqrt = llvm.FSqrtOp(operand)
        div = llvm.FDivOp(one.result, sqrt.res)
        replace_with_llvm(rewriter, op, [one, sqrt, div], div.results)


@dataclass(frozen=True)
class ConvertMathToLlvmPass(ModulePass):
    """Lower `math` ops that have an LLVM intrinsic to the `llvm` dialect.

    `absf`, `ceil`, `copysign`, `cos`, `exp`, `exp2`, `floor`, `fma`, `log`,
    `log2`, `powf`, `sin`, `sqrt` become `llvm.intr.*` ops; `log10`, `round`,
    `roundeven`, `trunc`, `absi`, `ctlz`, `cttz`, `ctpop` become
    `llvm.call_intrinsic`; `rsqrt` becomes a division by `sqrt`, `fpowi` a `pow`. Other math ops
    are left for `convert-math-to-libm`.
    """

    name = "convert-math-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    IntrinsicOpLowering(),
                    IntrinsicCallLowering(),
                    FmaLowering(),
                    FPowILowering(),
                    RsqrtLowering(),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
