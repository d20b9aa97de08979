"""Guarded reads in sums as reads of zero-padded copies.

A padded convolution written with a guard,

    O(n,f,h,w) +=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)
                   ? I(n,c,h + kh - 1,w + kw - 1) * Wt(f,c,kh,kw) : 0.0

becomes a copy of the image padded with zeros and a convolution without a
guard inside its sum:

    I_pad(i0, i1, i2, i3) = i2 >= 1 && i2 < H + 1 && i3 >= 1 && i3 < W + 1 ? I(i0, i1, i2 - 1, i3 - 1) : 0.0
        where i0 in 0:N, i1 in 0:C, i2 in 0:H + KH - 1, i3 in 0:W + KW - 1
    O(n, f, h, w) +=! I_pad(n, c, h + kh, w + kw) * Wt(f, c, kh, kw) where ...

A read qualifies where the guard's conjuncts all bound its subscripts,
summed indices shift one of them, and the statement reuses it (an index of
the statement is missing from the read: the image is read for every
filter). The two defs compute the same numbers but where a factor beside
the read is infinite or NaN at a padded point (0 * inf). The default GPU
mapping lowers the copy and the sum apart (`tcir.compiler.lowering`): a
guard in the sum goes into its polyhedral domain, whose bounds then vary
with the taps inside each thread's unrolled loops.
"""

from __future__ import annotations

from dataclasses import replace

from . import ast as A
from .rewrite import DefRewriter, Statement
from .unparse import param_text


class _Padding(DefRewriter):
    label = "padded reads of"

    def run(self) -> A.CheckedDef | None:
        d = self.d
        if any(s.scatter is not None or s.loop is not None for s in d.stmts):
            return None
        statements: list[Statement] = []
        for stmt in d.stmts:
            ranges = self.ranges(stmt)
            rhs = stmt.rhs
            emitted = len(self.out)
            if stmt.reduces:
                rhs = self.guarded_reads_padded(rhs, ranges, set(stmt.reduction_indices), reused=True)
            statements += self.out[emitted:]  # the copies, right before the statement that reads them
            point = [A.IndexVar(name=i, loc=stmt.loc) for i in stmt.lhs_indices]
            statements.append(Statement(stmt.lhs, point, stmt.op, rhs, ranges))
        if not self.out:
            return None
        inputs = ", ".join(param_text(p, self.sizes) for p in d.inputs)
        outputs = ", ".join(p.name for p in d.outputs)  # their shapes are inferred again
        lines = [f"def {d.name}({inputs}) -> ({outputs}) {{"]
        lines += [self.line(s, True, set()) for s in statements]
        # Not `final`: where the text would not give back the same def, the
        # def keeps its guards (None).
        parsed = self.verify("\n".join([*lines, "}", ""]), statements, final=False)
        if parsed is None or [(p.dtype, p.dims) for p in parsed.outputs] != [(p.dtype, p.dims) for p in d.outputs]:
            return None  # (or an output declared otherwise than inferred)
        return replace(parsed, loc=d.loc)


def padded_reads(definition: A.CheckedDef) -> A.CheckedDef | None:
    """`definition` with each guarded read in a sum that qualifies (see the
    module) reading a zero-padded copy, each copy right before the statement
    that reads it; None where no read qualifies (or a statement scatters or
    steps a loop)."""
    return _Padding(definition).run()
