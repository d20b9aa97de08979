"""Compile CUDA C with NVRTC through cupy and run a module's host program.

    program = compile_module(module)        # print_cuda + NVRTC + launch plans
    program(A, B, C)                        # host function's arguments, in order

Buffers may be cupy arrays, torch CUDA tensors or any DLPack /
`__cuda_array_interface__` producer on the current device; they must be
C-contiguous with the memref's shape and dtype (outputs are written in place).
Scalars are Python or numpy numbers. cupy is imported on first use, so this
module imports without it. NVRTC and launch errors raise `TCError` naming a
copy of the generated source written to a temporary directory.
"""

from __future__ import annotations

import functools
import operator
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcir.backends.cuda.launch import (
    ArgRef,
    HostAlloc,
    HostParam,
    HostProgram,
    KernelArg,
    KernelLaunch,
    evaluate,
)
from tcir.errors import ShapeError, TCError

#: NVRTC options by default: no fast math, so results follow IEEE as on the CPU.
DEFAULT_OPTIONS: tuple[str, ...] = ("-std=c++17",)


def cupy_module() -> Any:
    try:
        import cupy
    except ImportError:
        raise TCError("cuda backend: cupy is not installed (pip install 'tcir[cuda]')") from None
    return cupy


def cuda_available() -> bool:
    """Whether cupy is installed and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, no driver, no device: all mean "no"
        return False


def write_source(source: str) -> str:
    """Write `source` to a new temporary directory; returns the file's path."""
    path = os.path.join(tempfile.mkdtemp(prefix="tcir-cuda-"), "kernels.cu")
    with open(path, "w") as f:
        f.write(source)
    return path


@functools.lru_cache(maxsize=128)
def _functions(source: str, options: tuple[str, ...], names: tuple[str, ...]) -> tuple[Any, ...]:
    """NVRTC-compiled kernels `names` of `source` (cached per process)."""
    cupy = cupy_module()
    module = cupy.RawModule(code=source, options=options, backend="nvrtc")
    return tuple(module.get_function(name) for name in names)


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
    except Exception as e:  # device mismatch, CPU tensors, unsupported dtypes
        raise TCError(
            f"cuda backend: argument '{param.name}' is not usable on the GPU: {e}"
        ) from None
    raise TCError(
        f"cuda backend: argument '{param.name}' must be a GPU array, got {type(x).__name__}"
    )


def _buffer_converter(param: HostParam) -> Callable[[Any], Any]:
    cupy = cupy_module()
    ndarray = cupy.ndarray
    shape, dtype = param.shape, np.dtype(param.dtype)

    def convert(x: Any) -> Any:
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


class _LaunchPlan:
    """One launch with everything not depending on the call's arguments prebuilt."""

    def __init__(self, function: Any, launch: KernelLaunch, params: Sequence[HostParam]):
        self.function = function
        self.name = launch.kernel_name
        self.block = launch.block
        grid = launch.grid
        self.static_grid = (
            tuple(int(g) for g in grid) if all(isinstance(g, int) for g in grid) else None
        )
        self.grid = grid
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
        self.args = launch.args

    def arguments(
        self, values: list[Any], temps: list[Any], raw: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        if self.gather is not None:
            return self.gather(values)
        return tuple(self._argument(a, values, temps, raw) for a in self.args)

    @staticmethod
    def _argument(arg: KernelArg, values: list[Any], temps: list[Any], raw: tuple[Any, ...]) -> Any:
        source = arg.source
        if isinstance(source, HostAlloc):
            return temps[source.index]
        if arg.is_buffer:
            assert isinstance(source, ArgRef)
            return values[source.position]
        return np.dtype(arg.dtype).type(evaluate(source, raw))

    def grid_for(self, raw: tuple[Any, ...]) -> tuple[int, ...]:
        if self.static_grid is not None:
            return self.static_grid
        return tuple(int(evaluate(g, raw)) for g in self.grid)


class CudaProgram:
    """A host program with its kernels compiled; call it with the host arguments."""

    def __init__(self, source: str, host: HostProgram, options: Sequence[str] = DEFAULT_OPTIONS):
        self.source = source
        self.host = host
        self.options = tuple(options)
        names = tuple(dict.fromkeys(launch.kernel_name for launch in host.launches))
        try:
            functions = dict(zip(names, _functions(source, self.options, names)))
        except TCError:
            raise
        except Exception as e:  # cupy's CompileException, driver errors
            path = write_source(source)
            raise TCError(f"cuda backend: NVRTC failed to compile {path}:\n{e}") from None
        self._converters = [
            _buffer_converter(p) if p.is_buffer else _scalar_converter(p) for p in host.params
        ]
        self._plans = [
            _LaunchPlan(functions[launch.kernel_name], launch, host.params)
            for launch in host.launches
        ]

    def __call__(self, *args: Any) -> None:
        """Run every launch in order on the current stream (asynchronously)."""
        if len(args) != len(self._converters):
            raise TCError(
                f"{self.host.name}: expected {len(self._converters)} arguments, got {len(args)}"
            )
        values = [convert(a) for convert, a in zip(self._converters, args)]
        temps = []
        if self.host.temporaries:
            cupy = cupy_module()
            temps = [cupy.empty(t.shape, dtype=t.dtype) for t in self.host.temporaries]
        for plan in self._plans:
            grid = plan.grid_for(args)
            if 0 in grid:
                continue
            try:
                plan.function(grid, plan.block, plan.arguments(values, temps, args))
            except Exception as e:  # cupy's CUDADriverError and friends
                path = write_source(self.source)
                raise TCError(
                    f"cuda backend: launching '{plan.name}' (grid {grid}, block {plan.block}) "
                    f"failed: {e}; source: {path}"
                ) from None


def compile_module(
    module: Any, func_name: str | None = None, options: Sequence[str] = DEFAULT_OPTIONS
) -> CudaProgram:
    """Print the kernels of a gpu-level `ModuleOp`, compile them, plan the launches."""
    from tcir.backends.cuda.launch import extract_host_program
    from tcir.backends.cuda.printer import print_cuda

    return CudaProgram(print_cuda(module), extract_host_program(module, func_name), options)
