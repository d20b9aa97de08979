"""The `convert-math-to-libm` pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, ModuleOp, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from tcir.backends.cpu.llvm_conversion import module_and_toplevel_op
from tcir.errors import TCError

# math op -> libm function name for f64 (the f32 one has an `f` suffix).
_LIBM_NAMES: dict[type[Operation], str] = {
    math.AcosOp: "acos",
    math.AcoshOp: "acosh",
    math.AsinOp: "asin",
    math.AsinhOp: "asinh",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
    math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt",
    math.CoshOp: "cosh",
    math.ErfOp: "erf",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
    math.SinhOp: "sinh",
    math.TanOp: "tan",
    math.TanhOp: "tanh",
}


def _libm_symbol(base: str, typ: Attribute) -> str:
    if isinstance(typ, Float64Type):
        return base
    if isinstance(typ, Float32Type):
        return base + "f"
    raise TCError(f"cpu backend: no libm function {base} for type {typ}")


def _declare(
    rewriter: PatternRewriter, user: Operation, name: str, arity: int, typ: Attribute
) -> None:
    """Declare libm function `name` before `user`'s top-level op unless the
    module has it."""
    module, toplevel = module_and_toplevel_op(user)
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return
    declaration = func.FuncOp.external(name, [typ] * arity, [typ])
    rewriter.insert(declaration, InsertPoint.before(toplevel))


class LibmCallLowering(RewritePattern):
    """A math op without LLVM intrinsic -> `func.call` of its libm function
    (`tanhf` for f32, `tanh` for f64; f16 is computed in f32)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _LIBM_NAMES.get(type(op))
        if base is None:
            return
        result_type = op.results[0].type
        operands: list[SSAValue] = list(op.operands)
        new_ops: list[Operation] = []
        compute_type = f32 if isinstance(result_type, Float16Type) else result_type
        if compute_type != result_type:
            extended = [arith.ExtFOp(v, compute_type) for v in operands]
            new_ops += extended
            operands = [e.result for e in extended]
        name = _libm_symbol(base, compute_type)
        _declare(rewriter, op, name, len(operands), compute_type)
        call = func.CallOp(name, operands, [compute_type])
        new_ops.append(call)
        result = call.res[0]
        if compute_type != result_type:
            truncated = arith.TruncFOp(result, result_type)
            new_ops.append(truncated)
            result = truncated.result
        rewriter.replace(op, new_ops, [result])


@dataclass(frozen=True)
class ConvertMathToLibmPass(ModulePass):
    """Lower `math` ops that have no LLVM intrinsic to calls of libm functions.

    `tanh`, `erf`, `atan2`, `atan`, `acos`, `asin`, `sinh`, `cosh`, `tan`,
    `cbrt`, `expm1`, `log1p`, `acosh`, `asinh`, `atanh` become `func.call`s of
    the libm function (`f`-suffixed for f32; f16 goes through f32), declared as
    private `func.func`s in the module.
    """

    name = "convert-math-to-libm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LibmCallLowering(), apply_recursively=False).rewrite_module(
            op
        )
