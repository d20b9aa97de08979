"""Copies into a buffer of a tensor read through an index tensor.

A read `T(.., X(x), ..)` accesses the virtual array `T_X[x, ..]` (see
`references`); its copy statement `read_<buffer>[p..., a...]` runs over the
footprint's elements `a = (x..., rest...)` and stores `T[.., X[x], ..]`,
the paper's `shared_T[l][i][j][k] = T[l + X[i][j]][k]`.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.polyhedral.promotion.copies import Copy, promote_access


@dataclass(frozen=True)
class IndirectCopy(Copy):
    """The copy of a virtual array `T_X` into `buffer`: `tensor` is `T`,
    read at `position` through `index_tensor` (`X`, of rank `index_rank`);
    `rows` (`{ [o] }`) are the values `X` may hold; `names` are the scop's
    names of `T` and `X`."""

    index_tensor: SSAValue
    index_rank: int
    position: int
    rows: isl.Set
    names: tuple[str, str]

    def statement(self) -> StmtOp:
        """`buffer[b] = T[.., X[x], ..]` at element `a = (x..., rest...)`."""
        domain = self.domain()
        p, t, a = self._dims
        block = Block(arg_types=[IndexType()] * (len(p) + len(t) + len(a)))
        for arg, name in zip(block.args, p + t + a):
            arg.name_hint = name
        elements = list(block.args[len(p) + len(t) :])
        inner, rest = elements[: self.index_rank], elements[self.index_rank :]
        index = ReadOp(
            self.index_tensor, [AffineExpr.dimension(k) for k in range(len(inner))], inner
        )
        operands = [*rest[: self.position], index.result, *rest[self.position :]]
        subscripts = [AffineExpr.dimension(k) for k in range(len(operands))]
        read = ReadOp(self.tensor, subscripts, operands)
        write = UpdateOp(self.tensor, "=", read.result, subscripts, operands)
        promote_access(write, self.buffer, self._buffer_index(domain), self.symbols)
        block.add_ops([index, read, write])
        tensor, index_tensor = self.names
        x, others = a[: self.index_rank], a[self.index_rank :]
        row = [*others[: self.position], "o", *others[self.position :]]
        index_access = isl.Map(f"{{ {self._instance()} -> {index_tensor}[{', '.join(x)}] }}")
        rows = isl.Map(
            f"{{ {self._instance()} -> {tensor}[{', '.join(row)}] }}"
        ).intersect_range(self._row_values(len(row)).set_tuple_name(tensor))
        reads = isl.UnionMap.from_map(index_access.intersect_domain(domain)).union(
            isl.UnionMap.from_map(rows.intersect_domain(domain))
        )
        empty = isl.UnionMap.empty(reads.get_space().params())
        return StmtOp(self.name, domain.to_str(), reads.to_str(), empty.to_str(), Region(block))

    def _row_values(self, rank: int) -> isl.Set:
        """`{ [.., o, ..] }`: dimension `position` within `rows`, the others free."""
        values = self.rows.insert_dims(isl.dim_type.set, 0, self.position)
        return values.add_dims(isl.dim_type.set, rank - self.position - 1)
