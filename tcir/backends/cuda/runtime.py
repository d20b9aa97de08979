"""Compile CUDA C with NVRTC through cupy and run a module's host program.

    program = compile_module(module)        # print_cuda + NVRTC + launch plans
    program(A, B, C)                        # host function's arguments, in order

Buffers may be cupy arrays, torch CUDA tensors or any DLPack /
`__cuda_array_interface__` producer on the current device; they must be
C-contiguous with the memref's shape and dtype (outputs are written in place).
Scalars are Python or numpy numbers. cupy is imported on first use, so this
module imports without it. NVRTC and launch errors raise `TCError` naming a
copy of the generated source written to a temporary directory.

The kernels are compiled to a cubin for the current GPU (`CudaProgram.cubin`)
that a later `CudaProgram` of the same source loads without NVRTC: the
compilation cache stores it, so that a fresh process skips the compiler.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import operator
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcir.backends.cuda import index_errors as index_errors_module
from tcir.backends.cuda.index_errors import check_pending, index_errors, uses_index_checks
from tcir.errors import ShapeError, TCError
from tcir.runtime.host_program import (
    ArgRef,
    HostParam,
    HostProgram,
    KernelLaunch,
    launch_arguments,
    launch_grid,
)

log = logging.getLogger(__name__)

#: NVRTC options by default: no fast math, so results follow IEEE as on the CPU.
DEFAULT_OPTIONS: tuple[str, ...] = ("-std=c++17",)

#: What cupy's RawModule adds to every NVRTC compilation, so that cubins
#: compiled here compute exactly what RawModule's did.
_RAWMODULE_OPTIONS: tuple[str, ...] = ("-ftz=true",)


def cupy_module() -> Any:
    try:
        import cupy
    except ImportError:
        raise TCError(
            "backend 'cuda': cupy is not installed (pip install 'tcir[cuda]'; "
            "backend='cuda-sim' runs the same kernels on a simulated GPU without it)"
        ) from None
    return cupy


def cuda_available() -> bool:
    """Whether cupy is installed and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001  (no cupy, no driver, no device: all mean "no")
        return False


def current_device() -> int:
    """The id of cupy's current CUDA device; TCError without a usable GPU."""
    cupy = cupy_module()
    try:
        return int(cupy.cuda.runtime.getDevice())
    except cupy.cuda.runtime.CUDARuntimeError as e:  # no driver or no device
        raise TCError(f"cuda backend: no usable GPU ({e})") from None


@functools.cache
def device_architecture(device: int) -> str:
    """The real architecture of `device`, e.g. `sm_80`; on sm_90 (H100)
    `sm_90a`, whose architecture-specific instructions (`wgmma`) its cubin may
    use (such a cubin runs on sm_90 only: the architecture of this device)."""
    capability = cupy_module().cuda.Device(device).compute_capability
    return f"sm_{capability}{'a' if capability == '90' else ''}"


def write_source(source: str) -> str:
    """Write `source` to a new temporary directory; returns the file's path."""
    path = os.path.join(tempfile.mkdtemp(prefix="tcir-cuda-"), "kernels.cu")
    with open(path, "w") as f:
        f.write(source)
    return path


def _loaded(module: Any, names: tuple[str, ...], checked: bool) -> tuple[int | None, tuple[Any, ...]]:
    """Kernels `names` of a loaded module, with its index-error slot if `checked`."""
    slot = index_errors(cupy_module()).attach(module) if checked else None
    return slot, tuple(module.get_function(name) for name in names)


@functools.lru_cache(maxsize=128)
def _functions(source: str, options: tuple[str, ...], names: tuple[str, ...]) -> tuple[int | None, tuple[Any, ...]]:
    """Kernels `names` of `source`, compiled by cupy's RawModule (cached per process)."""
    cupy = cupy_module()
    module = cupy.RawModule(code=source, options=options, backend="nvrtc")
    return _loaded(module, names, uses_index_checks(source))


