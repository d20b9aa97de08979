"""`llvm`-dialect IR -> llvmlite -> LLVM O3 -> machine code.

The compile layer lowers loop-level IR to the `llvm` dialect
(`tcir.compiler.lowering.lower_to_llvm_dialect`). `compile_module` is the CPU
reference backend's entry point (MCJIT); `translate_to_llvm_ir` gives the
optimized LLVM IR text that `tcir-translate --target=llvm` prints. For the compilation cache,
`emit_object` and `link_shared_library` turn that IR into a shared library
that loads without LLVM, and `load_object` links object code with MCJIT.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import llvmlite.binding as llvm
import ml_dtypes
import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue

from tcir.backends.cpu.runtime import (
    BufferParameter,
    FunctionSignature,
    Parameter,
    ScalarParameter,
    make_callable,
)
from tcir.errors import TCError

log = logging.getLogger(__name__)

LINK_TIMEOUT_S = 60.0

_INTEGER_DTYPES = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_INTEGER_CTYPES: dict[int, type[ctypes._SimpleCData[Any]]] = {
    1: ctypes.c_bool,
    8: ctypes.c_int8,
    16: ctypes.c_int16,
    32: ctypes.c_int32,
    64: ctypes.c_int64,
}


def _dtype(typ: Attribute) -> np.dtype[Any]:
    if isinstance(typ, IndexType):
        return np.dtype(np.int64)
    if isinstance(typ, IntegerType) and typ.width.data in _INTEGER_DTYPES:
        return np.dtype(_INTEGER_DTYPES[typ.width.data])
    if isinstance(typ, Float16Type):
        return np.dtype(np.float16)
    if isinstance(typ, BFloat16Type):
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(typ, Float32Type):
        return np.dtype(np.float32)
    if isinstance(typ, Float64Type):
        return np.dtype(np.float64)
    raise TCError(f"cpu backend: no numpy dtype for {typ}")


def _scalar_ctype(typ: Attribute) -> type[ctypes._SimpleCData[Any]]:
    if isinstance(typ, IndexType):
        return ctypes.c_int64
    if isinstance(typ, IntegerType) and typ.width.data in _INTEGER_CTYPES:
        return _INTEGER_CTYPES[typ.width.data]
    if isinstance(typ, Float32Type):
        return ctypes.c_float
    if isinstance(typ, Float64Type):
        return ctypes.c_double
    raise TCError(f"cpu backend: scalar arguments of type {typ} are not supported")


def function_signature(op: func.FuncOp) -> FunctionSignature:
    """The signature of loop-level function `op`, which must return nothing."""
    if op.function_type.outputs.data:
        raise TCError(f"cpu backend: function @{op.sym_name.data} must not return values")
    written: set[SSAValue] = {
        store.memref for store in op.walk() if isinstance(store, memref.StoreOp)
    }
    parameters: list[Parameter] = []
    for index, arg in enumerate(op.args):
        name = f"#{index}" + (f" '{arg.name_hint}'" if arg.name_hint else "")
        typ = arg.type
        if isinstance(typ, MemRefType):
            shape = typ.get_shape()
            parameters.append(BufferParameter(name, shape, _dtype(typ.element_type), arg in written))
        else:
            parameters.append(ScalarParameter(name, _scalar_ctype(typ)))
    return FunctionSignature(op.sym_name.data, tuple(parameters))


@cache
def _initialize_llvm() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # The C library's and libm's symbols (malloc, expf...) for the JIT's
    # calls: the process has them, but MCJIT looks only in libraries loaded
    # permanently (a program with temporaries and no math found no malloc).
    for name in ("c", "m"):
        path = ctypes.util.find_library(name)
        if path is not None:
            llvm.load_library_permanently(path)


def host_target_machine(*, pic: bool = False) -> llvm.TargetMachine:
    """A target machine for the host CPU and its features (AVX etc.), at O3;
    with `pic`, for position-independent code (shared libraries)."""
    _initialize_llvm()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
        reloc="pic" if pic else "default",
        codemodel="default" if pic else "jitdefault",
    )


def _checked(module: ModuleOp) -> ModuleOp:
    """`module`, which must be in the `llvm` dialect (the compile layer's
    `lower_to_llvm_dialect` lowers loop-level IR)."""
    for op in module.walk():
        if op is not module and op.dialect_name() != "llvm":
            raise TCError(f"cpu backend: '{op.name}' is not in the llvm dialect (run the CPU lowering pipeline first)")
    return module


def _llvm_module(
    module: ModuleOp, target_machine: llvm.TargetMachine
) -> llvm.ModuleRef:
    """`module` (in the `llvm` dialect) converted by xDSL's llvmlite converter."""
    # Imported here: loading cached object code must not pay for the converter.
    from xdsl.backend.llvm.convert import convert_module

    from tcir.backends.cpu import llvm_ext  # noqa: F401  (registers extra llvm casts)

    ir_module = convert_module(
        _checked(module),
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
    """The LLVM IR text of `module` (in the `llvm` dialect) for the host,
    after O3 unless `optimize` is false (then as xDSL's converter emits it)."""
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
        is_external = function.is_declaration and not name.startswith("llvm.")
        if is_external and llvm.address_of_symbol(name) is None:
            raise TCError(f"cpu backend: external function {name} not found")


def function_signatures(module: ModuleOp) -> dict[str, FunctionSignature]:
    """The signatures of the public functions of loop-level `module`."""
    return {
        op.sym_name.data: function_signature(op)
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and not op.is_declaration
        and op.sym_visibility in (None, StringAttr("public"))
    }


def compile_module(module: ModuleOp, signatures: dict[str, FunctionSignature]) -> CompiledModule:
    """JIT-compile `module` (in the `llvm` dialect) at O3; the functions of
    `signatures` (`function_signatures` of the loop-level module) become
    callable."""
    target_machine = host_target_machine()
    llvm_module = _optimized_llvm_module(module, target_machine)
    check_external_symbols(llvm_module)
    llvm_ir = str(llvm_module)  # before code generation rewrites the module
    engine = llvm.create_mcjit_compiler(llvm_module, target_machine)
    engine.finalize_object()
    engine.run_static_constructors()
    return CompiledModule(engine, llvm_ir, signatures)


def emit_object(llvm_ir: str) -> bytes:
    """Position-independent object code of LLVM IR text for the host: what
    `link_shared_library` links and `load_object` loads."""
    return host_target_machine(pic=True).emit_object(llvm.parse_assembly(llvm_ir))


def link_shared_library(object_code: bytes) -> bytes | None:
    """A shared library of `object_code` (linked against libm) made by the C
    compiler driver (`$CC`, else `cc`), or None where there is none or it fails."""
    command = shlex.split(os.environ.get("CC", "cc"))
    if not command or shutil.which(command[0]) is None:
        log.info("no C compiler driver to link shared libraries; cached code loads with MCJIT")
        return None
    with tempfile.TemporaryDirectory(prefix="tcir-link-") as directory:
        obj, library = os.path.join(directory, "code.o"), os.path.join(directory, "code.so")
        with open(obj, "wb") as f:
            f.write(object_code)
        try:
            subprocess.run(
                [*command, "-shared", "-o", library, obj, "-lm"],
                check=True,
                capture_output=True,
                timeout=LINK_TIMEOUT_S,
            )
            with open(library, "rb") as f:
                return f.read()
        except (OSError, subprocess.SubprocessError) as e:
            log.warning("cannot link a shared library (%s); cached code loads with MCJIT", e)
            return None


def load_object(object_code: bytes, llvm_ir: str, signature: FunctionSignature) -> Callable[..., None]:
    """Link `emit_object`'s code of `llvm_ir` into a JIT engine; the callable
    of `signature`'s function."""
    check_external_symbols(llvm.parse_assembly(llvm_ir))
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), host_target_machine(pic=True))
    engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
    engine.finalize_object()
    return CompiledModule(engine, llvm_ir, {signature.name: signature}).function(signature.name)
