"""Generated code as data: what the compilation cache stores and what runs.

An artifact is the output of the tcir pipeline for one def, sizes and
options, in a form that loads in any process without running the pipeline
again: for the CPU, optimized LLVM IR, its object code and (where a C
compiler driver links one) a shared library of it, plus the function's
signature; for the GPU, CUDA C, the host launch program and a cubin for the
GPU. Loading a shared library or a cubin needs neither LLVM nor NVRTC; the
fallbacks are MCJIT and NVRTC. Artifacts round-trip through JSON.

A cache hit imports this module, so it imports no compiler: xDSL, llvmlite's
LLVM bindings and the CUDA printer load only to build or to fall back.
"""

from __future__ import annotations

import base64
import ctypes
import dataclasses
import functools
import hashlib
import json
import logging
import platform
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tcir.backends.cpu.runtime import (
    BufferParameter,
    FunctionSignature,
    ScalarParameter,
    load_shared_library,
)
from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.runtime.signature import Binding

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from tcir.compiler.lowering import DefIR
    from tcir.runtime.host_program import HostProgram

log = logging.getLogger(__name__)

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


@functools.cache
def _host_types() -> dict[str, type[Any]]:
    """The dataclasses of a host program by name (imported for CUDA only)."""
    from tcir.runtime import host_program as h

    kinds = (h.ArgRef, h.HostExpr, h.HostAlloc, h.HostParam, h.IndexCheck, h.KernelArg, h.KernelLaunch)
    return {t.__name__: t for t in (*kinds, h.HostProgram)}


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
        cls = _host_types().get(data.get("type", ""))
        if cls is None or not isinstance(data.get("fields"), dict):
            raise ValueError(f"unknown host program value {data!r:.80}")
        return cls(**{k: _decode_host(v) for k, v in data["fields"].items()})
    if isinstance(data, list):
        return tuple(_decode_host(v) for v in data)
    return data


def _encode_parameter(p: BufferParameter | ScalarParameter) -> dict[str, Any]:
    if isinstance(p, BufferParameter):
        return {"name": p.name, "shape": list(p.shape), "dtype": p.dtype.name, "written": p.written}
    return {"name": p.name, "ctype": p.ctype.__name__}


def _decode_parameter(data: dict[str, Any]) -> BufferParameter | ScalarParameter:
    if "ctype" in data:
        return ScalarParameter(str(data["name"]), _CTYPES[data["ctype"]])
    shape = tuple(int(n) for n in data["shape"])
    return BufferParameter(str(data["name"]), shape, np.dtype(data["dtype"]), bool(data["written"]))


def _encode_bytes(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _decode_bytes(data: Any) -> bytes | None:
    return None if data is None else base64.b64decode(str(data), validate=True)


@dataclass(frozen=True)
class CpuArtifact:
    """Optimized LLVM IR of a loop-level module, its position-independent
    object code for this host, its entry's signature and, where a C compiler
    driver is found, the shared library of that object code.

    Loading opens the shared library (no LLVM: a fresh process loads it in
    milliseconds); without one, or where it does not load, MCJIT links the
    object code."""

    llvm_ir: str
    object_code: bytes
    signature: FunctionSignature
    shared_library: bytes | None = None

    @staticmethod
    def of(llvm_ir: str, signature: FunctionSignature) -> CpuArtifact:
        from tcir.backends.cpu.jit import emit_object, link_shared_library

        object_code = emit_object(llvm_ir)
        return CpuArtifact(llvm_ir, object_code, signature, link_shared_library(object_code))

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": "cpu",
            "llvm_ir": self.llvm_ir,
            "object_code": _encode_bytes(self.object_code),
            "shared_library": _encode_bytes(self.shared_library),
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
            _decode_bytes(data["shared_library"]),
        )

    def load(self) -> Callable[..., None]:
        """The entry's callable, from the shared library or else the object code."""
        if self.shared_library is not None:
            try:
                return load_shared_library(self.shared_library, self.signature)
            except OSError as e:  # e.g. a temporary directory mounted noexec
                log.warning("cannot load a shared library (%s); linking its object code", e)
        from tcir.backends.cpu.jit import load_object

        return load_object(self.object_code, self.llvm_ir, self.signature)


