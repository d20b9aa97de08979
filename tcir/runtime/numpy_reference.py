"""An independent oracle: evaluate a checked def with numpy, statement by statement.

Each statement's right-hand side is evaluated at once over its whole (sparse,
broadcast) iteration grid, then reduced over the reduction indices and
combined into the left-hand side — no loops, no compiler; only a stepped
loop (a recurrence) runs its statements a step at a time, in order. Floats are computed
in float64, integers in int64 with C semantics, and results are stored in the
tensors' own dtypes.
"""

from __future__ import annotations

import math
from itertools import groupby
from typing import Any

import numpy as np

from tcir.frontend import ast as A
from tcir.frontend.subscripts import zero_else
from tcir.runtime.signature import NUMPY_DTYPES, Binding, evaluate

_UNARY = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil,
    "cos": np.cos, "cosh": np.cosh, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "fabs": np.abs, "floor": np.floor, "log": np.log, "log10": np.log10,
    "log1p": np.log1p, "log2": np.log2, "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt,
    "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc,
    "round": lambda x: np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)),
    "rsqrt": lambda x: 1 / np.sqrt(x), "rcbrt": lambda x: 1 / np.cbrt(x),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "exp10": lambda x: 10.0**x,
    "cospi": lambda x: np.cos(np.pi * x), "sinpi": lambda x: np.sin(np.pi * x),
    "erf": np.vectorize(math.erf, otypes=[float]),
    "erfc": np.vectorize(math.erfc, otypes=[float]),
    "lgamma": np.vectorize(math.lgamma, otypes=[float]),
    "tgamma": np.vectorize(math.gamma, otypes=[float]),
    "normcdf": np.vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2)), otypes=[float]),
}
_BINARY = {
    "atan2": np.arctan2, "copysign": np.copysign, "fmax": np.fmax, "fmin": np.fmin,
    "pow": np.power, "hypot": np.hypot, "fmod": np.fmod, "fdivide": np.divide,
    "fdim": lambda a, b: np.maximum(a - b, 0), "nextafter": np.nextafter,
    "remainder": np.remainder, "min": np.minimum, "max": np.maximum,
}
_REDUCE = {"+": np.add, "*": np.multiply, "min": np.minimum, "max": np.maximum}


def _cast(value: Any, dtype: str) -> Any:
    if dtype.startswith("float"):
        return np.asarray(value, np.float64)
    if dtype == "bool":
        return np.asarray(value) != 0
    array = np.asarray(value)
    if array.dtype.kind == "f":
        array = np.trunc(array)
    return array.astype(NUMPY_DTYPES[dtype]).astype(np.int64)


class _Statement:
    """Evaluates one statement's right-hand side over its grid."""

    def __init__(self, reference: NumpyReference, stmt: A.Stmt, ranges: dict[str, tuple[int, int]]):
        self.reference = reference
        self.guarded = False
        """Inside a guarded ternary (`A.Ternary.guarded`): reads are clipped."""
        order = stmt.loop_order
        self.grid: dict[str, np.ndarray] = {}
        for axis, name in enumerate(order):
            lo, hi = ranges[name]
            shape = [1] * len(order)
            shape[axis] = max(hi - lo, 0)
            self.grid[name] = np.arange(lo, max(hi, lo)).reshape(shape)

    def eval(self, e: A.Expr) -> Any:
        match e:
            case A.Const(value=value):
                return _cast(value, e.type)
            case A.IndexVar(name=name):
                return self.grid[name]
            case A.ScalarParam(name=name):
                return _cast(self.reference.tensors[name], e.type)
            case A.SizeRef(expr=expr):
                return np.int64(self.reference.size(expr))
            case A.Access(tensor=tensor, subscripts=subs):
                data = self.reference.tensors[tensor]
                index = tuple(np.asarray(self.eval(s)).astype(np.int64) for s in subs)
                if self.guarded:  # a branch not taken may point anywhere: its value is dropped
                    index = tuple(np.clip(i, 0, n - 1) for i, n in zip(index, data.shape))
                return _cast(data[index] if index else data[()], e.type)
            case A.Cast(x=x):
                return _cast(self.eval(x), e.type)
            case A.Unary(op="!", x=x):
                return np.logical_not(self.eval(x))
            case A.Unary(x=x):
                return -self.eval(x)
            case A.Ternary(c=c, a=a, b=b, guarded=guarded):
                outer, self.guarded = self.guarded, self.guarded or guarded
                try:
                    return np.where(self.eval(c), self.eval(a), self.eval(b))
                finally:
                    self.guarded = outer
            case A.Binary(op=op, a=a, b=b):
                return self._binary(op, self.eval(a), self.eval(b), e.type)
            case A.Call(name=name, args=args):
                values = [self.eval(a) for a in args]
                if name == "fma":
                    return _cast(values[0] * values[1] + values[2], e.type)
                function = _UNARY.get(name) or _BINARY[name]
                return _cast(function(*values), e.type)
        raise TypeError(f"cannot evaluate {type(e).__name__}")

    def _binary(self, op: str, a: Any, b: Any, dtype: str) -> Any:
        compare = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                   ">": np.greater, ">=": np.greater_equal}
        if op in compare:
            return compare[op](a, b)
        if op in ("&&", "||"):
            return (np.logical_and if op == "&&" else np.logical_or)(a, b)
        if op in ("+", "-", "*"):
            result = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](a, b)
        elif dtype.startswith("float"):
            result = np.divide(a, b) if op == "/" else np.fmod(a, b)
        else:  # C: division truncates, remainder has the dividend's sign
            quotient = np.trunc(np.divide(a, b)).astype(np.int64)
            result = quotient if op == "/" else a - b * quotient
        return _cast(result, dtype)


