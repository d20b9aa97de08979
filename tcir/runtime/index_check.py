"""Range-check index tensors before a call (`X(I(i, j))`, `gE(I(b), d) += ...`).

An out-of-range index would read outside `X`: a segfault on the CPU, an
illegal address on the GPU. Before each call, every indirect subscript is
bounded by interval arithmetic — index variables over their ranges, index
tensors over the values they hold — and must stay inside the indexed
dimension, else a `TCError` names the index tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcir.errors import TCError
from tcir.frontend import ast as A
from tcir.frontend.subscripts import accesses
from tcir.runtime.signature import Binding, evaluate

Interval = tuple[int, int]
"""Inclusive bounds [low, high]; None when unknown."""

ValueRange = Callable[[Any], Interval | None]
"""Min and max of an array (None if empty), on the array's own device."""


@dataclass
class IndexChecker:
    """Checks the indirect subscripts of one def for one binding."""

    definition: A.CheckedDef
    binding: Binding
    value_range: ValueRange

    def check(self) -> None:
        for stmt in self.definition.stmts:
            for node in accesses(stmt.rhs):
                self._check_access(stmt, node)
            if stmt.scatter_target is not None:  # the element a scatter updates
                self._check_access(stmt, stmt.scatter_target)

    def _check_access(self, stmt: A.Stmt, access: A.Access) -> None:
        shape = self.binding.shape(self.definition, self.definition.tensor(access.tensor))
        for axis, (sub, extent) in enumerate(zip(access.subscripts, shape)):
            sources = [n.tensor for n in accesses(sub)]
            if not sources:
                continue
            bounds = self._interval(stmt, sub)
            if bounds is None or (0 <= bounds[0] and bounds[1] < extent):
                continue
            raise TCError(
                f"index tensor '{sources[0]}' gives subscripts in "
                f"[{bounds[0]}, {bounds[1]}] for dimension {axis} of '{access.tensor}' "
                f"(size {extent}) in {self.definition.name}"
            )

    def _sizes(self) -> list[int]:
        return [self.binding.sizes[n] for n in self.definition.size_params]

    def _interval(self, stmt: A.Stmt, e: A.Expr) -> Interval | None:
        match e:
            case A.Const(value=value) if isinstance(value, int):
                return (value, value)
            case A.IndexVar(name=name):
                lo, hi = stmt.ranges[name]
                return (evaluate(lo, self._sizes()), evaluate(hi, self._sizes()) - 1)
            case A.SizeRef(expr=expr):
                value = evaluate(expr, self._sizes())
                return (value, value)
            case A.ScalarParam(name=name):
                names = [p.name for p in self.definition.inputs]
                value = self.binding.arrays[names.index(name)]
                return (int(value), int(value)) if isinstance(value, int) else None
            case A.Cast(x=x):
                return self._interval(stmt, x)
            case A.Unary(op="-", x=x):
                inner = self._interval(stmt, x)
                return None if inner is None else (-inner[1], -inner[0])
            case A.Binary(op=op, a=a, b=b) if op in ("+", "-", "*"):
                ia, ib = self._interval(stmt, a), self._interval(stmt, b)
                if ia is None or ib is None:
                    return None
                if op == "+":
                    return (ia[0] + ib[0], ia[1] + ib[1])
                if op == "-":
                    return (ia[0] - ib[1], ia[1] - ib[0])
                products = [x * y for x in ia for y in ib]
                return (min(products), max(products))
            case A.Access(tensor=tensor):
                names = [p.name for p in self.definition.inputs]
                if tensor not in names:
                    return None  # computed inside the def: not known before the call
                return self.value_range(self.binding.arrays[names.index(tensor)])
            case _:
                return None
