"""The pass pipeline from loop-level IR to the `llvm` dialect."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

CPU_LOWERING_PIPELINE = ",".join(
    [
        "convert-scf-to-cf",
        "arith-expand",
        "convert-cf-to-llvm",
        "convert-math-to-libm",
        "convert-math-to-llvm",
        "convert-arith-to-llvm",
        "finalize-memref-to-llvm",
        "convert-func-to-llvm",
        "reconcile-unrealized-casts",
    ]
)
"""`func`/`scf`/`cf`/`arith`/`math`/`memref` -> `llvm` dialect, in MLIR's pass
names. `convert-math-to-libm` runs before `convert-math-to-llvm` (so ops without
an intrinsic become libm calls) and before the `arith`/`func` conversions (it
emits `func.call` and, for f16, `arith` casts)."""


def _available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from xdsl.transforms import get_all_passes as xdsl_passes

    from tcir.transforms import get_all_passes as tcir_passes

    wanted = set(CPU_LOWERING_PIPELINE.split(","))
    factories = {**xdsl_passes(), **tcir_passes()}
    return {name: factories[name] for name in wanted}


def lower_to_llvm_dialect(module: ModuleOp, ctx: Context | None = None) -> None:
    """Run `CPU_LOWERING_PIPELINE` on `module` in place."""
    pipeline = PassPipeline.parse_spec(_available_passes(), CPU_LOWERING_PIPELINE)
    pipeline.apply(ctx or Context(allow_unregistered=True), module)
