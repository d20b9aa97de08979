"""`tc-widen-half-precision`: half-precision statements compute in f32.

A statement computing in a half type (`f16`, `bf16`) rounds every
operation's result to half; a sum (`+=!`, `+=`) or product (`*=!`, `*=`)
over reduction indices rounds every partial result: the error grows with
the length of the reduction (1e-2 at a thousand products of a matmul). As
cuBLAS, PyTorch and torch.compile do, this pass makes every statement whose
right-hand side computes in half compute it in f32, and round once, where
it stores. A reduction into a half tensor accumulates into an f32
temporary of the tensor's shape, rounded once into the tensor afterwards:

    tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
      %a = tc.read %A[%m, %k]
      %b = tc.read %B[%n, %k]
      %p = arith.mulf %a, %b : f16
      tc.yield %p : f16
    }

becomes

    %C_acc = tc.alloc : !tc.tensor<f32, [M, N]>
    tc.comprehension %C_acc[%m, %n] "+=!" (...) {
      %a = tc.read %A[%m, %k]
      %a32 = arith.extf %a : f16 to f32
      ...
      %p = arith.mulf %a32, %b32 : f32
      tc.yield %p : f32
    }
    tc.comprehension %C[%m, %n] "=" (%m in [0, M), %n in [0, N)) {
      %v = tc.read %C_acc[%m, %n]
      %h = arith.truncf %v : f32 to f16
      tc.yield %h : f16
    }

A sum onto the tensor's current values (`+=`, `*=`) first copies them into
the temporary; on the GPU the temporary is a thread's registers (the
accumulators `poly-promote` keeps private, never written to memory). A sum
of half values into an f32 or f64 tensor (a mixed-precision contraction)
rounds nothing. Other statements (`=`, `max=`, `min=`, scatters, the steps
of recurrences, a pointwise `+=`) compute in f32 and round their value once
(`truncf`) before they store it, also where that value is a temporary's
alone (f32, below). The def's own temporaries of a half type (`tc.alloc`:
softmax's row maxima and sums, layernorm's deviations) hold f32, as
inductor keeps a fused kernel's intermediates: only the inputs and outputs
are half, and a value is rounded once, where an output stores it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, FloatAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.tc import AllocOp, ComprehensionOp, DefOp, ReadOp, TensorType, YieldOp
from tcir.ir.float_types import is_half

ACCUMULATING = ("+=", "+=!", "*=", "*=!")
F32 = Float32Type()
_CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp)


def _accumulates(comp: ComprehensionOp) -> bool:
    return bool(comp.reduction_indices) and not comp.is_scatter and comp.loop is None and comp.kind.data in ACCUMULATING


def _computes_in_half(block: Block) -> bool:
    return any(is_half(r.type) for op in block.walk() for r in op.results if not isinstance(op, ReadOp))


def _stores_half_into_wider(comp: ComprehensionOp) -> bool:
    """Whether `comp` yields a half value (a read) into a wider tensor."""
    last = comp.body.block.last_op
    return isinstance(last, YieldOp) and is_half(last.operands[0].type) and not is_half(comp.lhs_type.element_type)


def _stores_wider_into_half(comp: ComprehensionOp) -> bool:
    """Whether `comp` yields a wider value (a read of a temporary held in
    f32) into a half tensor."""
    last = comp.body.block.last_op
    value = last.operands[0].type if isinstance(last, YieldOp) else None
    return is_half(comp.lhs_type.element_type) and isinstance(value, Float32Type)


def _to_f32(rewriter: Rewriter, op: Operation) -> None:
    """Make `op`'s half results f32: reads and casts are followed by an
    `extf`; constants are made anew; other float ops get f32 results."""
    if isinstance(op, arith.ExtFOp) and op.input.type == op.result.type:  # its input is f32 now
        op.result.replace_all_uses_with(op.input)
        rewriter.erase_op(op)
        return
    if not any(is_half(r.type) for r in op.results):
        return
    if isinstance(op, (ReadOp, *_CASTS)):
        (result,) = op.results
        wide = arith.ExtFOp(result, F32)
        rewriter.insert_op(wide, InsertPoint.after(op))
        result.replace_uses_with_if(wide.result, lambda use: use.operation is not wide)
        return
    if isinstance(op, arith.ConstantOp):
        assert isinstance(op.value, FloatAttr)
        rewriter.replace_op(op, arith.ConstantOp(FloatAttr(op.value.value.data, F32)))
        return
    for result in list(op.results):
        if is_half(result.type):
            Rewriter.replace_value_with_new_type(result, F32)


def _block_to_f32(rewriter: Rewriter, block: Block) -> None:
    """Every op of `block` (and of the branches of its guarded ternaries) on f32."""
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                _block_to_f32(rewriter, inner)
        _to_f32(rewriter, op)


def _copy(
    source: SSAValue, target: SSAValue, comp: ComprehensionOp, convert: type[arith.ExtFOp | arith.TruncFOp]
) -> ComprehensionOp:
    """`target[i] = convert(source[i])` over `comp`'s left-hand side indices."""
    rank = comp.lhs_type.rank
    block = Block(arg_types=[a.type for a in comp.lhs_indices])
    for arg, old in zip(block.args, comp.lhs_indices):
        arg.name_hint = old.name_hint
    read = ReadOp(source, [AffineExpr.dimension(k) for k in range(rank)], block.args)
    target_type = target.type
    assert isinstance(target_type, TensorType)
    cast = convert(read.result, target_type.scalar_type)
    block.add_ops([read, cast, YieldOp(cast.result)])
    return ComprehensionOp(target, "=", comp.ranges[:rank], comp.symbol_names, Region(block))


