"""The `convert-func-to-llvm` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tcir.backends.cpu.llvm_conversion import (
    convert_block_arguments,
    convert_type,
    llvm_operands,
    replace_with_llvm,
)
from tcir.errors import TCError


def _llvm_function_type(function_type: FunctionType) -> llvm.LLVMFunctionType:
    outputs = function_type.outputs.data
    if len(outputs) > 1:
        raise TCError("cpu backend: functions return at most one value")
    output = convert_type(outputs[0]) if outputs else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType([convert_type(t) for t in function_type.inputs], output)


class FuncLowering(RewritePattern):
    """`func.func` -> `llvm.func`; memref arguments become `!llvm.ptr` marked
    `llvm.noalias` (bare-pointer convention), `index` arguments become `i64`.
    Declarations (`private`, no body) become external `llvm.func` declarations."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter):
        arg_attrs = ArrayAttr(
            DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, MemRefType) else {})
            for t in op.function_type.inputs
        )
        is_definition = not op.is_declaration
        linkage = "internal" if is_definition and op.sym_visibility is not None else "external"
        new_func = llvm.FuncOp(
            op.sym_name,
            _llvm_function_type(op.function_type),
            linkage=llvm.LinkageAttr(linkage),
            body=rewriter.move_region_contents_to_new_regions(op.body),
            other_props={"arg_attrs": arg_attrs},
        )
        if is_definition:
            convert_block_arguments(rewriter, new_func.body.blocks[0])
        rewriter.replace(op, new_func)


class ReturnLowering(RewritePattern):
    """`func.return` -> `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter):
        values = llvm_operands(rewriter, op.arguments)
        rewriter.replace(op, llvm.ReturnOp(values[0] if values else None))


class CallLowering(RewritePattern):
    """`func.call` -> `llvm.call`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter):
        if len(op.results) > 1:
            raise TCError("cpu backend: functions return at most one value")
        arguments = llvm_operands(rewriter, op.arguments)
        return_type = convert_type(op.results[0].type) if op.results else None
        call = llvm.CallOp(op.callee, *arguments, return_type=return_type)
        replace_with_llvm(rewriter, op, [call], call.results)


@dataclass(frozen=True)
class ConvertFuncToLlvmPass(ModulePass):
    """Lower `func.func`/`func.return`/`func.call` to the `llvm` dialect.

    Uses the bare-pointer calling convention: a memref argument is one
    `!llvm.ptr` with the `llvm.noalias` attribute (no descriptor), so LLVM may
    vectorize loops over it; `index` is `i64`. Uses of converted arguments are
    bridged with `builtin.unrealized_conversion_cast`.
    """

    name = "convert-func-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FuncLowering(), ReturnLowering(), CallLowering()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
