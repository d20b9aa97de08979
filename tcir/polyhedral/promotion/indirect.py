"""Copies into a buffer of a tensor read through an index tensor.

A read `T(.., X(x), ..)` accesses the virtual array `T_X[x, ..]` (see
`references`); its copy statement `read_<buffer>[p..., a...]` runs over the
footprint's elements `a = (x..., rest...)` and stores `T[.., X[x], ..]`,
the paper's `shared_T[l][i][j][k] = T[l + X[i][j]][k]`.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.ir import Region
from xdsl.ir.affine import AffineExpr

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.polyhedral.promotion.copies import Copy, promote_access
from tcir.polyhedral.promotion.references import Indirection


@dataclass(frozen=True)
class IndirectCopy(Copy):
    """The copy of a virtual array `T_X` into `buffer`: `tensor` is `T`, read
    through `X` as `indirection` says."""

    indirection: Indirection

    def statement(self) -> StmtOp:
        """`buffer[b] = T[.., X[x], ..]` at element `a = (x..., rest...)`."""
        domain = self.domain()
        _, _, a = self._dims
        block, elements = self._body()
        indirection = self.indirection
        rank, position = indirection.index_rank, indirection.position
        inner, rest = elements[:rank], elements[rank:]
        index = ReadOp(
            indirection.index.tensor, [AffineExpr.dimension(k) for k in range(rank)], inner
        )
        operands = [*rest[:position], index.result, *rest[position:]]
        subscripts = [AffineExpr.dimension(k) for k in range(len(operands))]
        read = ReadOp(self.tensor, subscripts, operands)
        write = UpdateOp(self.tensor, "=", read.result, subscripts, operands)
        promote_access(write, self.buffer, self.buffer_index(domain), self.symbols)
        block.add_ops([index, read, write])
        tensor, index_tensor = indirection.tensor_name, indirection.index_name
        x, others = a[:rank], a[rank:]
        row = [*others[:position], "o", *others[position:]]
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
        position = self.indirection.position
        values = self.indirection.rows.insert_dims(isl.dim_type.set, 0, position)
        return values.add_dims(isl.dim_type.set, rank - position - 1)
