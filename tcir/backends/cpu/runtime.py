"""Calling JIT-compiled loop-level functions on numpy arrays through ctypes.

A `func.func` of the loop level takes memrefs (passed as bare pointers to
C-contiguous numpy data) and scalars (passed by value) and returns nothing;
outputs are memrefs written in place.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, SSAValue

from tcir.errors import ShapeError, TCError

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


@dataclass(frozen=True)
class BufferParameter:
    """A memref parameter: a C-contiguous numpy array of `shape` and `dtype`."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    written: bool
    """Whether the function stores into it (it then may not overlap others)."""

    def check(self, value: object) -> np.ndarray[Any, Any]:
        """`value` if it is a matching array, else a `TCError` naming the parameter."""
        if not isinstance(value, np.ndarray):
            raise ShapeError(
                f"argument {self.name}: expected a numpy array, got {type(value).__name__}"
            )
        if value.shape != self.shape:
            raise ShapeError(
                f"argument {self.name}: expected shape {self.shape}, got {value.shape}"
            )
        if not _compatible_dtype(value.dtype, self.dtype):
            raise ShapeError(
                f"argument {self.name}: expected dtype {self.dtype}, got {value.dtype}"
            )
        if not value.flags.c_contiguous:
            raise ShapeError(f"argument {self.name}: array must be C-contiguous")
        if self.written and not value.flags.writeable:
            raise ShapeError(f"argument {self.name}: output array is read-only")
        return value


def _compatible_dtype(actual: np.dtype[Any], expected: np.dtype[Any]) -> bool:
    """Same dtype; integer buffers also accept the unsigned type of their width
    (signless integers take their signedness from the ops)."""
    if actual == expected:
        return True
    return (
        expected.kind == "i" and actual.kind == "u" and actual.itemsize == expected.itemsize
    )


@dataclass(frozen=True)
class ScalarParameter:
    """A scalar parameter, passed by value as `ctype`."""

    name: str
    ctype: type[ctypes._SimpleCData[Any]]

    def check(self, value: object) -> ctypes._SimpleCData[Any]:
        """`value` as a ctypes scalar, else a `TCError` naming the parameter."""
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raise ShapeError(f"argument {self.name}: expected a scalar, got an array")
        try:
            return self.ctype(value.item() if isinstance(value, np.generic | np.ndarray) else value)  # pyright: ignore[reportCallIssue]
        except TypeError:
            raise ShapeError(
                f"argument {self.name}: expected a {self.ctype.__name__[2:]} scalar, "
                f"got {type(value).__name__}"
            ) from None


Parameter = BufferParameter | ScalarParameter


@dataclass(frozen=True)
class FunctionSignature:
    """The parameters of a loop-level function, recorded before lowering."""

    name: str
    parameters: tuple[Parameter, ...]

    @staticmethod
    def of(op: func.FuncOp) -> FunctionSignature:
        """The signature of `op`, which must return nothing."""
        if op.function_type.outputs.data:
            raise TCError(f"cpu backend: function @{op.sym_name.data} must not return values")
        written = _stored_buffers(op)
        parameters: list[Parameter] = []
        for index, arg in enumerate(op.args):
            name = f"#{index}" + (f" (%{arg.name_hint})" if arg.name_hint else "")
            typ = arg.type
            if isinstance(typ, MemRefType):
                parameters.append(
                    BufferParameter(
                        name,
                        typ.get_shape(),
                        _dtype(typ.element_type),
                        arg in written,
                    )
                )
            else:
                parameters.append(ScalarParameter(name, _scalar_ctype(typ)))
        return FunctionSignature(op.sym_name.data, tuple(parameters))

    def ctypes_prototype(self) -> type[ctypes._CFuncPtr]:
        """The C prototype: `void f(void *, ..., scalar, ...)`."""
        argtypes = [
            p.ctype if isinstance(p, ScalarParameter) else ctypes.c_void_p
            for p in self.parameters
        ]
        return ctypes.CFUNCTYPE(None, *argtypes)


def _stored_buffers(op: func.FuncOp) -> set[SSAValue]:
    return {store.memref for store in op.walk() if isinstance(store, memref.StoreOp)}


def _check_no_overlap(
    signature: FunctionSignature, arrays: list[tuple[BufferParameter, np.ndarray[Any, Any]]]
) -> None:
    """Arguments are `noalias`: an array the function writes must not share
    memory with another array argument."""
    for i, (first, a) in enumerate(arrays):
        for second, b in arrays[i + 1 :]:
            if (first.written or second.written) and np.may_share_memory(a, b):
                raise TCError(
                    f"@{signature.name}: arguments {first.name} and {second.name} "
                    "overlap, but one of them is written"
                )


def make_callable(
    signature: FunctionSignature, address: int, keepalive: object
) -> Callable[..., None]:
    """A Python function calling the compiled code at `address` with numpy
    arrays and Python scalars in `signature`'s order; it holds `keepalive`
    (the JIT engine owning the code) for as long as it lives."""
    c_function = signature.ctypes_prototype()(address)
    parameters = signature.parameters

    def call(*args: object) -> None:
        if len(args) != len(parameters):
            raise ShapeError(
                f"@{signature.name} takes {len(parameters)} arguments, got {len(args)}"
            )
        c_args: list[object] = []
        arrays: list[tuple[BufferParameter, np.ndarray[Any, Any]]] = []
        for parameter, value in zip(parameters, args):
            if isinstance(parameter, BufferParameter):
                array = parameter.check(value)
                arrays.append((parameter, array))
                c_args.append(array.ctypes.data)
            else:
                c_args.append(parameter.check(value))
        _check_no_overlap(signature, arrays)
        c_function(*c_args)

    call.__name__ = signature.name
    call.__doc__ = f"Run the JIT-compiled @{signature.name} (arguments: " + ", ".join(
        p.name for p in parameters
    ) + ")."
    setattr(call, "engine", keepalive)
    return call
