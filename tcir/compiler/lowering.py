"""A def's IR, the pipeline that options and a backend stand for, and staged reuse.

    ir = DefIR.of(checked_def)                      # the `tc` module, emitted once
    module = ir.lowered(binding, options, "cuda")   # the whole pipeline
    staged = StagedLowering(ir, binding)            # for many candidates of one problem
    module = staged.lowered(options, "cuda")        # only what depends on `options`

The pipeline is `tc-specialize` (the JIT specializes every size), then the
options' polyhedral passes (`MappingOptions.schedule_passes`) and the
backend's (`backend_passes`); without options, the CPU runs the canonical
reference lowering (`convert-tc-to-loops`) and the GPU backends the default
mapping (`default_options`; `MappingOptions(allow_tf32=True)` alone, the
default mapping with TF32: `resolved_options`), which may lower a def in
parts, each with a default of its own (`tcir.compiler.partition`), or as
its collapsed form over views of the same buffers (a contraction whose
indices go in runs: `tcir.frontend.collapse`), and sums a convolution's
channels before its taps (`tcir.frontend.reduction_order`). A
`StagedLowering` keeps the specialized scop of its problem, and one
schedule per setting of the scheduler's options
(`MappingOptions.scheduler_key`), so a candidate only runs tiling,
mapping, promotion and code generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from tcir.compiler.defaults import default_partition, resolved_options
from tcir.compiler.options import GPU_BACKENDS, TF32_DEFAULT, MappingOptions, specialize_pass
from tcir.compiler.partition import lowered_in_parts, recomputed, split_def
from tcir.dialects.tc import DefOp
from tcir.frontend.ast import CheckedDef
from tcir.frontend.collapse import collapsed
from tcir.frontend.dtypes import HALF_TYPES
from tcir.frontend.padding import padded_reads
from tcir.frontend.reduction_order import taps_last
from tcir.frontend.temporary_layout import contraction_layouts
from tcir.frontend.subscripts import walk
from tcir.errors import TCError
from tcir.passmanager import PassManager, print_ir
from tcir.runtime.signature import Binding
from tcir.transforms.tc_specialize import def_sizes

CPU_LOWERING_PIPELINE = ",".join(
    [
        "arith-emulate-bf16",
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
names: what the CPU backend takes. `convert-math-to-libm` runs before
`convert-math-to-llvm` (so ops without an intrinsic become libm calls) and
before the `arith`/`func` conversions (it emits `func.call` and, for f16,
`arith` casts)."""


def lower_to_llvm_dialect(module: ModuleOp) -> ModuleOp:
    """A copy of loop-level `module` in the `llvm` dialect (`CPU_LOWERING_PIPELINE`);
    an op the pipeline cannot lower is a `TCError`."""
    lowered = module.clone()
    PassManager.parse(CPU_LOWERING_PIPELINE, verify_each=False).run(lowered)
    for op in lowered.walk():
        if op is not lowered and op.dialect_name() != "llvm":
            raise TCError(f"cpu backend: cannot lower '{op.name}' to LLVM")
    return lowered


def final_code(module: ModuleOp, backend: str) -> str:
    """What `backend` makes of a lowered module, as text: LLVM IR after O3
    (cpu), CUDA C (cuda), or the gpu-level IR that the simulated GPU runs."""
    if backend == "cpu":
        from tcir.backends.cpu.jit import translate_to_llvm_ir

        return translate_to_llvm_ir(lower_to_llvm_dialect(module))
    if backend == "cuda-sim":
        return print_ir(module)
    from tcir.backends.cuda.printer import print_cuda

    return print_cuda(module)


def tc_passes(ir: DefIR, binding: Binding) -> str:
    """The `tc`-level passes of every pipeline: sizes specialized (those the
    def's `tc.def` names: a part of a def split by the default mapping names
    fewer than the def), statements that compute in half precision computed
    in f32 (`tc-widen-half-precision`, only where the def has such
    statements)."""
    specialize = specialize_pass(ir.own_sizes(binding.sizes))
    half = any(
        ir.definition.tensor(s.lhs).dtype in HALF_TYPES or any(n.type in HALF_TYPES for n in walk(s.rhs))
        for s in ir.definition.stmts
    )
    return f"{specialize},tc-widen-half-precision" if half else specialize


def pipeline(ir: DefIR, binding: Binding, options: MappingOptions | None, backend: str) -> str:
    """The pass pipeline from `tc` to loops (CPU) or kernels (GPU backends)."""
    front = tc_passes(ir, binding)
    if options is None and backend == "cpu":
        return f"{front},convert-tc-to-loops"
    options = resolved_options(ir.definition, binding, options)
    return ",".join([front, *options.schedule_passes(), *options.backend_passes(backend)])


def default_parts(
    definition: CheckedDef, binding: Binding, options: MappingOptions | None, backend: str
) -> tuple[CheckedDef, list[CheckedDef]] | None:
    """The def that the default GPU mapping (`options` None, or only
    `allow_tf32`) lowers in parts and its sub-defs, each with its own
    default; None where it maps `definition` whole. Guarded reads in sums
    read zero-padded copies (`padded_reads`), each copy a part of its own."""
    if backend not in GPU_BACKENDS or options not in (None, TF32_DEFAULT):
        return None
    groups = default_partition(definition, binding)
    padded = padded_reads(definition)
    if padded is not None:
        groups = _with_copies(definition, padded, groups or [list(range(len(definition.stmts)))])
        definition = padded
    if groups is None:
        return None
    parts = split_def(*recomputed(definition, groups))
    return None if parts is None else (definition, parts)


