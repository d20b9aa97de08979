"""Scalar and memref types of the gpu level, as CUDA C and numpy see them.

Index values are 64-bit (`long long`) here; the kernel printer narrows them
to `int` where a kernel's arrays and constants allow (see `printer`). Signless integers are signed in C;
ops that need unsigned semantics cast (`unsigned_c_type`). `i1` is `bool`.
f16 is `__half` from `cuda_fp16.h`, bf16 `__nv_bfloat16` from `cuda_bf16.h`
(`HALF_TYPES`: the functions that convert them); other types are unsupported.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
)
from xdsl.dialects import memref
from xdsl.ir import Attribute, Operation, SSAValue

from tcir.dialects.nvgpu import SwizzleLayoutAttr
from tcir.dialects.nvgpu import DeviceAsyncCopyOp
from tcir.errors import TCError

_SIGNED = {8: "signed char", 16: "short", 32: "int", 64: "long long"}
_UNSIGNED = {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}
_FLOATS: dict[type[Attribute], tuple[str, str]] = {
    Float16Type: ("__half", "float16"),
    BFloat16Type: ("__nv_bfloat16", "bfloat16"),
    Float32Type: ("float", "float32"),
    Float64Type: ("double", "float64"),
}

#: Address spaces of `memref.alloca` in kernels: shared (per block), private (per thread).
SHARED_SPACE = 3
PRIVATE_SPACE = 5


def int_width(t: Attribute) -> int | None:
    """The bit width of an integer or index type; None for other types."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    return None


def is_unsigned(t: Attribute) -> bool:
    """Whether values of `t` are unsigned in C (`ui8`...; signless ints are signed)."""
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def c_type(t: Attribute) -> str:
    """The CUDA C spelling of scalar type `t`; unsupported types raise TCError."""
    for cls, (name, _) in _FLOATS.items():
        if isinstance(t, cls):
            return name
    width = int_width(t)
    if width == 1:
        return "bool"
    if width in _SIGNED:
        return (_UNSIGNED if is_unsigned(t) else _SIGNED)[width]
    raise TCError(f"cuda backend: type '{t}' is not supported")


def unsigned_c_type(t: Attribute) -> str:
    """The unsigned C type of integer type `t` of the same width (`bool` for i1)."""
    width = int_width(t)
    if width == 1:
        return "bool"
    if width in _UNSIGNED:
        return _UNSIGNED[width]
    raise TCError(f"cuda backend: type '{t}' is not an integer type")


def numpy_dtype(t: Attribute) -> str:
    """The numpy dtype name of scalar type `t` (`index` is `int64`)."""
    for cls, (_, name) in _FLOATS.items():
        if isinstance(t, cls):
            return name
    width = int_width(t)
    if width == 1:
        return "bool"
    if width in _SIGNED:
        return f"{'u' if is_unsigned(t) else ''}int{width}"
    raise TCError(f"cuda backend: type '{t}' has no numpy dtype")


def is_float(t: Attribute) -> bool:
    """Whether `t` is one of the supported float types."""
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type))


@dataclass(frozen=True)
class HalfType:
    """A 16-bit float's CUDA header and conversion functions."""

    header: str
    to_float: str
    from_float: str
    from_double: str
    as_short: str
    from_short: str


HALF_TYPES = {
    "__half": HalfType(
        "cuda_fp16.h", "__half2float", "__float2half", "__double2half", "__half_as_short", "__short_as_half"
    ),
    "__nv_bfloat16": HalfType(
        "cuda_bf16.h", "__bfloat162float", "__float2bfloat16", "__double2bfloat16",
        "__bfloat16_as_short", "__short_as_bfloat16",
    ),
}
"""By C type."""


def memory_space(t: MemRefType[Attribute]) -> int:
    """The integer address space of a memref type (0 when absent)."""
    space = t.memory_space
    if isinstance(space, NoneAttr):
        return 0
    if isinstance(space, IntegerAttr):
        return space.value.data
    raise TCError(f"cuda backend: memory space '{space}' of '{t}' is not supported")


def static_shape(t: MemRefType[Attribute]) -> tuple[int, ...]:
    """The sizes of a memref with a static shape and identity layout (or the
    128-byte swizzle, which `access` prints); else TCError."""
    shape = tuple(t.get_shape())
    if any(size < 0 for size in shape):
        raise TCError(
            f"cuda backend: memref type '{t}' has a dynamic shape; specialize sizes first"
        )
    if not isinstance(t.layout, NoneAttr | SwizzleLayoutAttr):
        raise TCError(f"cuda backend: memref type '{t}' has a non-identity layout")
    return shape


ATOMIC_KINDS = {
    ("+=", True): 0, ("+=", False): 1, ("max=", True): 3, ("max=", False): 4, ("min=", True): 6, ("min=", False): 7
}
"""`memref.atomic_rmw` kinds (MLIR's `AtomicRMWKind`: `addf`, `addi`,
`maximumf`, `maxs`, `minimumf`, `mins`) of an atomic update, by its TC
update and whether its element is a float: the kinds the backends run
(`poly-parallel-reduction` makes no other)."""
ATOMIC_EXTREMUM = {kind: update.removesuffix("=") for (update, _), kind in ATOMIC_KINDS.items() if update != "+="}
"""The maximum and minimum kinds, by the reduction they combine."""


def written_memrefs(kernel: Operation) -> set[SSAValue]:
    """The memrefs `kernel` writes: stored to, updated atomically or copied to."""
    return {
        op.dst if isinstance(op, DeviceAsyncCopyOp) else op.memref
        for op in kernel.walk()
        if isinstance(op, memref.StoreOp | memref.AtomicRMWOp | DeviceAsyncCopyOp)
    }
