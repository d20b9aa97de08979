"""Generated code as data: what the compilation cache stores and what runs.

An artifact is the output of the tcir pipeline for one def, sizes and
options, in a form that loads in any process without running the pipeline
again: optimized LLVM IR plus the function's signature for the CPU (loading
only runs LLVM's code generator), CUDA C plus the host launch program for the
GPU (loading only runs NVRTC). Artifacts round-trip through JSON.
"""

from __future__ import annotations

import base64

import ctypes
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tcir.backends.cpu.runtime import (
    BufferParameter,
    FunctionSignature,
    ScalarParameter,
)
from tcir.backends.cuda import launch
from tcir.errors import TCError
from tcir.frontend.ast import CheckedDef
from tcir.runtime.signature import Binding
from tcir.tuner.options import MappingOptions

if TYPE_CHECKING:
    from tcir.api import Function

_CTYPES = {
    t.__name__: t
    for t in (
        ctypes.c_bool,
        ctypes.c_int8,
        ctypes.c_int16,
        ctypes.c_int32,
        ctypes.c_int64,
        ctypes.c_float,
        ctypes.c_double,
    )
}
_HOST_TYPES: dict[str, type[Any]] = {
    t.__name__: t
    for t in (
        launch.ArgRef,
        launch.HostExpr,
        launch.HostAlloc,
        launch.HostParam,
        launch.KernelArg,
        launch.KernelLaunch,
        launch.HostProgram,
    )
}


def _encode_host(value: Any) -> Any:
    """A host-program value as JSON data: dataclasses tagged with their type."""
    if is_dataclass(value) and not isinstance(value, type):
        data = {f.name: _encode_host(getattr(value, f.name)) for f in fields(value)}
        return {"type": type(value).__name__, "fields": data}
    if isinstance(value, tuple | list):
        return [_encode_host(v) for v in value]
    return value


def _decode_host(data: Any) -> Any:
    """The inverse of `_encode_host` (lists become tuples); ValueError if malformed."""
    if isinstance(data, dict):
        cls = _HOST_TYPES.get(data.get("type", ""))
        if cls is None or not isinstance(data.get("fields"), dict):
            raise ValueError(f"unknown host program value {data!r:.80}")
        return cls(**{k: _decode_host(v) for k, v in data["fields"].items()})
    if isinstance(data, list):
        return tuple(_decode_host(v) for v in data)
    return data


def _encode_parameter(p: BufferParameter | ScalarParameter) -> dict[str, Any]:
    if isinstance(p, BufferParameter):
        return {"name": p.name, "shape": list(p.shape), "dtype": p.dtype.str, "written": p.written}
    return {"name": p.name, "ctype": p.ctype.__name__}


def _decode_parameter(data: dict[str, Any]) -> BufferParameter | ScalarParameter:
    if "ctype" in data:
        return ScalarParameter(str(data["name"]), _CTYPES[data["ctype"]])
    shape = tuple(int(n) for n in data["shape"])
    return BufferParameter(str(data["name"]), shape, np.dtype(data["dtype"]), bool(data["written"]))


@dataclass(frozen=True)
class CpuArtifact:
    """Optimized LLVM IR of a loop-level module, its object code for this
    host, and its entry's signature: loading links the object code (a few
    milliseconds) instead of generating code again."""

    llvm_ir: str
    object_code: bytes
    signature: FunctionSignature

    @staticmethod
    def of(llvm_ir: str, signature: FunctionSignature) -> CpuArtifact:
        import llvmlite.binding as llvm

        from tcir.backends.cpu.jit import host_target_machine

        module = llvm.parse_assembly(llvm_ir)
        return CpuArtifact(llvm_ir, host_target_machine().emit_object(module), signature)

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": "cpu",
            "llvm_ir": self.llvm_ir,
            "object_code": base64.b64encode(self.object_code).decode(),
            "function": self.signature.name,
            "parameters": [_encode_parameter(p) for p in self.signature.parameters],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CpuArtifact:
        parameters = tuple(_decode_parameter(p) for p in data["parameters"])
        return CpuArtifact(
            str(data["llvm_ir"]),
            base64.b64decode(str(data["object_code"]), validate=True),
            FunctionSignature(str(data["function"]), parameters),
        )

    def load(self) -> Callable[..., None]:
        """Link the object code into a JIT engine and return the entry's callable."""
        import llvmlite.binding as llvm

        from tcir.backends.cpu.jit import (
            CompiledModule,
            check_external_symbols,
            host_target_machine,
        )

        check_external_symbols(llvm.parse_assembly(self.llvm_ir))
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), host_target_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(self.object_code))
        engine.finalize_object()
        compiled = CompiledModule(engine, self.llvm_ir, {self.signature.name: self.signature})
        return compiled.function(self.signature.name)