def compile_cubin(source: str, options: Sequence[str], arch: str) -> bytes | None:
    """`source` compiled by NVRTC to a cubin for `arch` (`sm_90`), or None
    where NVRTC rejects it here: an error in the source, a GPU newer than
    NVRTC. (cupy's RawModule then compiles it and reports errors.)"""
    cupy = cupy_module()
    nvrtc = cupy.cuda.nvrtc
    include = cupy.cuda.get_cuda_path()  # where cuda_fp16.h is, as RawModule finds it
    flags = [*options, *_RAWMODULE_OPTIONS, f"-arch={arch}"]
    if include is not None:
        flags.append(f"-I{os.path.join(include, 'include')}")
    try:
        program = nvrtc.createProgram(source, "kernels.cu", (), ())
    except RuntimeError as e:  # cupy cannot load NVRTC
        log.debug("NVRTC is not usable: %s", e)
        return None
    try:
        nvrtc.compileProgram(program, flags)
        return bytes(nvrtc.getCUBIN(program))
    except nvrtc.NVRTCError as e:
        log.debug("NVRTC cannot compile a cubin for %s (%s): %s", arch, e, nvrtc.getProgramLog(program))
        return None
    finally:
        nvrtc.destroyProgram(program)


@functools.lru_cache(maxsize=128)
def _cubin_functions(
    cubin: bytes, names: tuple[str, ...], device: int, checked: bool
) -> tuple[int | None, tuple[Any, ...]]:
    """Kernels `names` of `cubin`, loaded on `device` (the current one; cached per process)."""
    module = cupy_module().cuda.function.Module()
    module.load(cubin)
    return _loaded(module, names, checked)


def _to_device(x: Any, param: HostParam) -> Any:
    """`x` as a cupy array (zero-copy), or TCError if it is not on a GPU."""
    cupy = cupy_module()
    if isinstance(x, np.ndarray):
        raise TCError(
            f"cuda backend: argument '{param.name}' is a numpy array; pass a GPU array "
            "(cupy, torch CUDA tensor or DLPack producer)"
        )
    try:
        if hasattr(x, "__cuda_array_interface__"):
            return cupy.asarray(x)
        if hasattr(x, "__dlpack__"):
            return cupy.from_dlpack(x)
    except Exception as e:  # noqa: BLE001  (device mismatch, CPU tensors, unsupported dtypes)
        raise TCError(
            f"cuda backend: argument '{param.name}' is not usable on the GPU: {e}"
        ) from None
    raise TCError(
        f"cuda backend: argument '{param.name}' must be a GPU array, got {type(x).__name__}"
    )


def is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def _buffer_converter(param: HostParam, device: int) -> Callable[[Any], Any]:
    cupy = cupy_module()
    ndarray = cupy.ndarray
    shape, dtype = param.shape, np.dtype(param.dtype)
    torch_dtype = f"torch.{dtype}"

    def convert(x: Any) -> Any:
        if type(x) is not ndarray and is_torch_tensor(x) and x.is_cuda and x.get_device() == device:
            # A torch tensor is passed by its address: no cupy view per call.
            if x.shape != shape:
                raise ShapeError(f"argument '{param.name}': expected shape {shape}, got {tuple(x.shape)}")
            if str(x.dtype) != torch_dtype:
                raise ShapeError(f"argument '{param.name}': expected dtype {dtype}, got {x.dtype}")
            if not x.is_contiguous():
                raise ShapeError(f"argument '{param.name}' must be C-contiguous")
            return np.uint64(x.data_ptr())
        if type(x) is not ndarray:
            x = _to_device(x, param)
        if x.shape != shape:
            raise ShapeError(f"argument '{param.name}': expected shape {shape}, got {x.shape}")
        if x.dtype != dtype:
            raise ShapeError(f"argument '{param.name}': expected dtype {dtype}, got {x.dtype}")
        if not x.flags.c_contiguous:
            raise ShapeError(f"argument '{param.name}' must be C-contiguous")
        return x

    return convert


def _converts(convert: Callable[[Any], Any], value: Any) -> bool:
    """Whether `convert` takes `value` (a call with it raises the TCError)."""
    try:
        convert(value)
    except TCError:
        return False
    return True


def _address(tensor: Any) -> int:
    """A torch tensor's address, as a kernel argument (cupy passes an int as 64 bits)."""
    return tensor.data_ptr()


def _scalar_converter(param: HostParam) -> Callable[[Any], Any]:
    scalar = np.dtype(param.dtype).type

    def convert(x: Any) -> Any:
        try:
            return scalar(x)
        except (TypeError, ValueError):
            raise TCError(
                f"argument '{param.name}': expected a {param.dtype} scalar, got {type(x).__name__}"
            ) from None

    return convert


