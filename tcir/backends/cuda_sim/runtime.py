"""Run a gpu-level module's host program on the simulated GPU.

    program = SimProgram(module, extract_host_program(module), seed=0)
    program(A, B, C)      # numpy arrays, the host function's arguments in order

The launches, their grid and block sizes and their arguments are the
`HostProgram` that the CUDA runtime runs (`extract_host_program`); the
kernels are the module's `gpu.func`s, translated for each launch
configuration (`translate`). Temporaries, and the buffers a caller marks
`undefined` (outputs allocated uninitialized), start without defined values:
reading an element of one that no kernel wrote is a fault, as in shared
memory (CUDA's `compute-sanitizer --tool initcheck` finds the same).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import numpy as np
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp

from tcir.backends.cuda.launch import kernels
from tcir.backends.cuda_sim.launch import Launch
from tcir.backends.cuda_sim.memory import GLOBAL, Buffer
from tcir.backends.cuda_sim.translate import KernelCode, translate_kernel
from tcir.errors import ShapeError, TCError
from tcir.runtime.host_program import (
    HostParam,
    HostProgram,
    KernelLaunch,
    launch_arguments,
    launch_grid,
)


def default_seed() -> int:
    """The seed of the block order: `$TCIR_SIM_SEED`, else 0."""
    text = os.environ.get("TCIR_SIM_SEED", "0")
    try:
        return int(text)
    except ValueError:
        raise TCError(f"cuda-sim: TCIR_SIM_SEED must be an integer, got '{text}'") from None


def _buffer(x: Any, param: HostParam) -> np.ndarray:
    """A host argument as the C-contiguous numpy array the kernels write into."""
    if not isinstance(x, np.ndarray):
        raise TCError(
            f"cuda-sim backend: argument '{param.name}' must be a numpy array, got {type(x).__name__}"
        )
    if x.shape != param.shape:
        raise ShapeError(f"argument '{param.name}': expected shape {param.shape}, got {x.shape}")
    if x.dtype != np.dtype(param.dtype):
        raise ShapeError(f"argument '{param.name}': expected dtype {param.dtype}, got {x.dtype}")
    if not x.flags.c_contiguous:
        raise ShapeError(f"argument '{param.name}' must be C-contiguous")
    return x


def _scalar(x: Any, dtype: str, name: str) -> Any:
    try:
        value = np.asarray(x).astype(dtype)[()]
    except (TypeError, ValueError):
        raise TCError(f"argument '{name}': expected a {dtype} scalar, got {type(x).__name__}") from None
    return int(value) if dtype == "int64" and isinstance(x, int) else value


class SimProgram:
    """A host program whose kernels run on the simulated GPU; call it with
    the host arguments (numpy arrays and scalars)."""

    def __init__(self, module: ModuleOp, host: HostProgram, seed: int | None = None):
        self.host = host
        self.seed = default_seed() if seed is None else seed
        self.kernels: dict[str, gpu.FuncOp] = {k.sym_name.data: k for k in kernels(module)}
        missing = {launch.kernel_name for launch in host.launches} - set(self.kernels)
        if missing:
            raise TCError(f"cuda-sim: no kernel named '{sorted(missing)[0]}' in the module")
        self._codes: dict[tuple[str, tuple[int, ...], tuple[int, ...]], KernelCode] = {}

    def code(self, launch: KernelLaunch, grid: tuple[int, int, int]) -> KernelCode:
        """The kernel of `launch` translated for its sizes (once per configuration)."""
        key = (launch.kernel_name, launch.block, grid)
        if key not in self._codes:
            self._codes[key] = translate_kernel(self.kernels[launch.kernel_name], launch.block, grid)
        return self._codes[key]

    def __call__(self, *args: Any, undefined: Collection[int] = ()) -> None:
        """Run every launch in order, each on the simulated GPU. The buffers at
        the positions `undefined` hold no defined values yet (outputs allocated
        uninitialized): a kernel reading an element of them, or of a
        temporary, before some kernel wrote it is a fault."""
        params = self.host.params
        if len(args) != len(params):
            raise TCError(f"{self.host.name}: expected {len(params)} arguments, got {len(args)}")
        values = [
            _buffer(a, p) if p.is_buffer else _scalar(a, p.dtype, p.name) for a, p in zip(args, params)
        ]
        temporaries = [np.full(t.shape, _poison(t.dtype), t.dtype) for t in self.host.temporaries]
        # Which elements hold defined values, for the buffers that start without.
        written = {id(t): np.zeros(t.size, bool) for t in temporaries}
        written.update({id(values[k]): np.zeros(values[k].size, bool) for k in undefined})
        rng = np.random.default_rng(self.seed)
        for launch in self.host.launches:
            arguments = launch_arguments(launch, values, temporaries, args)
            grid = launch_grid(launch, args)
            if 0 in grid:
                continue
            code = self.code(launch, grid)
            state = Launch(code.name, code.sites, grid, launch.block, rng)
            kernel_args = [
                Buffer(
                    state, code.arg_names[k], GLOBAL, arg.shape or value.shape, value.reshape(-1),
                    initialized=written.get(id(value)), logged=code.stored[k],
                )  # fmt: skip
                if arg.is_buffer
                else value
                for k, (arg, value) in enumerate(zip(launch.args, arguments))
            ]
            state.run(code.function, kernel_args)
            if state.index_error is not None:
                raise self.host.index_error(*state.index_error, dict(enumerate(args)))


def _poison(dtype: str) -> Any:
    return np.nan if np.dtype(dtype).kind == "f" else -1
