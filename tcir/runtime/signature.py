"""Bind call arguments to a def's signature: check them, find the sizes.

Every mistake is a `ShapeError` naming the argument: a wrong count, rank,
dtype or size, or two arguments disagreeing on a size (`K`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineSymExpr

from tcir.errors import RangeError, ShapeError
from tcir.frontend.ast import CheckedDef, Param, SizeCheck
from tcir.frontend.linear import Atom, Div, Lin, out_of_bounds_sizes
from tcir.ir.affine import substitute

MAX_ELEMENTS = 2**31 - 1
"""The most elements of an output or temporary: kernels index with 32-bit integers."""

NUMPY_DTYPES: dict[str, Any] = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "float32": np.float32,
    "float64": np.float64,
}


def evaluate(expr: AffineExpr, sizes: Sequence[int]) -> int:
    """Value of a size expression (symbols = the def's size parameters)."""
    value = substitute(expr, [], [AffineExpr.constant(v) for v in sizes])
    assert isinstance(value, AffineConstantExpr), value
    return value.value


@dataclass(frozen=True)
class Binding:
    """A call's arguments checked against a def, with every size known."""

    sizes: dict[str, int]
    arrays: tuple[Any, ...]
    """Inputs in order: numpy-like arrays for tensors, Python numbers for scalars."""

    @property
    def key(self) -> tuple[tuple[str, int], ...]:
        return tuple(sorted(self.sizes.items()))

    def shape(self, definition: CheckedDef, param: Param) -> tuple[int, ...]:
        values = [self.sizes[n] for n in definition.size_params]
        return tuple(evaluate(d, values) for d in param.dims)


def _describe(definition: CheckedDef, index: int) -> str:
    return f"argument #{index} '{definition.inputs[index].name}' of {definition.name}"


def with_derived_sizes(definition: CheckedDef, sizes: dict[str, int]) -> dict[str, int]:
    """`sizes` with the derived sizes of `definition` computed (each a min or
    max of sizes before it) once every given size is known."""
    sizes = dict(sizes)
    if all(n in sizes for n in definition.given_size_params):
        for derived in definition.derived_sizes:
            values = [sizes.get(n, 0) for n in definition.size_params]
            candidates = [evaluate(c, values) for c in derived.candidates]
            sizes[derived.name] = min(candidates) if derived.kind == "min" else max(candidates)
    return sizes


def bind(definition: CheckedDef, args: Sequence[Any]) -> Binding:
    """Check `args` (arrays with `.shape`/`.dtype`, or numbers) against `definition`."""
    inputs = definition.inputs
    if len(args) != len(inputs):
        names = ", ".join(p.name for p in inputs)
        raise ShapeError(
            f"{definition.name} takes {len(inputs)} arguments ({names}), got {len(args)}"
        )
    sizes: dict[str, int] = {}
    origin: dict[str, str] = {}
    for index, (param, arg) in enumerate(zip(inputs, args)):
        what = _describe(definition, index)
        if param.is_scalar:
            _check_scalar(param, arg, what)
            if param.name in definition.scalar_size_params:
                sizes[param.name] = int(arg)
                origin[param.name] = f"'{param.name}'"
            continue
        shape = getattr(arg, "shape", None)
        dtype = getattr(arg, "dtype", None)
        if shape is None or dtype is None:
            raise ShapeError(f"{what} must be an array, got {type(arg).__name__}")
        if len(shape) != len(param.dims):
            raise ShapeError(
                f"{what} must have rank {len(param.dims)}, got shape {tuple(shape)}"
            )
        expected = np.dtype(NUMPY_DTYPES[param.dtype])
        if np.dtype(str(dtype).removeprefix("torch.")) != expected:
            raise ShapeError(f"{what} must have dtype {expected}, got {dtype}")
        for axis, (dim, extent) in enumerate(zip(param.dims, shape)):
            if isinstance(dim, AffineSymExpr):
                name = definition.size_params[dim.position]
                here = f"'{param.name}' (dimension {axis})"
                if name in sizes and sizes[name] != extent:
                    raise ShapeError(
                        f"inconsistent size {name}: {origin[name]} has {name}={sizes[name]} "
                        f"but {here} has {name}={extent}"
                    )
                sizes[name] = int(extent)
                origin[name] = here
    sizes = with_derived_sizes(definition, sizes)
    binding = Binding(sizes, tuple(args))
    missing = [n for n in definition.given_size_params if n not in sizes]
    if missing:
        raise ShapeError(f"{definition.name}: cannot determine sizes {', '.join(missing)}")
    values = [sizes[n] for n in definition.size_params]
    for index, (param, arg) in enumerate(zip(inputs, args)):
        if param.is_scalar:
            continue
        expected_shape = tuple(evaluate(d, values) for d in param.dims)
        if tuple(arg.shape) != expected_shape:
            raise ShapeError(
                f"{_describe(definition, index)} must have shape {expected_shape}, "
                f"got {tuple(arg.shape)}"
            )
    for check in definition.size_checks:
        _check_sizes(check, sizes)
    for param in (*definition.outputs, *definition.temporaries):
        shape = binding.shape(definition, param)
        if any(extent < 0 for extent in shape):
            raise ShapeError(
                f"{definition.name}: '{param.name}' would have negative shape {shape} "
                f"for sizes {dict(sizes)}"
            )
        if math.prod(shape) > MAX_ELEMENTS:
            raise ShapeError(
                f"{definition.name}: '{param.name}' would have shape {shape} for sizes "
                f"{dict(sizes)}, more than {MAX_ELEMENTS} elements"
            )
    return binding


def _check_sizes(check: SizeCheck, sizes: dict[str, int]) -> None:
    """A bounds condition that the def's text leaves to the sizes (RangeError if broken)."""
    import islpy as isl

    if check.deferred is not None:
        sub, extent, box, conditions = check.deferred
        found = out_of_bounds_sizes(
            _specialized(sub, sizes),
            _specialized(extent, sizes),
            {index: (_specialized(lo, sizes), _specialized(hi, sizes)) for index, lo, hi in box},
            [_specialized(c, sizes) for c in conditions],
        )
        if found is not None:
            used = {n for lin in (sub, extent, *(b for _, lo, hi in box for b in (lo, hi))) for n in lin.names()}
            shown = ", ".join(f"{name}={sizes[name]}" for name in sorted(used & sizes.keys()))
            raise RangeError(f"{check.message}, with {shown}", check.loc)
        return

    bad = isl.Set(check.bad)
    values = {p: sizes[name] for p, name in check.names.items()}
    values.update((p, lin.value(sizes)) for p, lin in check.derived.items())
    for placeholder, value in values.items():
        position = bad.find_dim_by_name(isl.dim_type.param, placeholder)
        bad = bad.fix_val(isl.dim_type.param, position, isl.Val.int_from_si(bad.get_ctx(), value))
    if not bad.is_empty():
        shown = ", ".join(f"{name}={sizes[name]}" for name in check.names.values())
        raise RangeError(f"{check.message}, with {shown}", check.loc)


def _specialized(lin: Lin, sizes: dict[str, int]) -> Lin:
    """`lin` with the sizes given their values (the indices stay names)."""
    terms = []
    for mono, c in lin.terms:
        kept: list[Atom] = []
        for atom in mono:
            names = set(atom.num.names()) | {atom.den} if isinstance(atom, Div) else {atom}
            if names <= sizes.keys():
                c *= atom.num.value(sizes) // (atom.den if isinstance(atom.den, int) else sizes[atom.den]) \
                    if isinstance(atom, Div) else sizes[atom]
            else:
                kept.append(atom)
        terms.append((tuple(kept), c))
    return Lin.make(terms)


def scalar_value(arg: Any) -> Any:
    """A scalar argument as a Python number: numpy scalars, 0-d arrays and
    0-d tensors (numpy, cupy, torch) give their value; anything else is kept."""
    if isinstance(arg, np.generic) or (getattr(arg, "ndim", None) == 0 and hasattr(arg, "item")):
        return arg.item()
    return arg


def _check_scalar(param: Param, arg: Any, what: str) -> None:
    arg = scalar_value(arg)
    if param.dtype.startswith("float"):
        if not isinstance(arg, int | float) or isinstance(arg, bool):
            raise ShapeError(f"{what} must be a number, got {type(arg).__name__}")
    elif not isinstance(arg, int):
        raise ShapeError(f"{what} must be an integer, got {type(arg).__name__}")
