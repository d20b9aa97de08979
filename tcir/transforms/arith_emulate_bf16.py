"""`arith-emulate-bf16`: bfloat16 stored as 16-bit integers, computed in f32.

The CPU backend's LLVM has no native bfloat16 arithmetic (its conversions
call runtime functions the JIT does not have). As MLIR's
`arith-emulate-unsupported-floats` does, this pass computes every bf16
value in f32, and stores bf16 tensors as the upper halves of f32 bit
patterns (`i16`), rounded to nearest even on store:

    %x = memref.load %A[%i] : memref<8xbf16>
    %y = arith.extf %x : bf16 to f32

becomes

    %b = memref.load %A[%i] : memref<8xi16>
    %w = arith.extui %b : i16 to i32
    %s = arith.shli %w, %c16 : i32
    %y = arith.bitcast %s : i32 to f32

A value stored into a bf16 tensor is rounded once there; an explicit
`truncf` to bf16 (a cast in the TC source) rounds where it is. The CPU
backend is the reference: this is the rounding a GPU kernel does on store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

F32, I16, I32 = Float32Type(), IntegerType(16), IntegerType(32)


def _bf16_memref(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and isinstance(t.element_type, BFloat16Type)


def _storage(t: Attribute) -> Attribute:
    """`t` with bf16 elements stored as i16."""
    if _bf16_memref(t):
        assert isinstance(t, MemRefType)
        return MemRefType(I16, t.get_shape(), t.layout, t.memory_space)
    return t


@dataclass
class _Emulation:
    """Rewrites one function; `stored` are its memrefs that hold bf16 as i16."""

    stored: set[SSAValue] = field(default_factory=set[SSAValue])

    @staticmethod
    def _insert(at: Operation, *ops: Operation) -> SSAValue:
        for op in ops:
            Rewriter.insert_op(op, InsertPoint.before(at))
        return ops[-1].results[0]

    @staticmethod
    def _i32(at: Operation, value: int) -> SSAValue:
        return _Emulation._insert(at, arith.ConstantOp(IntegerAttr(value, I32)))

    def widen(self, at: Operation, bits: SSAValue) -> SSAValue:
        """The f32 of the bf16 pattern `bits` (i16): the same value."""
        wide = arith.ExtUIOp(bits, I32)
        shifted = arith.ShLIOp(wide.result, self._i32(at, 16))
        return self._insert(at, wide, shifted, arith.BitcastOp(shifted.result, F32))

    def round(self, at: Operation, value: SSAValue) -> SSAValue:
        """The bf16 pattern (i16) nearest to f32 `value`, ties to even; a NaN
        becomes the quiet NaN."""
        sixteen, one, bias, quiet_nan = (self._i32(at, v) for v in (16, 1, 0x7FFF, 0x7FC0))
        bits = arith.BitcastOp(value, I32)
        high = arith.ShRUIOp(bits.result, sixteen)
        odd = arith.AndIOp(high.result, one)
        half_up = arith.AddiOp(odd.result, bias)
        biased = arith.AddiOp(bits.result, half_up.result)
        rounded = arith.ShRUIOp(biased.result, sixteen)
        nan = arith.CmpfOp(value, value, "uno")
        chosen = arith.SelectOp(nan.result, quiet_nan, rounded.result)
        ops = (bits, high, odd, half_up, biased, rounded, nan, chosen, arith.TruncIOp(chosen.result, I16))
        return self._insert(at, *ops)

    def block(self, block: Block) -> None:
        for arg in list(block.args):
            if _bf16_memref(arg.type):
                self.stored.add(Rewriter.replace_value_with_new_type(arg, _storage(arg.type)))
            elif isinstance(arg.type, BFloat16Type):
                Rewriter.replace_value_with_new_type(arg, F32)
        for op in list(block.ops):
            for region in op.regions:
                for inner in region.blocks:
                    self.block(inner)
            self.op(op)

    def op(self, op: Operation) -> None:
        match op:
            case memref.LoadOp() if op.memref in self.stored:
                load = memref.LoadOp.get(op.memref, op.indices)
                Rewriter.insert_op(load, InsertPoint.before(op))
                op.res.replace_all_uses_with(self.widen(op, load.res))
                Rewriter.erase_op(op)
            case memref.StoreOp() if op.memref in self.stored:
                pattern = self.round(op, op.value)
                Rewriter.replace_op(op, memref.StoreOp.get(pattern, op.memref, op.indices))
            case memref.AllocOp() | memref.AllocaOp() if _bf16_memref(op.memref.type):
                self.stored.add(Rewriter.replace_value_with_new_type(op.memref, _storage(op.memref.type)))
            case arith.ExtFOp() if isinstance(op.input.type, Float32Type):  # was bf16
                if isinstance(op.result.type, Float32Type):
                    op.result.replace_all_uses_with(op.input)
                    Rewriter.erase_op(op)
                else:
                    Rewriter.replace_op(op, arith.ExtFOp(op.input, op.result.type))
            case arith.TruncFOp() if isinstance(op.result.type, BFloat16Type):
                value = op.input
                if not isinstance(value.type, Float32Type):
                    value = self._insert(op, arith.TruncFOp(value, F32))
                op.result.replace_all_uses_with(self.widen(op, self.round(op, value)))
                Rewriter.erase_op(op)
            case arith.ConstantOp() if isinstance(op.result.type, BFloat16Type):
                assert isinstance(op.value, FloatAttr)
                Rewriter.replace_op(op, arith.ConstantOp(FloatAttr(op.value.value.data, F32)))
            case _:
                for result in list(op.results):
                    if isinstance(result.type, BFloat16Type):
                        Rewriter.replace_value_with_new_type(result, F32)


@dataclass(frozen=True)
class ArithEmulateBf16Pass(ModulePass):
    """bf16 tensors stored as i16, their values computed in f32, rounded on store."""

    name = "arith-emulate-bf16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            inputs = [_storage(t) for t in function.function_type.inputs.data]
            outputs = list(function.function_type.outputs.data)
            function.function_type = FunctionType.from_lists(inputs, outputs)
            if function.body.blocks:
                _Emulation().block(function.body.block)
