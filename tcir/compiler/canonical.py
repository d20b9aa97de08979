"""Cache keys: a TC def with its names abstracted away, and the problem it solves.

The paper keys its compilation cache on a "summarily templatized" TC so that
renaming tensors, indices or sizes does not miss the cache. `canonical_tc`
prints a checked def with positional names: inputs `I0, I1, ...`, outputs
`O0, ...`, temporaries `T0, ...`, sizes `s0, ...` (as xDSL prints affine
symbols), stepped loops `L0, ...`, and, per statement, indices `i0, i1, ...`
in reference loop order.
The text keeps every type, range and operator, so two defs share it only if
they compute the same thing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from tcir.frontend import ast as A
from tcir.runtime.signature import evaluate


class _Printer:
    """Prints one checked def with canonical names."""

    def __init__(self, definition: A.CheckedDef):
        self.definition = definition
        self.tensors: dict[str, str] = {}
        for prefix, params in (
            ("I", definition.inputs),
            ("O", definition.outputs),
            ("T", definition.temporaries),
        ):
            for k, param in enumerate(params):
                self.tensors[param.name] = f"{prefix}{k}"
        self.indices: dict[str, str] = {}
        self.loops: dict[str, str] = {}

    def param(self, param: A.Param) -> str:
        dims = ", ".join(str(d) for d in param.dims)
        kind = "scalar " if param.is_scalar else ""
        return f"{kind}{param.dtype}({dims}) {self.tensors[param.name]}"

    def stmt(self, stmt: A.Stmt) -> str:
        order = [*stmt.loop_order, *(i for i in stmt.ranges if i not in stmt.loop_order)]
        self.indices = {name: f"i{k}" for k, name in enumerate(order)}
        lhs = ", ".join(self.indices[i] for i in stmt.lhs_indices)
        if stmt.scatter is not None:
            lhs = "scatter " + ", ".join(map(self.expr, stmt.scatter))
        reduction = ", ".join(self.indices[i] for i in stmt.reduction_indices)
        ranges = ", ".join(
            f"{self.indices[i]} in [{lo}, {hi})" for i, (lo, hi) in stmt.ranges.items()
        )
        steps = ""
        if stmt.loop is not None:
            label = self.loops.setdefault(stmt.loop.label, f"L{len(self.loops)}")
            steps = f" loop {label} along {self.indices[stmt.loop.index]}"
        return (
            f"{self.tensors[stmt.lhs]}({lhs}) {stmt.op} {self.expr(stmt.rhs)} "
            f"reduce({reduction}) where {ranges}{steps}"
        )

    def expr(self, e: A.Expr) -> str:
        match e:
            case A.Const():
                text = repr(e.value)
            case A.IndexVar():
                text = self.indices[e.name]
            case A.ScalarParam():
                text = self.tensors[e.name]
            case A.SizeRef():
                text = f"size({e.expr})"
            case A.Access():
                text = f"{self.tensors[e.tensor]}({', '.join(map(self.expr, e.subscripts))})"
            case A.Unary():
                text = f"({e.op}{self.expr(e.x)})"
            case A.Binary():
                text = f"({self.expr(e.a)} {e.op} {self.expr(e.b)})"
            case A.Ternary():
                text = f"({self.expr(e.c)} ? {self.expr(e.a)} : {self.expr(e.b)})"
            case A.Call():
                text = f"{e.name}({', '.join(map(self.expr, e.args))})"
            case A.Cast():
                text = f"cast({self.expr(e.x)})"
            case _:
                raise AssertionError(f"unknown expression {type(e).__name__}")
        return f"{text}:{e.type}"

    def print(self) -> str:
        d = self.definition
        inputs = ", ".join(self.param(p) for p in d.inputs)
        outputs = ", ".join(self.param(p) for p in d.outputs)
        scalar_sizes = ", ".join(sorted(self.tensors[n] for n in d.scalar_size_params))
        lines = [
            f"def({inputs}) -> ({outputs})",
            f"  sizes {len(d.size_params)}, scalar sizes {scalar_sizes}",
            *(f"  temporary {self.param(p)}" for p in d.temporaries),
            *(f"  {self.stmt(s)}" for s in d.stmts),
        ]
        return "\n".join(lines)


def canonical_tc(definition: A.CheckedDef) -> str:
    """`definition` printed with positional names (see the module docstring)."""
    return _Printer(definition).print()


@dataclass(frozen=True)
class ProblemKey:
    """What a compiled kernel is for: a canonical TC, the input shapes and
    dtypes (with the size values), and the target architecture."""

    tc: str
    shapes: str
    """JSON: the size values in `size_params` order and each input's shape and dtype."""
    target: str

    @staticmethod
    def of(definition: A.CheckedDef, sizes: Mapping[str, int], target: str) -> ProblemKey:
        """The key of `definition` specialized to `sizes` on `target`."""
        values = [int(sizes[n]) for n in definition.size_params]
        inputs = [[[evaluate(d, values) for d in p.dims], p.dtype] for p in definition.inputs]
        shapes = json.dumps({"sizes": values, "inputs": inputs}, separators=(",", ":"))
        return ProblemKey(canonical_tc(definition), shapes, target)

    @property
    def digest(self) -> str:
        """A stable hash of the whole key."""
        return _sha256(self.tc, self.shapes, self.target)

    @property
    def tc_digest(self) -> str:
        """A hash of the TC and target only: problems of other shapes share it."""
        return _sha256(self.tc, self.target)

    def kernel_digest(self, options_json: str) -> str:
        """The hash of one compiled version: this problem with `options_json`."""
        return _sha256(self.digest, options_json)


def _sha256(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()
