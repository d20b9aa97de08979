"""A checked def computed in another floating-point type.

A def written with `float` serves float64 callers (gradcheck, PyTorch's
`double` models) as the same def with every float32 value a float64 one:
tensors, scalars, literals and the `f`-suffixed builtins (`fmaxf` computes
in the def's float type once retyped). `Function.astype` and the PyTorch
operators use it, so that one def and one operator name serve several dtypes.
"""

from __future__ import annotations

from dataclasses import fields, replace

from . import ast as A


def retyped(definition: A.CheckedDef, source: str, target: str) -> A.CheckedDef:
    """`definition` with every value of type `source` (a float type) of type `target`."""
    memo: dict[int, A.Expr] = {}

    def convert(node: A.Expr) -> A.Expr:
        done = memo.get(id(node))
        if done is not None:
            return done
        changes: dict[str, object] = {}
        for f in fields(node):
            value = getattr(node, f.name)
            if isinstance(value, A.Expr):
                changes[f.name] = convert(value)
            elif isinstance(value, list) and value and isinstance(value[0], A.Expr):
                changes[f.name] = [convert(v) for v in value]
        if node.type == source:
            changes["type"] = target
        memo[id(node)] = result = replace(node, **changes) if changes else node  # pyright: ignore
        return result

    def param(p: A.Param) -> A.Param:
        return replace(p, dtype=target) if p.dtype == source else p

    stmts = [
        replace(
            s,
            rhs=convert(s.rhs),
            scatter=None if s.scatter is None else [convert(x) for x in s.scatter],
        )
        for s in definition.stmts
    ]
    return replace(
        definition,
        inputs=[param(p) for p in definition.inputs],
        outputs=[param(p) for p in definition.outputs],
        temporaries=[param(p) for p in definition.temporaries],
        stmts=stmts,
    )
