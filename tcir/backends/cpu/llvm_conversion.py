"""Shared helpers of the `*-to-llvm` passes: type conversion and cast bridging.

Each conversion pass rewrites its own ops to the `llvm` dialect and bridges to
values still of the original types with `builtin.unrealized_conversion_cast`,
as MLIR's partial conversions do; `reconcile-unrealized-casts` removes the casts
once every pass has run. This keeps the passes independent of each other's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tcir.errors import TCError


def convert_type(typ: Attribute) -> Attribute:
    """The LLVM-compatible type of a loop-level type.

    `index` is 64-bit; a memref is a bare `!llvm.ptr` (no descriptor) in its
    memory space; integers and floats are unchanged.
    """
    if isinstance(typ, IndexType):
        return i64
    if isinstance(typ, MemRefType):
        space = typ.memory_space
        if isinstance(space, IntegerAttr) and space.value.data != 0:
            return llvm.LLVMPointerType(IntAttr(space.value.data))
        return llvm.LLVMPointerType()
    return typ


def element_size_in_bytes(typ: Attribute) -> int:
    """Size of a memref element in memory (LLVM's default data layout)."""
    if isinstance(typ, IndexType):
        return 8
    if isinstance(typ, IntegerType):
        return max(1, (typ.width.data + 7) // 8)
    if isinstance(typ, AnyFloat):
        return typ.bitwidth // 8
    raise TCError(f"cpu backend: unsupported memref element type {typ}")


def llvm_operands(
    rewriter: PatternRewriter, values: Sequence[SSAValue]
) -> list[SSAValue]:
    """`values` as LLVM-typed values, casting those of unconverted types before
    the matched op."""
    converted: list[SSAValue] = []
    for value in values:
        target = convert_type(value.type)
        if target == value.type:
            converted.append(value)
            continue
        cast, result = UnrealizedConversionCastOp.cast_one(value, target)
        rewriter.insert(cast)
        converted.append(result)
    return converted


def replace_with_llvm(
    rewriter: PatternRewriter,
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue],
) -> None:
    """Replace `op` by `new_ops`, casting LLVM-typed results back to the types
    of `op`'s results where they differ."""
    results: list[SSAValue] = []
    casts: list[Operation] = []
    for old, new in zip(op.results, new_results, strict=True):
        if old.type == new.type:
            results.append(new)
            continue
        cast, result = UnrealizedConversionCastOp.cast_one(new, old.type)
        if old.name_hint is not None:
            result.name_hint = old.name_hint
        casts.append(cast)
        results.append(result)
    rewriter.replace(op, [*new_ops, *casts], results)


def convert_block_arguments(rewriter: PatternRewriter, block: Block) -> None:
    """Give `block`'s arguments their LLVM types; old uses go through casts
    inserted at the start of the block."""
    casts: list[Operation] = []
    for arg in tuple(block.args):
        target = convert_type(arg.type)
        if target == arg.type:
            continue
        old_type = arg.type
        new_arg = rewriter.insert_block_argument(block, arg.index, target)
        new_arg.name_hint = arg.name_hint
        cast, result = UnrealizedConversionCastOp.cast_one(new_arg, old_type)
        casts.append(cast)
        rewriter.replace_all_uses_with(arg, result)
        rewriter.erase_block_argument(arg)
    if casts:
        rewriter.insert(casts, InsertPoint.at_start(block))


def module_and_toplevel_op(op: Operation) -> tuple[ModuleOp, Operation]:
    """The module containing `op`, and `op`'s ancestor directly in it."""
    ancestor = op
    while not isinstance(parent := ancestor.parent_op(), ModuleOp):
        assert parent is not None, "op is not inside a module"
        ancestor = parent
    return parent, ancestor


def declare_llvm_function(
    rewriter: PatternRewriter,
    user: Operation,
    name: str,
    function_type: llvm.LLVMFunctionType,
) -> None:
    """Declare the external function `name` (for `user`) before `user`'s
    top-level op unless the module has a function of that name."""
    module, toplevel = module_and_toplevel_op(user)
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data == name:
            return
    declaration = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
    rewriter.insert(declaration, InsertPoint.before(toplevel))


def intrinsic_name(base: str, typ: Attribute) -> str:
    """The overloaded LLVM intrinsic `base` mangled for scalar `typ`,
    e.g. `llvm.round.f32`, `llvm.smin.i64`."""
    converted = convert_type(typ)
    if isinstance(converted, IntegerType):
        return f"{base}.i{converted.width.data}"
    if isinstance(converted, AnyFloat):
        return f"{base}.f{converted.bitwidth}"
    raise TCError(f"cpu backend: no LLVM intrinsic {base} for type {typ}")


def call_intrinsic(
    rewriter: PatternRewriter,
    op: Operation,
    base: str,
    operands: Sequence[SSAValue],
) -> None:
    """Replace single-result `op` by a call of intrinsic `base` overloaded on
    its result type, with `operands` (already LLVM-typed)."""
    result_type = convert_type(op.results[0].type)
    call = llvm.CallIntrinsicOp(
        intrinsic_name(base, result_type), operands, [result_type]
    )
    replace_with_llvm(rewriter, op, [call], call.results)