@dataclass(frozen=True)
class CudaArtifact:
    """CUDA C of the kernels, the host program launching them and, once
    NVRTC compiled them on a GPU, their cubin for that GPU's architecture
    `arch` (`sm_90`): loading on such a GPU then skips NVRTC."""

    source: str
    host: HostProgram
    cubin: bytes | None = None
    arch: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": "cuda",
            "source": self.source,
            "host": _encode_host(self.host),
            "cubin": _encode_bytes(self.cubin),
            "arch": self.arch,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CudaArtifact:
        from tcir.runtime.host_program import HostProgram

        host = _decode_host(data["host"])
        if not isinstance(host, HostProgram):
            raise TypeError("cuda artifact: 'host' is not a host program")
        cubin, arch = _decode_bytes(data["cubin"]), data["arch"]
        if (cubin is None) != (arch is None):
            raise ValueError("cuda artifact: a cubin comes with its architecture")
        return CudaArtifact(str(data["source"]), host, cubin, None if arch is None else str(arch))

    def compiled_for(self, arch: str) -> CudaArtifact:
        """This artifact with its cubin for `arch` (`sm_90`), compiled by NVRTC
        here (no GPU needed: the tuner's compile workers do it); unchanged
        where NVRTC cannot."""
        from tcir.backends.cuda.runtime import DEFAULT_OPTIONS, compile_cubin

        cubin = compile_cubin(self.source, DEFAULT_OPTIONS, arch)
        return self if cubin is None else dataclasses.replace(self, cubin=cubin, arch=arch)

    def load(self) -> Callable[..., None]:
        """The host program with its kernels from the cubin where it suits
        this GPU, else compiled by NVRTC now."""
        from tcir.backends.cuda.runtime import CudaProgram

        return CudaProgram(self.source, self.host, cubin=self.cubin, arch=self.arch)