def _round_yield(rewriter: Rewriter, comp: ComprehensionOp) -> None:
    """`comp`'s yielded (f32) value rounded to its half tensor's type."""
    last = comp.body.block.last_op
    assert isinstance(last, YieldOp)
    rounded = arith.TruncFOp(last.value, comp.lhs_type.scalar_type)
    rewriter.insert_op(rounded, InsertPoint.before(last))
    last.operands[0] = rounded.result


def _temporary_to_f32(alloc: AllocOp) -> None:
    """A half temporary of the def held in f32, its reads f32 values."""
    half = alloc.result.type
    assert isinstance(half, TensorType)
    Rewriter.replace_value_with_new_type(alloc.result, TensorType(F32, half.dims, half.symbol_names))
    for use in list(alloc.result.uses):
        if isinstance(use.operation, ReadOp):
            Rewriter.replace_value_with_new_type(use.operation.result, F32)


def widen(rewriter: Rewriter, comp: ComprehensionOp) -> None:
    """Accumulate `comp` in an f32 temporary (see the module)."""
    _block_to_f32(rewriter, comp.body.block)
    half = comp.lhs_type
    alloc = AllocOp(TensorType(F32, half.dims, half.symbol_names), f"{comp.lhs.name_hint or 'acc'}_acc")
    definition = comp.parent_op()
    assert isinstance(definition, DefOp)
    rewriter.insert_op(alloc, InsertPoint.at_start(definition.body.block))
    if not comp.kind.data.endswith("!"):
        rewriter.insert_op(_copy(comp.lhs, alloc.result, comp, arith.ExtFOp), InsertPoint.before(comp))
    rewriter.insert_op(_copy(alloc.result, comp.lhs, comp, arith.TruncFOp), InsertPoint.after(comp))
    comp.operands[0] = alloc.result


@dataclass(frozen=True)
class TcWidenHalfPrecisionPass(ModulePass):
    """Half-precision statements computed (and sums accumulated) in f32, rounded once."""

    name = "tc-widen-half-precision"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewriter = Rewriter()
        for alloc in [o for o in op.walk() if isinstance(o, AllocOp) and is_half(o.result.type.element_type)]:
            _temporary_to_f32(alloc)
        for comp in [o for o in op.walk() if isinstance(o, ComprehensionOp)]:
            half = is_half(comp.lhs_type.element_type)
            if half and _accumulates(comp):
                widen(rewriter, comp)
            elif _computes_in_half(comp.body.block) or _stores_half_into_wider(comp) or _stores_wider_into_half(comp):
                _block_to_f32(rewriter, comp.body.block)
                if half:  # rounded once, where it is stored
                    _round_yield(rewriter, comp)