def _realigned(args: tuple[Any, ...], aligned: Sequence[tuple[int, int]], stream: Any) -> tuple[Any, ...]:
    """`args` where each GPU array at a position of `aligned` (position,
    bytes) whose address is not a multiple of its bytes (a view at an odd
    offset) is replaced by a copy (fresh allocations are 256-byte aligned),
    made on `stream` (None: cupy's current one) or, for a torch tensor, on
    torch's current stream: the kernels' vector loads need the alignment."""
    fixed: list[Any] | None = None
    cupy = cupy_module()
    for position, size in aligned:
        x = args[position]
        torch_tensor = type(x) is not cupy.ndarray and is_torch_tensor(x)
        address = x.data_ptr() if torch_tensor else x.data.ptr if type(x) is cupy.ndarray else 0
        if address % size:
            fixed = fixed or list(args)
            if torch_tensor:
                fixed[position] = x.clone()
            else:
                with stream or contextlib.nullcontext():
                    fixed[position] = x.copy()
    return args if fixed is None else tuple(fixed)


CALLERS_STREAM: Any = object()
"""`CudaProgram`'s default stream: the caller's current one (`current_stream`)."""

class _LaunchPlan:
    """One launch with everything not depending on the call's arguments prebuilt."""

    def __init__(self, function: Any, launch: KernelLaunch, params: Sequence[HostParam]):
        self.function = function
        self.shared_bytes = launch.shared_bytes
        """Dynamic shared memory, requested at every launch."""
        self.name = launch.kernel_name
        self.block = launch.block
        grid = launch.grid
        self.static_grid = (
            tuple(int(g) for g in grid) if all(isinstance(g, int) for g in grid) else None
        )
        # Fast path: every argument is a host argument passed through as converted.
        direct = all(
            isinstance(a.source, ArgRef) and params[a.source.position].dtype == a.dtype
            for a in launch.args
        )
        positions = [a.source.position for a in launch.args if isinstance(a.source, ArgRef)]
        self.gather: Callable[[list[Any]], tuple[Any, ...]] | None = None
        if direct and len(positions) > 1:
            self.gather = operator.itemgetter(*positions)
        elif direct:
            self.gather = lambda values: tuple(values[p] for p in positions)
        self.launch = launch

    def arguments(
        self, values: list[Any], temps: list[Any], raw: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        if self.gather is not None:
            return self.gather(values)
        return tuple(launch_arguments(self.launch, values, temps, raw))

    def grid_for(self, raw: tuple[Any, ...]) -> tuple[int, ...]:
        if self.static_grid is not None:
            return self.static_grid
        return launch_grid(self.launch, raw)


class CudaProgram:
    """A host program with its kernels compiled; call it with the host arguments.

    The kernels run from a cubin for the current GPU: `cubin` if it was
    compiled for its architecture (`arch`), else one NVRTC compiles now.
    `self.cubin` is that cubin, or None where the driver or NVRTC refused it
    and cupy's RawModule compiled `source` instead.
    """

    def __init__(
        self,
        source: str,
        host: HostProgram,
        options: Sequence[str] = DEFAULT_OPTIONS,
        *,
        cubin: bytes | None = None,
        arch: str | None = None,
    ):
        self.source = source
        self.host = host
        self.options = tuple(options)
        names = tuple(dict.fromkeys(launch.kernel_name for launch in host.launches))
        self.device = device = current_device()
        self.arch = device_architecture(device)
        if cubin is None or arch != self.arch:
            cubin = compile_cubin(source, self.options, self.arch)
        self.cubin: bytes | None = None
        checked = uses_index_checks(source)
        slot: int | None = None
        if cubin is not None:
            try:
                slot, loaded = _cubin_functions(cubin, names, device, checked)
                functions = dict(zip(names, loaded))
                self.cubin = cubin
            except cupy_module().cuda.driver.CUDADriverError as e:  # the driver refuses it
                log.debug("cannot load the cubin for %s (%s); compiling with RawModule", self.arch, e)
        if self.cubin is None:
            try:
                slot, loaded = _functions(source, self.options, names)
                functions = dict(zip(names, loaded))
            except TCError:
                raise
            except Exception as e:  # noqa: BLE001  (cupy's CompileException, driver errors)
                path = write_source(source)
                raise TCError(f"cuda backend: NVRTC failed to compile {path}:\n{e}") from None
        for launch in host.launches:
            if launch.shared_bytes:
                _allow_shared_memory(functions[launch.kernel_name], launch)
        self._converters = [
            _buffer_converter(p, device) if p.is_buffer else _scalar_converter(p) for p in host.params
        ]
        self._slot = slot
        self._sources = host.index_sources
        self._aligned = host.aligned_params
        self._errors = index_errors(cupy_module()) if slot is not None else None
        if self._errors is not None:
            self._errors.own(slot, host)
        self._plans = [
            _LaunchPlan(functions[launch.kernel_name], launch, host.params)
            for launch in host.launches
        ]
        self._static = (
            [(p.function, p.static_grid, p.block, p.gather, p.shared_bytes) for p in self._plans if 0 not in p.static_grid]
            if not host.temporaries and all(p.static_grid is not None and p.gather is not None for p in self._plans)
            else None
        )
        """The launches prebuilt where nothing in them depends on the call (the common case)."""

    def raw_launches(self, *args: Any) -> list[tuple[Any, tuple[int, ...], tuple[int, int, int], tuple[Any, ...]]]:
        """(kernel, grid, block, kernel arguments) of each launch of a call on
        `args`, temporaries allocated once: what a bare cupy launch of the
        same kernels takes (`tools/bench_host.py` compares against it)."""
        values = [convert(a) for convert, a in zip(self._converters, args)]
        cupy = cupy_module()
        temps = [cupy.empty(t.shape, dtype=t.dtype) for t in self.host.temporaries]
        return [
            (
                functools.partial(plan.function, shared_mem=plan.shared_bytes) if plan.shared_bytes else plan.function,
                plan.grid_for(args), plan.block, plan.arguments(values, temps, args),
            )
            for plan in self._plans
        ]

    def __call__(self, *args: Any, stream: Any = CALLERS_STREAM) -> None:
        """Run every launch in order, asynchronously, on `stream` (a cupy
        stream; by default the caller's current stream: torch's where an
        argument is a torch tensor, else cupy's). An index error that an
        earlier call's kernels reported is raised first."""
        check_pending()
        if len(args) != len(self._converters):
            raise TCError(
                f"{self.host.name}: expected {len(self._converters)} arguments, got {len(args)}"
            )
        stream = current_stream(args, self.device) if stream is CALLERS_STREAM else stream
        if self._aligned:
            args = _realigned(args, self._aligned, stream)
        values = [convert(a) for convert, a in zip(self._converters, args)]
        self._launch(values, args, stream)

    def launcher(
        self,
        allocate: Callable[[], list[Any]],
        stream_of: Callable[[], Any] | None,
        single: bool,
        args: tuple[Any, ...],
        outputs: tuple[Any, ...] | None = None,
        zeroed: Sequence[int] = (),
    ) -> Callable[..., Any] | None:
        """The whole of a call on inputs like `args` (the same types, shapes,
        dtypes and strides, and for torch tensors their contiguity and device:
        the caller's key for this launcher fixes them, `tcir.api._launch_key`):
        `allocate()` makes the outputs, `stream_of()` picks the stream (None:
        cupy's current one); returns the outputs (one, or a tuple). With
        `outputs` (arrays like those of `outputs=`, which the key fixes too),
        the call takes its outputs, `call(args, given)`, and zeroes those of
        `zeroed` (the outputs accumulated into) instead of allocating. What a
        call of a `tcir.Function` does, less its lookups, for the host time of
        small kernels. None where the launches depend on the call."""
        if self._static is None or index_errors_module.SYNC_EACH_CALL:
            return None
        ndarray = cupy_module().ndarray
        # Arguments the key makes contiguous cupy arrays pass as they are,
        # like the cupy outputs made here; the others (torch tensors, their
        # outputs too) are converted per call.
        like = [*args, *outputs] if outputs is not None else args
        # Where every argument is a torch tensor that its checks pass here
        # (the launcher is made before the call converts them), the key
        # fixes each one's shape, dtype, contiguity and device: its address
        # is all a later call needs (the checks cost a µs an argument).
        tensors = all(is_torch_tensor(a) for a in like) and all(
            _converts(convert, a) for convert, a in zip(self._converters, like)
        )
        converters = [
            None if type(a) is ndarray and a.flags.c_contiguous else _address if tensors else convert
            for convert, a in zip(self._converters, like)
        ]
        if outputs is None and any(is_torch_tensor(a) for a in args):  # the outputs are torch tensors too
            converters += [_address] * (len(self._converters) - len(args))
        direct = all(c is None for c in converters)
        errors, slot, sources, static, aligned = self._errors, self._slot, self._sources, self._static, self._aligned

        def call(args: tuple[Any, ...], given: tuple[Any, ...] = ()) -> Any:
            check_pending()
            stream = stream_of() if stream_of is not None else None
            if aligned:
                args = _realigned(args, aligned, stream)
            if given:
                for k in zeroed:  # on the current stream (torch's, with torch tensors)
                    given[k].zero_() if is_torch_tensor(given[k]) else given[k].fill(0)
                outputs = given
            else:
                outputs = allocate()
            values = [*args, *outputs]
            if not direct:  # convert what needs it; the rest passes as it is
                values[: len(converters)] = [a if c is None else c(a) for c, a in zip(converters, values)]
            if errors is not None:  # where an error's value is looked for
                errors.last[slot] = {k: args[k] for k in sources}  # type: ignore[index]
            try:
                for function, grid, block, gather, shared in static:
                    function(grid, block, gather(values), shared, stream)  # positional: keywords cost a µs
            except Exception as e:  # noqa: BLE001  (cupy's CUDADriverError and friends)
                self._launch_failed(function, grid, block, e)
            return outputs[0] if single else tuple(outputs)

        return call

    def _launch_failed(self, function: Any, grid: tuple[int, ...], block: tuple[int, ...], error: Exception) -> None:
        name = next(p.name for p in self._plans if p.function is function)
        path = write_source(self.source)
        raise TCError(
            f"cuda backend: launching '{name}' (grid {grid}, block {block}) failed: {error}; source: {path}"
        ) from None

    def _launch(self, values: list[Any], args: tuple[Any, ...], stream: Any) -> None:
        """Launch every kernel on `stream` with the converted `values` of
        `args`; with `TCIR_SYNC=1`, wait and raise what they reported."""
        if self._errors is not None:  # where an error's value is looked for
            self._errors.last[self._slot] = {k: args[k] for k in self._sources}  # type: ignore[index]
        if self._static is not None:  # every grid fixed, every argument a host argument
            for function, grid, block, gather, shared in self._static:
                self._launch_one(function, grid, block, gather(values), shared, stream)
        else:
            temps = []
            if self.host.temporaries:
                with stream or contextlib.nullcontext():  # from the pool of the stream that uses them
                    cupy = cupy_module()
                    temps = [cupy.empty(t.shape, dtype=t.dtype) for t in self.host.temporaries]
            for plan in self._plans:
                grid = plan.grid_for(args)
                if 0 not in grid:
                    self._launch_one(
                        plan.function, grid, plan.block, plan.arguments(values, temps, args), plan.shared_bytes, stream
                    )
        if index_errors_module.SYNC_EACH_CALL:
            (stream or cupy_module().cuda.get_current_stream()).synchronize()
            check_pending()

    def _launch_one(
        self, function: Any, grid: tuple[int, ...], block: tuple[int, ...], values: Any, shared: int, stream: Any
    ) -> None:
        try:  # stream None: cupy's current one
            function(grid, block, values, shared, stream)
        except Exception as e:  # noqa: BLE001  (cupy's CUDADriverError and friends)
            self._launch_failed(function, grid, block, e)


def _allow_shared_memory(function: Any, launch: KernelLaunch) -> None:
    """Let `function` (a cupy `Function`) use the dynamic shared memory `launch` requests."""
    driver = cupy_module().cuda.driver
    try:
        driver.funcSetAttribute(
            function.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, launch.shared_bytes
        )
    except driver.CUDADriverError as e:  # more than the GPU has
        raise TCError(
            f"cuda backend: kernel '{launch.kernel_name}' needs {launch.shared_bytes} bytes of shared "
            f"memory, more than this GPU allows a block ({e})"
        ) from None


_external_streams: dict[tuple[int, int], Any] = {}


def current_stream(args: Sequence[Any], device: int) -> Any:
    """torch's current stream of `device` as a cupy stream, where an argument
    is a torch tensor; else None (cupy's current stream)."""
    if not any(is_torch_tensor(a) for a in args):
        return None
    return torch_stream(device)


def torch_stream(device: int) -> Any:
    """torch's current stream of `device`, as a cupy stream (made once per stream)."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # an int: no Stream object per call
    pointer = raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream
    stream = _external_streams.get((pointer, device))
    if stream is None:
        stream = _external_streams[pointer, device] = cupy_module().cuda.ExternalStream(pointer, device)
    return stream


def synchronize() -> None:
    """Wait for every kernel on the current GPU, then raise the index errors
    they reported (`tcir.synchronize()`)."""
    if cuda_available():
        cupy_module().cuda.runtime.deviceSynchronize()
        check_pending()


def compile_module(
    module: Any, func_name: str | None = None, options: Sequence[str] = DEFAULT_OPTIONS
) -> CudaProgram:
    """Print the kernels of a gpu-level `ModuleOp`, compile them, plan the launches."""
    from tcir.backends.cuda.launch import extract_host_program
    from tcir.backends.cuda.printer import print_cuda

    return CudaProgram(print_cuda(module), extract_host_program(module, func_name), options)
