"""A sum's reduction indices in the order that the GPU's tiles cut best.

Range inference orders a statement's reduction indices for the locality of
serial loops (`innermost_contiguous`: the index of a read's last subscript
innermost). The isl scheduler keeps that order, and puts the first
reduction index of a sum in the band that `poly-tile` tiles, each of the
others in a band of its own that stays whole. A channels-last convolution,

    Y(n, h, w, f) +=! X(n, h + kh, w + kw, c) * Wt(f, kh, kw, c)

sums over `kh, kw, c`: its tiles would cut the 3 taps of `kh` and keep all
channels, too many to stage in shared memory. The default GPU mapping
lowers it summing over `c, kh, kw` (`taps_last`): first the indices that
shift no output index (a GEMM's k, which the templates tile), then the
taps, which stay whole.
"""

from __future__ import annotations

from dataclasses import replace

from . import ast as A
from .subscripts import summed_shifts


def taps_last(definition: A.CheckedDef) -> A.CheckedDef | None:
    """`definition` with each sum's taps after its other reduction indices
    (in their order otherwise); None where every sum has them so already."""
    stmts = []
    for stmt in definition.stmts:
        taps = summed_shifts(stmt)
        order = [i for i in stmt.reduction_indices if i not in taps] + [i for i in stmt.reduction_indices if i in taps]
        stmts.append(replace(stmt, reduction_indices=order) if order != stmt.reduction_indices else stmt)
    if all(new is old for new, old in zip(stmts, definition.stmts, strict=True)):
        return None
    return replace(definition, stmts=stmts)