@dataclass(frozen=True)
class CudaArtifact:
    """CUDA C of the kernels and the host program launching them."""

    source: str
    host: launch.HostProgram

    def to_json(self) -> dict[str, Any]:
        return {"backend": "cuda", "source": self.source, "host": _encode_host(self.host)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> CudaArtifact:
        host = _decode_host(data["host"])
        if not isinstance(host, launch.HostProgram):
            raise ValueError("cuda artifact: 'host' is not a host program")
        return CudaArtifact(str(data["source"]), host)

    def load(self) -> Callable[..., None]:
        """Compile the kernels with NVRTC; the result runs the host program."""
        from tcir.backends.cuda.runtime import CudaProgram

        return CudaProgram(self.source, self.host)


Artifact = CpuArtifact | CudaArtifact


def artifact_from_json(data: Any) -> Artifact:
    """An artifact from `to_json` data; ValueError, KeyError or TypeError if malformed."""
    if not isinstance(data, dict):
        raise ValueError("artifact: expected a JSON object")
    if data.get("backend") == "cpu":
        return CpuArtifact.from_json(data)
    if data.get("backend") == "cuda":
        return CudaArtifact.from_json(data)
    raise ValueError(f"artifact: unknown backend {data.get('backend')!r}")


def function_for(definition: CheckedDef) -> Function:
    """A callable `Function` for a checked def (as `tcir.define` builds it)."""
    from xdsl.dialects.builtin import ModuleOp

    from tcir.api import Function
    from tcir.frontend.emit import emit_def, libm_declarations

    libm: set[Any] = set()
    tc_def = emit_def(definition, libm)
    return Function(definition, ModuleOp([*libm_declarations(libm), tc_def]))


def build_artifact(
    function: Function, binding: Binding, options: MappingOptions | None, backend: str
) -> Artifact:
    """Run the tcir pipeline for `binding` and `options` (None: the backend's
    default lowering) and the backend's code generation up to the artifact."""
    module = function.lowered(binding, options, backend)
    if backend == "cpu":
        from xdsl.dialects import func

        from tcir.backends.cpu.jit import translate_to_llvm_ir

        entry = next(
            (
                op
                for op in module.ops
                if isinstance(op, func.FuncOp) and op.sym_name.data == function.name
            ),
            None,
        )
        if entry is None:
            raise TCError(f"cpu backend: no function @{function.name} after lowering")
        return CpuArtifact.of(translate_to_llvm_ir(module), FunctionSignature.of(entry))
    if backend == "cuda":
        from tcir.backends.cuda.printer import print_cuda

        return CudaArtifact(print_cuda(module), launch.extract_host_program(module, function.name))
    raise TCError(f"unknown backend '{backend}'")


@functools.cache
def target_architecture(backend: str) -> str:
    """What generated code depends on besides the problem: the host CPU and
    LLVM version, or the GPU model and compute capability of device 0."""
    if backend == "cpu":
        import llvmlite.binding as llvm

        from tcir.backends.cpu.jit import host_target_machine

        features = llvm.get_host_cpu_features().flatten()
        digest = hashlib.sha256(features.encode()).hexdigest()[:12]
        version = ".".join(map(str, llvm.llvm_version_info))
        return (
            f"cpu {host_target_machine().triple} {llvm.get_host_cpu_name()} "
            f"llvm-{version} features-{digest}"
        )
    if backend == "cuda":
        from tcir.backends.cuda.runtime import cupy_module

        cupy = cupy_module()
        try:
            device = cupy.cuda.Device(0)
            name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
            return f"cuda sm_{device.compute_capability} {name}"
        except Exception as e:  # no driver or no device
            raise TCError(f"cuda backend: no usable GPU ({e})") from None
    raise TCError(f"unknown backend '{backend}'")