@dataclass(frozen=True)
class CudaSimArtifact:
    """The gpu-level IR that the CUDA backend would print as CUDA C, with its
    host program, for the simulated GPU: IR (data, not code), which loading
    parses and translates."""

    ir: str
    host: HostProgram

    def to_json(self) -> dict[str, Any]:
        return {"backend": "cuda-sim", "ir": self.ir, "host": _encode_host(self.host)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> CudaSimArtifact:
        from tcir.runtime.host_program import HostProgram

        host = _decode_host(data["host"])
        if not isinstance(host, HostProgram):
            raise TypeError("cuda-sim artifact: 'host' is not a host program")
        return CudaSimArtifact(str(data["ir"]), host)

    def load(self) -> Callable[..., None]:
        from tcir.backends.cuda_sim.runtime import SimProgram
        from tcir.passmanager import parse_ir

        return SimProgram(parse_ir(self.ir), self.host)


Artifact = CpuArtifact | CudaArtifact | CudaSimArtifact


def loaded(artifact: Artifact, kernel: Callable[..., None]) -> Artifact:
    """`artifact` with what loading it as `kernel` compiled for this machine
    (the cubin NVRTC made for this GPU), so that later loads need not."""
    if isinstance(artifact, CudaArtifact):
        from tcir.backends.cuda.runtime import CudaProgram

        if isinstance(kernel, CudaProgram) and kernel.cubin not in (None, artifact.cubin):
            return dataclasses.replace(artifact, cubin=kernel.cubin, arch=kernel.arch)
    return artifact


def artifact_from_json(data: Any) -> Artifact:
    """An artifact from `to_json` data; ValueError, KeyError or TypeError if malformed."""
    if not isinstance(data, dict):
        raise TypeError("artifact: expected a JSON object")
    if data.get("backend") == "cpu":
        return CpuArtifact.from_json(data)
    if data.get("backend") == "cuda":
        return CudaArtifact.from_json(data)
    if data.get("backend") == "cuda-sim":
        return CudaSimArtifact.from_json(data)
    raise ValueError(f"artifact: unknown backend {data.get('backend')!r}")


def build_artifact(ir: DefIR, binding: Binding, options: MappingOptions | None, backend: str) -> Artifact:
    """Run the tcir pipeline for `binding` and `options` (None: the backend's
    default lowering) and the backend's code generation up to the artifact."""
    return artifact_of(ir.lowered(binding, options, backend), ir.name, backend)


def artifact_of(module: ModuleOp, name: str, backend: str) -> Artifact:
    """The artifact of a module lowered for `backend`, whose entry (host
    function) is `name`: the backend's code generation."""
    if backend == "cpu":
        from xdsl.dialects import func

        from tcir.backends.cpu.jit import function_signature, translate_to_llvm_ir
        from tcir.compiler.lowering import lower_to_llvm_dialect

        entry = next(
            (op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name),
            None,
        )
        if entry is None:
            raise TCError(f"cpu backend: no function @{name} after lowering")
        return CpuArtifact.of(translate_to_llvm_ir(lower_to_llvm_dialect(module)), function_signature(entry))
    if backend == "cuda":
        from tcir.backends.cuda.launch import extract_host_program
        from tcir.backends.cuda.printer import print_cuda

        return CudaArtifact(print_cuda(module), extract_host_program(module, name))
    if backend == "cuda-sim":
        from tcir.backends.cuda.launch import extract_host_program
        from tcir.passmanager import print_ir

        return CudaSimArtifact(print_ir(module), extract_host_program(module, name))
    raise TCError(f"unknown backend '{backend}'")


def target_architecture(backend: str) -> str:
    """What generated code depends on besides the problem: the host CPU's
    model and features and the LLVM version, or the current GPU's model and
    architecture."""
    if backend == "cpu":
        return _cpu_target()
    if backend == "cuda":
        from tcir.backends.cuda.runtime import current_device

        return _gpu_target(current_device())
    if backend == "cuda-sim":
        return "cuda-sim"
    raise TCError(f"unknown backend '{backend}'")


_CPUINFO_FIELDS = frozenset(
    {
        # x86
        "vendor_id",
        "cpu family",
        "model",
        "model name",
        "stepping",
        "flags",
        # Arm
        "CPU implementer",
        "CPU architecture",
        "CPU variant",
        "CPU part",
        "CPU revision",
        "Features",
        # RISC-V
        "isa",
        "uarch",
    }
)


def _cpuinfo_digest() -> str | None:
    """A digest of the processors' models and feature flags in /proc/cpuinfo,
    what LLVM derives the host CPU and its features from; None without them."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return None
    found = set()
    for line in text.splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip() in _CPUINFO_FIELDS:
            found.add((name.strip(), " ".join(value.split())))
    if not found:
        return None
    return hashlib.sha256(json.dumps(sorted(found)).encode()).hexdigest()[:16]


@functools.cache
def _cpu_target() -> str:
    """The CPU target, from /proc/cpuinfo where there is one: loading LLVM's
    bindings to ask LLVM takes longer than a whole cache hit may (tens of ms)."""
    from importlib import metadata

    version = f"llvmlite-{metadata.version('llvmlite')}"
    digest = _cpuinfo_digest()
    if digest is not None:
        return f"cpu {platform.machine()} cpuinfo-{digest} {version}"
    import llvmlite.binding as llvm

    from tcir.backends.cpu.jit import host_target_machine

    features = hashlib.sha256(llvm.get_host_cpu_features().flatten().encode()).hexdigest()[:12]
    name = llvm.get_host_cpu_name()
    return f"cpu {host_target_machine().triple} {name} features-{features} {version}"


@functools.cache
def _gpu_target(device: int) -> str:
    """The model and architecture of GPU `device`."""
    from tcir.backends.cuda.runtime import cupy_module, device_architecture

    name = cupy_module().cuda.runtime.getDeviceProperties(device)["name"].decode()
    return f"cuda {device_architecture(device)} {name}"
