"""Calling compiled loop-level functions on numpy arrays through ctypes.

A `func.func` of the loop level takes memrefs (passed as bare pointers to
C-contiguous numpy data) and scalars (passed by value) and returns nothing;
outputs are memrefs written in place. `FunctionSignature` records that
convention (`tcir.backends.cpu.jit.function_signature` reads it off the IR),
`make_callable` wraps machine code at an address with it.

This module imports neither xDSL nor llvmlite: a compilation cache hit loads
a shared library with it (`load_shared_library`) and nothing else.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcir.errors import ShapeError, TCError


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

    def ctypes_prototype(self) -> type[ctypes._CFuncPtr]:
        """The C prototype: `void f(void *, ..., scalar, ...)`."""
        argtypes = [
            p.ctype if isinstance(p, ScalarParameter) else ctypes.c_void_p
            for p in self.parameters
        ]
        return ctypes.CFUNCTYPE(None, *argtypes)


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
    (the JIT engine or shared library owning the code) for as long as it lives."""
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
    call.__dict__["keepalive"] = keepalive
    return call


def load_shared_library(library: bytes, signature: FunctionSignature) -> Callable[..., None]:
    """The callable of `signature`'s function in `library`, the bytes of a
    shared library; OSError if this system cannot load it."""
    # The dynamic loader needs a file, and it returns the library already
    # loaded from a path when given that path again: the name holds the
    # content's hash, so that a reused name means the same code.
    digest = hashlib.sha256(library).hexdigest()[:32]
    descriptor, path = tempfile.mkstemp(prefix=f"tcir-{digest}-", suffix=".so")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(library)
        handle = ctypes.CDLL(path)  # resolves every symbol now (RTLD_NOW), or raises
    finally:
        os.unlink(path)  # the mapping outlives the file
    try:
        entry = getattr(handle, signature.name)
    except AttributeError:
        raise OSError(f"shared library has no function {signature.name}") from None
    address = ctypes.cast(entry, ctypes.c_void_p).value
    assert address is not None
    return make_callable(signature, address, handle)