def default_rewrites(definition: CheckedDef, binding: Binding, backend: str) -> bool:
    """Whether a call without options on `backend` lowers something that
    no `MappingOptions` of `definition` stands for: its sums' channels
    before their taps (`taps_last`), its temporaries reordered or outputs
    summed through one (`contraction_layouts`), its collapsed form (`collapsed`) or parts
    (`default_parts`). The tuner then times that call as the default to
    beat."""
    if backend not in GPU_BACKENDS:
        return False
    return (
        taps_last(definition) is not None
        or contraction_layouts(definition) is not None
        or collapsed(definition) is not None
        or default_parts(definition, binding, None, backend) is not None
    )


def _with_copies(definition: CheckedDef, padded: CheckedDef, groups: list[list[int]]) -> list[list[int]]:
    """`groups` of `definition`'s statements as groups of `padded`'s (see
    `padded_reads`), each copy a group of its own: a group that a copy
    falls inside is split there."""
    written = {s.lhs for s in definition.stmts}
    copies = [k for k, s in enumerate(padded.stmts) if s.lhs not in written]
    position = [k for k in range(len(padded.stmts)) if k not in copies]
    result = [[k] for k in copies]
    for group in groups:
        part: list[int] = []
        for k in range(position[group[0]], position[group[-1]] + 1):
            if k in copies:
                result.append(part)
                part = []
            else:
                part.append(k)
        result.append(part)
    return sorted(g for g in result if g)


@dataclass(frozen=True)
class DefIR:
    """A checked def and its `tc` module (with the libm declarations it calls)."""

    definition: CheckedDef
    module: ModuleOp

    @staticmethod
    def of(definition: CheckedDef) -> DefIR:
        from tcir.frontend.emit import emit_def, libm_declarations

        libm: set[Any] = set()
        tc_def = emit_def(definition, libm)
        return DefIR(definition, ModuleOp([*libm_declarations(libm), tc_def]))

    @property
    def name(self) -> str:
        return self.definition.name

    def own_sizes(self, sizes: dict[str, int]) -> dict[str, int]:
        """The `sizes` this def's `tc.def` names (a part of a def split by
        the default mapping names fewer than the def)."""
        used = {n for op in self.module.ops if isinstance(op, DefOp) for n in def_sizes(op)}
        return {n: v for n, v in sizes.items() if n in used} or sizes

    def lowered(self, binding: Binding, options: MappingOptions | None, backend: str) -> ModuleOp:
        """This def lowered for `binding`: loops (CPU) or kernels (GPU
        backends; the default mapping may lower it in parts)."""
        default_gpu = backend in GPU_BACKENDS and options in (None, TF32_DEFAULT)
        reordered = taps_last(self.definition) if default_gpu else None
        if reordered is not None:  # a convolution's channels before its taps (`tcir.frontend.reduction_order`)
            return DefIR.of(reordered).lowered(binding, options, backend)
        laid_out = contraction_layouts(self.definition) if default_gpu else None
        if laid_out is not None:  # temporaries as their contractions tile (`tcir.frontend.temporary_layout`)
            return DefIR.of(laid_out).lowered(binding, options, backend)
        view = collapsed(self.definition) if default_gpu else None
        if view is not None:  # lowered as its collapsed form, over views of the same buffers
            sizes = view.sizes(binding.sizes)
            own = Binding({n: sizes[n] for n in view.definition.size_params}, ())
            lower_view = lambda part: DefIR.of(part).lowered(own, options, backend)  # noqa: E731
            mine = Binding(self.own_sizes(binding.sizes), binding.arrays)
            return lowered_in_parts(self.module, self.definition, mine, [view.definition], lower_view, sizes)
        split = default_parts(self.definition, binding, options, backend)
        if split is not None:
            whole, parts = split
            lower = lambda part: DefIR.of(part).lowered(binding, options, backend)  # noqa: E731
            module = self.module if whole is self.definition else DefIR.of(whole).module
            return lowered_in_parts(module, whole, binding, parts, lower)
        module = self.module.clone()
        # Verified once, after the last pass: a call's compile need not pay
        # for the IR after every pass (half of a 128x128-tiled matmul's).
        PassManager.parse(pipeline(self, binding, options, backend), verify_each=False).run(module)
        return module


@dataclass
class StagedLowering:
    """Lowers one problem (a def at one binding) for many options, running
    each stage that does not depend on them once (see the module)."""

    ir: DefIR
    binding: Binding
    _scop: ModuleOp | None = None
    _schedules: dict[tuple[str, bool, bool, bool, bool], ModuleOp] = field(default_factory=dict)

    def scop(self) -> ModuleOp:
        """The def specialized to the binding, as a scop (shared: do not modify)."""
        if self._scop is None:
            module = self.ir.module.clone()
            PassManager.parse(f"{tc_passes(self.ir, self.binding)},convert-tc-to-poly").run(module)
            self._scop = module
        return self._scop

    def scheduled(self, options: MappingOptions) -> ModuleOp:
        """The scop scheduled with `options`' scheduler settings (shared: do not modify)."""
        key = options.scheduler_key
        if key not in self._schedules:
            module = self.scop().clone()
            PassManager.parse(options.schedule_pass()).run(module)
            self._schedules[key] = module
        return self._schedules[key]

    def lowered(self, options: MappingOptions | None, backend: str) -> ModuleOp:
        """As `DefIR.lowered` for the binding, from the deepest stage kept."""
        if (options is None and backend == "cpu") or default_parts(self.ir.definition, self.binding, options, backend):
            return self.ir.lowered(self.binding, options, backend)
        options = resolved_options(self.ir.definition, self.binding, options)
        module = self.scheduled(options).clone()
        rest = [*options.tiling_passes(), *options.backend_passes(backend)]
        PassManager.parse(",".join(rest), verify_each=False).run(module)
        return module
