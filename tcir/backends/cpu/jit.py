"""Loop-level IR -> llvm dialect -> llvmlite -> LLVM O3 -> MCJIT machine code.

`compile_module` is the CPU reference backend's entry point; `translate_to_llvm_ir`
gives the optimized LLVM IR text that `tcir-translate --target=llvm` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import llvmlite.binding as llvm
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tcir.backends.cpu.runtime import FunctionSignature, make_callable
from tcir.errors import TCError


@cache
def _initialize_llvm() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def host_target_machine() -> llvm.TargetMachine:
    """A target machine for the host CPU and its features (AVX etc.), at O3."""
    _initialize_llvm()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )


def _lowered(module: ModuleOp) -> ModuleOp:
    """A copy of `module` lowered to the `llvm` dialect; anything the pipeline
    could not lower is reported as a `TCError`."""
    from tcir.backends.cpu.pipeline import lower_to_llvm_dialect

    lowered = module.clone()
    lower_to_llvm_dialect(lowered)
    for op in lowered.walk():
        if op is not lowered and op.dialect_name() != "llvm":
            raise TCError(f"cpu backend: cannot lower '{op.name}' to LLVM")
    return lowered


def _llvm_module(
    module: ModuleOp, target_machine: llvm.TargetMachine
) -> llvm.ModuleRef:
    """`module` (loop level) lowered and converted by xDSL's llvmlite converter."""
    # Imported here: loading cached object code must not pay for the converter.
    from xdsl.backend.llvm.convert import convert_module

    from tcir.backends.cpu import llvm_ext  # noqa: F401  (registers extra llvm casts)

    ir_module = convert_module(
        _lowered(module),
        fallback_target_triple=target_machine.triple,
        data_layout=str(target_machine.target_data),
    )
    llvm_module = llvm.parse_assembly(str(ir_module))
    llvm_module.verify()
    return llvm_module


def _optimized_llvm_module(
    module: ModuleOp, target_machine: llvm.TargetMachine
) -> llvm.ModuleRef:
    """`_llvm_module` optimized by LLVM's O3 pipeline (loop and SLP
    vectorization on) for `target_machine`."""
    llvm_module = _llvm_module(module, target_machine)
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    options.loop_interleaving = True
    options.loop_unrolling = True
    builder = llvm.create_pass_builder(target_machine, options)
    builder.getModulePassManager().run(llvm_module, builder)
    return llvm_module


def translate_to_llvm_ir(module: ModuleOp, *, optimize: bool = True) -> str:
    """The LLVM IR text of loop-level `module` for the host, after O3 unless
    `optimize` is false (then as xDSL's converter emits it)."""
    translate = _optimized_llvm_module if optimize else _llvm_module
    return str(translate(module, host_target_machine()))


@dataclass
class CompiledModule:
    """Machine code for every function of a loop-level module.

    `module.function("mm")` (or `module["mm"]`) is a Python callable taking numpy
    arrays and scalars in the function's argument order. Each callable keeps
    this object, and thereby the JIT engine owning the code, alive.
    """

    engine: llvm.ExecutionEngine
    llvm_ir: str
    """The optimized LLVM IR that was compiled."""
    signatures: dict[str, FunctionSignature]
    _callables: dict[str, Callable[..., None]] = field(default_factory=dict)

    def function(self, name: str) -> Callable[..., None]:
        """The callable running compiled `@name`."""
        if name not in self._callables:
            if name not in self.signatures:
                raise TCError(f"cpu backend: no function @{name} in the compiled module")
            address = self.engine.get_function_address(name)
            self._callables[name] = make_callable(self.signatures[name], address, self)
        return self._callables[name]

    __getitem__ = function

    @property
    def function_names(self) -> tuple[str, ...]:
        """Names of the callable functions, in module order."""
        return tuple(self.signatures)


def check_external_symbols(llvm_module: llvm.ModuleRef) -> None:
    """Fail if a called external function (libm, malloc) is not in the process:
    MCJIT would otherwise jump to address 0."""
    for function in llvm_module.functions:
        name = function.name
        if function.is_declaration and not name.startswith("llvm."):
            if llvm.address_of_symbol(name) is None:
                raise TCError(f"cpu backend: external function {name} not found")


def compile_module(module: ModuleOp) -> CompiledModule:
    """JIT-compile loop-level `module` (left unchanged) at O3; its public
    functions become callable."""
    signatures = {
        op.sym_name.data: FunctionSignature.of(op)
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and not op.is_declaration
        and op.sym_visibility in (None, StringAttr("public"))
    }
    target_machine = host_target_machine()
    llvm_module = _optimized_llvm_module(module, target_machine)
    check_external_symbols(llvm_module)
    llvm_ir = str(llvm_module)  # before code generation rewrites the module
    engine = llvm.create_mcjit_compiler(llvm_module, target_machine)
    engine.finalize_object()
    engine.run_static_constructors()
    return CompiledModule(engine, llvm_ir, signatures)
