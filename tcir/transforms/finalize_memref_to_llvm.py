"""The `finalize-memref-to-llvm` pass."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tcir.backends.cpu.llvm_conversion import (
    convert_type,
    declare_llvm_function,
    element_size_in_bytes,
    llvm_operands,
    replace_with_llvm,
)
from tcir.errors import TCError


def _static_shape(typ: MemRefType) -> tuple[int, ...]:
    shape = typ.get_shape()
    if DYNAMIC_INDEX in shape or not isinstance(typ.layout, NoneAttr):
        raise TCError(
            f"cpu backend: only statically shaped row-major memrefs are supported, got {typ}"
        )
    return shape


def _i64_constant(value: int) -> llvm.ConstantOp:
    return llvm.ConstantOp(IntegerAttr(value, i64), i64)


def _element_pointer(
    rewriter: PatternRewriter,
    base: SSAValue,
    typ: MemRefType,
    indices: list[SSAValue],
) -> SSAValue:
    """Insert the address of `base[indices]`: a `getelementptr inbounds` by the
    row-major linear index `((i0 * s1 + i1) * s2 + i2) ...`, or `base` itself
    for rank 0."""
    shape = _static_shape(typ)
    if not indices:
        return base
    new_ops: list[Operation] = []
    linear = indices[0]
    for size, index in zip(shape[1:], indices[1:]):
        size_op = _i64_constant(size)
        scaled = llvm.MulOp(linear, size_op.result)
        offset = llvm.AddOp(scaled.res, index)
        new_ops += [size_op, scaled, offset]
        linear = offset.res
    gep = llvm.GEPOp(
        base,
        [llvm.GEP_USE_SSA_VAL],
        convert_type(typ.element_type),
        ssa_indices=[linear],
        inbounds=True,
    )
    rewriter.insert([*new_ops, gep])
    return gep.result


class LoadLowering(RewritePattern):
    """`memref.load` -> `getelementptr inbounds` + `llvm.load`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter):
        base, *indices = llvm_operands(rewriter, [op.memref, *op.indices])
        assert isinstance(op.memref.type, MemRefType)
        pointer = _element_pointer(rewriter, base, op.memref.type, indices)
        load = llvm.LoadOp(pointer, convert_type(op.res.type))
        replace_with_llvm(rewriter, op, [load], load.results)


class StoreLowering(RewritePattern):
    """`memref.store` -> `getelementptr inbounds` + `llvm.store`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter):
        value, base, *indices = llvm_operands(
            rewriter, [op.value, op.memref, *op.indices]
        )
        assert isinstance(op.memref.type, MemRefType)
        pointer = _element_pointer(rewriter, base, op.memref.type, indices)
        rewriter.replace(op, llvm.StoreOp(value, pointer))


class AllocLowering(RewritePattern):
    """`memref.alloc` -> `llvm.call @malloc(bytes)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter):
        typ = op.memref.type
        assert isinstance(typ, MemRefType)
        size = prod(_static_shape(typ)) * element_size_in_bytes(typ.element_type)
        pointer = llvm.LLVMPointerType()
        declare_llvm_function(
            rewriter, op, "malloc", llvm.LLVMFunctionType([i64], pointer)
        )
        size_op = _i64_constant(size)
        call = llvm.CallOp("malloc", size_op.result, return_type=pointer)
        replace_with_llvm(rewriter, op, [size_op, call], call.results)


class DeallocLowering(RewritePattern):
    """`memref.dealloc` -> `llvm.call @free(ptr)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter):
        (pointer,) = llvm_operands(rewriter, [op.memref])
        declare_llvm_function(
            rewriter,
            op,
            "free",
            llvm.LLVMFunctionType([llvm.LLVMPointerType()], llvm.LLVMVoidType()),
        )
        rewriter.replace(op, llvm.CallOp("free", pointer))


class AllocaLowering(RewritePattern):
    """`memref.alloca` -> `llvm.alloca` of the element count."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter):
        typ = op.memref.type
        assert isinstance(typ, MemRefType)
        count = _i64_constant(prod(_static_shape(typ)))
        alignment = op.alignment.value.data if op.alignment is not None else 16
        alloca = llvm.AllocaOp(count.result, convert_type(typ.element_type), alignment)
        replace_with_llvm(rewriter, op, [count, alloca], alloca.results)


@dataclass(frozen=True)
class FinalizeMemrefToLlvmPass(ModulePass):
    """Lower `memref` ops on statically shaped memrefs to the `llvm` dialect.

    A memref is a bare `!llvm.ptr` to its first element. `load`/`store` become
    `llvm.getelementptr inbounds` at the row-major linear index followed by
    `llvm.load`/`llvm.store`; `alloc`/`dealloc` call `malloc`/`free`; `alloca`
    becomes `llvm.alloca`.
    """

    name = "finalize-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LoadLowering(),
                    StoreLowering(),
                    AllocLowering(),
                    DeallocLowering(),
                    AllocaLowering(),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
