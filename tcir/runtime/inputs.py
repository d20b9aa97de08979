"""Random inputs for a def at given sizes, and how far results may stray.

Index tensors (tensors used inside subscripts, as in `LUT(I(i,k),j)`) get
values inside every dimension they index, so that the inputs are valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tcir.frontend import ast as A
from tcir.frontend.subscripts import walk
from tcir.runtime.signature import NUMPY_DTYPES, evaluate, with_derived_sizes

TOLERANCE = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-4, "float64": 1e-10}
"""Largest relative error per output dtype (integers must match exactly)."""


def index_bounds(definition: A.CheckedDef) -> dict[str, list[Any]]:
    """For each tensor used in subscripts, the extents (size expressions) it indexes."""
    bounds: dict[str, list[Any]] = {}
    for stmt in definition.stmts:
        target = [stmt.scatter_target] if stmt.scatter_target is not None else []
        for node in [*walk(stmt.rhs), *target]:
            if not isinstance(node, A.Access):
                continue
            dims = definition.tensor(node.tensor).dims
            for sub, dim in zip(node.subscripts, dims):
                for inner in walk(sub):
                    if isinstance(inner, A.Access):
                        bounds.setdefault(inner.tensor, []).append(dim)
    return bounds


def random_inputs(definition: A.CheckedDef, sizes: Mapping[str, int], seed: int) -> list[Any]:
    """Inputs of `definition` for `sizes`: standard normal floats, small
    integers, index tensors within the extents they index; scalar sizes as given."""
    rng = np.random.default_rng(seed)
    sizes = with_derived_sizes(definition, dict(sizes))
    values = [sizes[n] for n in definition.size_params]
    indexing = index_bounds(definition)
    inputs: list[Any] = []
    for param in definition.inputs:
        dtype = NUMPY_DTYPES[param.dtype]
        if param.is_scalar:
            if param.name in sizes:
                inputs.append(sizes[param.name])
            elif param.dtype.startswith("float"):
                inputs.append(float(rng.standard_normal()))
            else:
                inputs.append(int(rng.integers(1, 4)))
            continue
        shape = tuple(evaluate(d, values) for d in param.dims)
        if param.name in indexing:
            high = min(evaluate(d, values) for d in indexing[param.name])
            inputs.append(rng.integers(0, max(high, 1), shape).astype(dtype))
        elif param.dtype.startswith("float"):
            inputs.append(rng.standard_normal(shape).astype(dtype))
        else:
            inputs.append(rng.integers(-8, 8, shape).astype(dtype))
    return inputs


def relative_error(got: Any, expected: np.ndarray) -> float:
    """Largest absolute difference over max(1, largest |expected|); NaN counts as infinite."""
    scale = max(1.0, float(np.abs(expected).max(initial=0)))
    diff = np.abs(np.asarray(got).astype(np.float64) - expected)
    return float(np.nan_to_num(diff, nan=np.inf).max(initial=0)) / scale


def within_tolerance(got: Any, expected: np.ndarray, dtype: str) -> tuple[bool, float]:
    """Whether `got` matches `expected` for an output of `dtype`, and the error."""
    error = relative_error(got, expected)
    return error <= TOLERANCE.get(dtype, 0.0), error
