"""What the host function of a gpu-level module does, as plain data.

`tcir.backends.cuda.launch.extract_host_program` reads a host `func.func`
into a `HostProgram`: its parameters, the temporaries to allocate per call,
and one `KernelLaunch` per `gpu.launch_func` in order. Grid sizes and scalar
kernel arguments are `HostValue`s: constants, host arguments (`ArgRef`) or
integer expressions of them (`HostExpr`), evaluated per call with `evaluate`.

This module imports no xDSL: the CUDA runtime runs host programs loaded from
the compilation cache without loading the compiler.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from tcir.errors import TCError


@dataclass(frozen=True)
class ArgRef:
    """The host function's argument at `position`."""

    position: int


@dataclass(frozen=True)
class HostExpr:
    """An integer op (`HOST_OPS` key) applied to host values."""

    op: str
    operands: tuple[HostValue, ...]


HostValue = int | float | bool | ArgRef | HostExpr


@dataclass(frozen=True)
class HostAlloc:
    """A temporary buffer the runtime allocates for each call."""

    index: int
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class HostParam:
    """A parameter of the host function: a buffer (with `shape`) or a scalar."""

    name: str
    dtype: str
    shape: tuple[int, ...] | None

    @property
    def is_buffer(self) -> bool:
        return self.shape is not None


@dataclass(frozen=True)
class KernelArg:
    """One argument of a launch: a buffer (`ArgRef`/`HostAlloc`) or a scalar of `dtype`."""

    source: HostValue | HostAlloc
    dtype: str
    is_buffer: bool
    alignment: int = 0
    """Bytes a buffer's address must be a multiple of (the kernel's vector
    loads of it need it); 0 where any address does."""
    shape: tuple[int, ...] | None = None
    """The shape the kernel views a buffer with where it is not the
    buffer's own (runs of its dimensions collapsed into one)."""


@dataclass(frozen=True)
class KernelLaunch:
    """One `gpu.launch_func`: kernel (C symbol), grid and block sizes,
    arguments, and the dynamic shared memory it requests (bytes)."""

    kernel_name: str
    grid: tuple[HostValue, HostValue, HostValue]
    block: tuple[int, int, int]
    args: tuple[KernelArg, ...]
    shared_bytes: int = 0


@dataclass(frozen=True)
class IndexCheck:
    """A `check.index` of the kernels: a subscript of dimension `dim` of array
    `tensor` (of size `extent`) computed from index tensor `source`."""

    tensor: str
    dim: int
    extent: int
    source: str


@dataclass(frozen=True)
class HostProgram:
    """The host function: parameters, per-call temporaries, launches in order,
    and the kernels' index checks (by `check.index` id)."""

    name: str
    params: tuple[HostParam, ...]
    temporaries: tuple[HostAlloc, ...]
    launches: tuple[KernelLaunch, ...]
    index_checks: tuple[IndexCheck, ...] = ()

    def index_error(self, check: int, subscript: int, value: int, args: Mapping[int, Any]) -> TCError:
        """The error a kernel reported: check `check` found `subscript`, from
        `value` of the index tensor, out of range. `args` holds host arguments
        by position, where the value's position is looked for (the index
        tensor of the call that reported, if at hand: a best effort)."""
        c = self.index_checks[check]
        where = ""
        position = self.position(c.source)
        source = None if position is None else args.get(position)
        if source is not None:
            found = np.argwhere(to_numpy(source) == value)
            if len(found):
                where = f" at {tuple(int(i) for i in found[0])}"
        return TCError(
            f"{self.name}: index tensor '{c.source}' holds {value}{where}, which gives subscript "
            f"{subscript} for dimension {c.dim} of '{c.tensor}' (size {c.extent})"
        )

    @property
    def index_sources(self) -> tuple[int, ...]:
        """Positions of the parameters that index tensors the kernels check."""
        positions = {self.position(c.source) for c in self.index_checks}
        return tuple(sorted(p for p in positions if p is not None))

    @property
    def aligned_params(self) -> tuple[tuple[int, int], ...]:
        """(position, bytes) of the parameters some kernel needs aligned."""
        need: dict[int, int] = {}
        for launch in self.launches:
            for arg in launch.args:
                if arg.alignment and isinstance(arg.source, ArgRef):
                    need[arg.source.position] = max(need.get(arg.source.position, 0), arg.alignment)
        return tuple(sorted(need.items()))

    def position(self, name: str) -> int | None:
        """The position of parameter `name` (None if there is none)."""
        return next((k for k, p in enumerate(self.params) if p.name == name), None)

    def empty_dimension_error(self, args: Sequence[Any]) -> TCError | None:
        """The error of a call whose index tensor, not empty, indexes an empty
        dimension (every value is out of range, and the kernels' fallback
        element 0 does not exist): None for other calls. `args` are the
        call's arguments (the inputs come first)."""
        for c in self.index_checks:
            position = self.position(c.source)
            if c.extent == 0 and position is not None and int(np.prod(args[position].shape)) > 0:
                return TCError(
                    f"{self.name}: index tensor '{c.source}' indexes dimension {c.dim} of '{c.tensor}', which is empty"
                )
        return None


def to_numpy(value: Any) -> Any:
    """An array as a numpy array (copied from a GPU), or the scalar it is."""
    if not hasattr(value, "shape"):
        return value
    if hasattr(value, "__cuda_array_interface__") and hasattr(value, "get"):
        return value.get()  # cupy
    if type(value).__module__.startswith("torch"):  # a view of a CPU tensor's memory
        tensor = value.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":  # numpy has no bfloat16: ml_dtypes' is the same bits
            import torch

            return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return tensor.numpy()
    return np.asarray(value)


def _floordiv(a: int, b: int) -> int:
    return a // b


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _truncrem(a: int, b: int) -> int:
    return a - b * _truncdiv(a, b)


#: Integer ops the host function may compute sizes with (Python semantics = arith's on index).
HOST_OPS: dict[str, Callable[..., int]] = {
    "addi": operator.add,
    "subi": operator.sub,
    "muli": operator.mul,
    "divsi": _truncdiv,
    "remsi": _truncrem,
    "floordivsi": _floordiv,
    "ceildivsi": _ceildiv,
    "minsi": min,
    "maxsi": max,
    "index_cast": lambda a: a,
}


def evaluate(value: HostValue, args: Sequence[object]) -> int | float | bool:
    """The value of `value` for the host arguments `args`."""
    if isinstance(value, ArgRef):
        return args[value.position]  # type: ignore[return-value]
    if isinstance(value, HostExpr):
        operands = (int(evaluate(v, args)) for v in value.operands)
        return HOST_OPS[value.op](*operands)
    return value


def launch_grid(launch: KernelLaunch, args: Sequence[object]) -> tuple[int, int, int]:
    """The grid size of `launch` for the host arguments `args`."""
    x, y, z = (int(evaluate(g, args)) for g in launch.grid)
    return (x, y, z)


def launch_arguments(
    launch: KernelLaunch, buffers: Sequence[Any], temporaries: Sequence[Any], args: Sequence[object]
) -> list[Any]:
    """The arguments of `launch`: host buffers (`buffers`, by host argument
    position, as the runtime converted them), `temporaries` (by index), and
    scalars computed from the host arguments `args`, as numpy scalars."""
    values: list[Any] = []
    for arg in launch.args:
        source = arg.source
        if isinstance(source, HostAlloc):
            values.append(temporaries[source.index])
        elif arg.is_buffer:
            assert isinstance(source, ArgRef)
            values.append(buffers[source.position])
        else:
            values.append(np.dtype(arg.dtype).type(evaluate(source, args)))
    return values