class NumpyReference:
    """Runs a checked def on numpy arrays (inputs in signature order)."""

    def __init__(self, definition: A.CheckedDef, binding: Binding):
        self.definition = definition
        self.binding = binding
        self.tensors: dict[str, Any] = {}
        for param, arg in zip(definition.inputs, binding.arrays):
            self.tensors[param.name] = arg if param.is_scalar else np.asarray(arg)
        for param in (*definition.outputs, *definition.temporaries):
            dtype = np.float64 if param.dtype.startswith("float") else NUMPY_DTYPES[param.dtype]
            self.tensors[param.name] = np.zeros(binding.shape(definition, param), dtype)

    def size(self, expr: Any) -> int:
        return evaluate(expr, [self.binding.sizes[n] for n in self.definition.size_params])

    def run(self) -> tuple[np.ndarray, ...]:
        # Consecutive statements of one stepped loop together, the others alone.
        for _, grouped in groupby(self.definition.stmts, key=lambda stmt: stmt.loop or id(stmt)):
            group = list(grouped)
            loop = group[0].loop
            if loop is None:
                self._statement(group[0], self._ranges(group[0]))
                continue
            ranges = [self._ranges(stmt) for stmt in group]
            lo, hi = ranges[0][loop.index]
            for step in range(hi - lo):  # a recurrence: step by step, in order
                for stmt, bounds in zip(group, ranges):
                    at = bounds[loop.index][0] + step
                    self._statement(stmt, {**bounds, loop.index: (at, at + 1)})
        return tuple(self.tensors[p.name] for p in self.definition.outputs)

    def _ranges(self, stmt: A.Stmt) -> dict[str, tuple[int, int]]:
        return {name: (self.size(lo), self.size(hi)) for name, (lo, hi) in stmt.ranges.items()}

    def _statement(self, stmt: A.Stmt, ranges: dict[str, tuple[int, int]]) -> None:
        target = self.tensors[stmt.lhs]
        param = self.definition.tensor(stmt.lhs)
        evaluator = _Statement(self, stmt, ranges)
        if stmt.scatter is not None:  # every instance adds to the element it names
            shape = tuple(grid.size for grid in evaluator.grid.values())
            if stmt.initializes:
                target[...] = 0
            value = np.broadcast_to(evaluator.eval(stmt.rhs), shape)
            index = tuple(np.broadcast_to(np.asarray(evaluator.eval(s), np.int64), shape) for s in stmt.scatter)
            rhs = stmt.rhs
            if zero_else(rhs):
                taken = np.broadcast_to(np.asarray(evaluator.eval(rhs.c), bool), shape)  # it writes where it adds
                value, index = value[taken], tuple(i[taken] for i in index)
            np.add.at(target, index, value)
            if not param.dtype.startswith("float"):
                target[...] = _store(target, param.dtype)
            return
        rank = len(stmt.lhs_indices)
        lhs_shape = tuple(evaluator.grid[n].size for n in stmt.lhs_indices)
        shape = lhs_shape + tuple(evaluator.grid[n].size for n in stmt.reduction_indices)
        region = tuple(slice(*ranges[n]) for n in stmt.lhs_indices)
        if stmt.op == "=":
            target[region] = _store(np.broadcast_to(evaluator.eval(stmt.rhs), shape), param.dtype)
            return
        kind = stmt.reduction_kind
        assert kind is not None
        if stmt.initializes:
            target[region] = _identity(kind, target.dtype)
        rhs = stmt.rhs
        if kind == "+" and isinstance(rhs, A.Binary) and rhs.op == "*" and rhs.type.startswith("float"):
            # A sum of products (a contraction): einsum, never the whole grid in memory.
            factors = [np.asarray(evaluator.eval(x), np.float64) for x in (rhs.a, rhs.b)]
            factors = [f.reshape((1,) * (len(shape) - f.ndim) + f.shape) for f in factors]
            axes = "".join(chr(ord("a") + k) for k in range(len(shape)))
            reduced = np.einsum(f"{axes},{axes}->{axes[:rank]}", *factors, optimize=True)
            reduced = np.broadcast_to(reduced, lhs_shape)
        else:
            value = np.broadcast_to(evaluator.eval(rhs), shape)
            reduced = _REDUCE[kind].reduce(value, axis=tuple(range(rank, len(shape))))
        target[region] = _store(_REDUCE[kind](target[region], reduced), param.dtype)


def _identity(kind: str, dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return {"+": 0.0, "*": 1.0, "min": np.inf, "max": -np.inf}[kind]
    info = np.iinfo(dtype)
    return {"+": 0, "*": 1, "min": info.max, "max": info.min}[kind]


def _store(value: Any, dtype: str) -> Any:
    if dtype.startswith("float"):
        return value
    return _cast(value, dtype).astype(NUMPY_DTYPES[dtype])


def reference_outputs(definition: A.CheckedDef, binding: Binding) -> tuple[np.ndarray, ...]:
    """The def's outputs on `binding`'s inputs, computed by numpy."""
    return NumpyReference(definition, binding).run()

