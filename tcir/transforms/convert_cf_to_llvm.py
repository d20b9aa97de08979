"""The `convert-cf-to-llvm` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tcir.backends.cpu.llvm_conversion import convert_block_arguments, llvm_operands


class BranchLowering(RewritePattern):
    """`cf.br` -> `llvm.br`; the successor's arguments get LLVM types."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter):
        convert_block_arguments(rewriter, op.successor)
        arguments = llvm_operands(rewriter, op.arguments)
        rewriter.replace(op, llvm.BrOp(op.successor, *arguments))


class CondBranchLowering(RewritePattern):
    """`cf.cond_br` -> `llvm.cond_br`; the successors' arguments get LLVM types."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter
    ):
        convert_block_arguments(rewriter, op.then_block)
        convert_block_arguments(rewriter, op.else_block)
        then_arguments = llvm_operands(rewriter, op.then_arguments)
        else_arguments = llvm_operands(rewriter, op.else_arguments)
        rewriter.replace(
            op,
            llvm.CondBrOp(
                op.cond, op.then_block, then_arguments, op.else_block, else_arguments
            ),
        )


@dataclass(frozen=True)
class ConvertCfToLlvmPass(ModulePass):
    """Lower `cf.br`/`cf.cond_br` to `llvm.br`/`llvm.cond_br`.

    Block arguments of branch targets take their LLVM types (`index` -> `i64`,
    memref -> `!llvm.ptr`); their uses and the branch operands are bridged with
    `builtin.unrealized_conversion_cast`.
    """

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([BranchLowering(), CondBranchLowering()]),
            apply_recursively=False,
        ).rewrite_module(op)
