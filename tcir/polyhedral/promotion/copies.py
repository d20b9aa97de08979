"""Copy statements between a tensor and its promoted buffer.

A copy of a group at a schedule tile `p` is a statement `read_<buffer>` (or
`write_<buffer>`) with instances `[p..., t..., a...]`: the tile, the thread
ids `t` for private buffers (their tiles depend on the thread), and the
element `a` of the tensor. Its body reads `T[a]` and stores it into the
buffer (or back). An extension node introduces the instances of a tile at
the tile's schedule position; copies into shared memory are spread over the
threads, the last array index following `thread_x` (coalesced accesses), or
in the tile's row-major order where that leaves most threads idle
(`FlatCopy`), or in aligned vector groups (`VectorCopy`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr, UnitAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr

from tcir.dialects.poly import StmtOp
from tcir.dialects.tc import ReadOp, TensorType, UpdateOp
from tcir.lowering.tc_point import ATOMIC, CLAMP, CLAMP_GROUP, CLIP, PROMOTED, PROMOTED_MAP, PROMOTED_SYMBOLS, identity
from tcir.polyhedral.padding import past_shape, written_by_def
from tcir.polyhedral.promotion.affine import affine_map_attr, function_of
from tcir.polyhedral.promotion.tiles import ArrayTile


def promote_access(
    op: ReadOp | UpdateOp, buffer: str, index: isl.MultiAff, symbols: Sequence[str]
) -> None:
    """Make `op` access `buffer` at `index` (a function of its statement's iterators)."""
    used = [s for s in symbols if index.find_dim_by_name(isl.dim_type.param, s) >= 0]
    op.attributes[PROMOTED] = StringAttr(buffer)
    op.attributes[PROMOTED_MAP] = affine_map_attr(index, used)
    if used:
        op.attributes[PROMOTED_SYMBOLS] = ArrayAttr(StringAttr(s) for s in used)
    else:
        op.attributes.pop(PROMOTED_SYMBOLS, None)


@dataclass(frozen=True)
class Copy:
    """The copies of `elements` (`{ [p] -> T[a] }`) between `tensor` and
    `buffer`, whose array tile is `tile`; `threads` are the mapping
    parameters a private buffer depends on, `block_threads` the block's
    thread ids and their counts (x first) that a shared copy is dealt to."""

    name: str
    buffer: str
    tensor: SSAValue
    into_buffer: bool
    elements: isl.Map
    tile: ArrayTile
    threads: tuple[str, ...]
    symbols: tuple[str, ...]
    atomic: str | None
    """The update (`+=`, `max=`, `min=`) of an atomic reduction
    (`poly-parallel-reduction`) that the buffer accumulates: it starts at the
    reduction's identity instead of the tensor's values and is combined into
    the tensor atomically; None for any other buffer."""
    block_threads: tuple[tuple[str, int], ...]

    @property
    def _dims(self) -> tuple[list[str], list[str], list[str]]:
        space = self.elements.get_space()
        n_p = space.dim(isl.dim_type.in_)
        rank = space.dim(isl.dim_type.out)
        return (
            [f"p{k}" for k in range(n_p)],
            [f"t{k}" for k in range(len(self.threads))],
            [f"a{k}" for k in range(rank)],
        )

    def _instance(self) -> str:
        p, t, a = self._dims
        return f"{self.name}[{', '.join(p + t + a)}]"

    def domain(self) -> isl.Set:
        """The instances of all tiles, threads tied to the thread ids."""
        p, t, a = self._dims
        tensor = self.elements.get_tuple_name(isl.dim_type.out)
        equal = (
            " and ".join(f"{tk} = {name}" for tk, name in zip(t, self.threads))
            or "true"
        )
        params = ", ".join(self.threads)
        shape = isl.Map(
            f"[{params}] -> {{ {self._instance()} -> [[{', '.join(p)}] -> {tensor}[{', '.join(a)}]] : {equal} }}"
        )
        return shape.intersect_range(self.elements.wrap()).domain()

    def extension(self) -> isl.UnionMap:
        """`{ [p] -> copy[p, t, a] }` for the extension node."""
        p, _, _ = self._dims
        tile = isl.Map(f"{{ {self._instance()} -> [{', '.join(p)}] }}")
        return isl.UnionMap.from_map(tile.intersect_domain(self.domain()).reverse())

    def schedule(self) -> isl.MultiUnionPwAff:
        """The copy loops: one band member per tensor dimension; where the
        tile keeps runs of `g` elements (`ArrayTile.runs`), one for the runs
        (`floor(a / g)`) and, after all those, one for the elements of a run."""
        _, _, a = self._dims
        runs = self.tile.runs or ((1, 1),) * len(a)
        parts = [f"floor({ak} / {g})" if q > 1 else ak for ak, (g, q) in zip(a, runs)]
        parts += [f"{ak} mod {g}" for ak, (g, q) in zip(a, runs) if q > 1]
        members = ", ".join(f"{{ {self._instance()} -> [({part})] }}" for part in parts)
        return isl.MultiUnionPwAff(f"[{members}]")

    def thread_filter(self) -> isl.UnionSet:
        """The copy instances run by each thread: the last tensor dimensions
        round-robin over `block_threads` (x first), extra threads idle."""
        _, _, a = self._dims
        threads = self.block_threads
        constraints = []
        for k, (ident, size) in enumerate(threads):
            if k < len(a):
                constraints.append(
                    f"exists (e{k} : {a[-1 - k]} = {ident} + {size} * e{k})"
                )
            else:
                constraints.append(f"{ident} = 0")
        params = ", ".join(ident for ident, _ in threads)
        text = f"[{params}] -> {{ {self._instance()} : {' and '.join(constraints) or 'true'} }}"
        return (
            self.domain().intersect(isl.Set(text)).to_union_set()
            if threads
            else self.domain().to_union_set()
        )

    def _body(self) -> tuple[Block, list[SSAValue]]:
        """The statement's block, its arguments named after its instance's
        dimensions, and the arguments of the element `a`."""
        p, t, a = self._dims
        block = Block(arg_types=[IndexType()] * (len(p) + len(t) + len(a)))
        for arg, name in zip(block.args, p + t + a):
            arg.name_hint = name
        return block, list(block.args[len(p) + len(t) :])

    def statement(self) -> StmtOp:
        """The copy statement: `buffer[b] = T[a]` or `T[a] = buffer[b]`
        (atomic: `buffer[b] = 0`, `T[a] += buffer[b]` atomically; a
        maximum's buffer starts at -inf)."""
        domain = self.domain()
        _, _, a = self._dims
        block, elements = self._body()
        subscripts = [AffineExpr.dimension(k) for k in range(len(a))]
        index = self.buffer_index(domain)
        if self.atomic and self.into_buffer:
            assert isinstance(self.tensor.type, TensorType)
            zero = arith.ConstantOp(identity(self.atomic.removesuffix("="), self.tensor.type.element_type))
            write = UpdateOp(self.tensor, "=", zero.result, subscripts, elements)
            promote_access(write, self.buffer, index, self.symbols)
            block.add_ops([zero, write])
        else:
            read = ReadOp(self.tensor, subscripts, elements)
            outside = self._outside() if self.into_buffer else []
            if outside and written_by_def(self.tensor):  # zero past the edge: its owner may be writing it
                read.attributes[CLIP] = ArrayAttr(IntegerAttr(d, 64) for d in outside)
            elif outside:  # a tile of statements padded to whole tiles: rows past the edge
                read.attributes[CLAMP] = ArrayAttr(IntegerAttr(d, 64) for d in outside)
                if self.group_width > 1 and self._whole_groups():
                    read.attributes[CLAMP_GROUP] = IntegerAttr(self.group_width, 64)
            write = UpdateOp(self.tensor, self.atomic or "=", read.result, subscripts, elements)
            if self.atomic:
                write.attributes[ATOMIC] = UnitAttr()
            promote_access(
                read if not self.into_buffer else write, self.buffer, index, self.symbols
            )
            block.add_ops([read, write])
        tensor = self.elements.get_tuple_name(isl.dim_type.out)
        access = isl.Map(
            f"{{ {self._instance()} -> {tensor}[{', '.join(a)}] }}"
        ).intersect_domain(domain)
        empty = isl.UnionMap.empty(access.get_space().params()).to_str()
        if self.atomic:  # the tensor is not read into the buffer; the sum reads and writes it
            reads, writes = (empty, empty) if self.into_buffer else (access.to_str(), access.to_str())
        else:
            reads, writes = (
                (access.to_str(), empty) if self.into_buffer else (empty, access.to_str())
            )
        return StmtOp(self.name, domain.to_str(), reads, writes, Region(block))

    @property
    def group_width(self) -> int:
        """Consecutive elements of a row that the copy moves together."""
        return 1

    def _whole_groups(self) -> bool:
        """Whether the groups tile the tensor's rows (its last size a multiple)."""
        assert isinstance(self.tensor.type, TensorType)
        shape = self.tensor.type.static_shape()
        return bool(shape) and shape[-1] % self.group_width == 0  # type: ignore[index]

    def _outside(self) -> list[int]:
        """The dimensions in which the copied elements pass the tensor's
        shape (a tile of statements padded by `poly-pad-tiles`)."""
        assert isinstance(self.tensor.type, TensorType)
        shape = self.tensor.type.static_shape()
        return [] if shape is None else past_shape(self.elements.range(), shape)

    def buffer_index(self, domain: isl.Set | None = None) -> isl.MultiAff:
        """The buffer element of each instance (over `domain`, by default the
        copy's); `NotExpressible` where isl gives it in several pieces."""
        domain = self.domain() if domain is None else domain
        p, _, a = self._dims
        tensor = self.elements.get_tuple_name(isl.dim_type.out)
        pairs = isl.Map(
            f"{{ {self._instance()} -> [[{', '.join(p)}] -> {tensor}[{', '.join(a)}]] }}"
        )
        index = pairs.apply_range(
            isl.Map.from_multi_aff(self.tile.index())
        ).intersect_domain(domain)
        return function_of(index, self.threads)


@dataclass(frozen=True)
class VectorCopy(Copy):
    """A copy into a shared buffer whose rows are dealt to the threads in
    aligned groups of `width` consecutive elements (`T[.., w * g + l]`, `l`
    < `width`), one group at a time per thread, so that `gpu-vectorize-copies`
    can move each group with one vector load and store (float4). The
    groups of a row go to consecutive threads (`x` fastest, then `y`, `z`),
    the rows to the next threads, so that every thread has work while the
    tile has groups."""

    width: int

    @property
    def group_width(self) -> int:
        return self.width

    def _row(self) -> int | None:
        """The array dimension whose elements are the tile's rows: the
        innermost before the last that the tile spans more than one element
        of (`Q(i, b, d)` tiled over `i` and `d` at one `b`: `i`); None for a
        tile of one row."""
        spanned = [k for k, size in enumerate(self.tile.sizes[:-1]) if size > 1]
        return spanned[-1] if spanned else None

    def _dealing(self) -> tuple[str, int, int]:
        """The thread's linear id `L` (as isl text), the groups `G` of a row
        dealt at once and the rows `R` at once."""
        thread, scale = linear_thread_id(self.block_threads)
        groups = min(-(-self.tile.sizes[-1] // self.width), scale)
        rows = scale // groups if self._row() is not None else 1
        return thread, groups, rows

    def schedule(self) -> isl.MultiUnionPwAff:
        """The copy loops, the last dimension split into its groups and the
        elements of a group (the innermost loop, `width` iterations); a
        row's groups and the rows preceded by the rounds of `G` groups and
        `R` rows that the threads take at once. (The rounds order the
        instances as before; without them, isl's AST generator drops a
        thread's later rows where the dealt offset `L / G` is a division of
        the thread ids: 36 threads on rows of 16 groups, 3 rows.)"""
        _, _, a = self._dims
        *outer, last = a
        group = f"floor({last} / {self.width})"
        parts = [*outer, group, f"{last} mod {self.width}"]
        row = self._row()
        if self.block_threads:
            _, groups, rows = self._dealing()
            parts.insert(len(outer), f"floor({group} / {groups})")
            if row is not None:
                parts.insert(row, f"floor({a[row]} / {rows})")
        members = ", ".join(f"{{ {self._instance()} -> [({part})] }}" for part in parts)
        return isl.MultiUnionPwAff(f"[{members}]")

    def thread_filter(self) -> isl.UnionSet:
        """The copy instances run by each thread: with `L` the thread's linear
        id and `G` the groups of a tile row, group `g` of a row goes to the
        threads with `L mod G = g mod G`, and row `r` (of `_row`) to those
        with `L / G = r mod R`, where `R` rows fit the threads at once."""
        if not self.block_threads:
            return self.domain().to_union_set()
        _, _, a = self._dims
        thread, groups, rows = self._dealing()
        constraints = [
            f"exists (e0 : floor({a[-1]} / {self.width}) = (({thread}) mod {groups}) + {groups} * e0)",
            f"{thread} < {groups * rows}",
        ]
        row = self._row()
        if row is not None:
            constraints.append(f"exists (e1 : {a[row]} = floor(({thread}) / {groups}) + {rows} * e1)")
        params = ", ".join(ident for ident, _ in self.block_threads)
        text = f"[{params}] -> {{ {self._instance()} : {' and '.join(constraints)} }}"
        return self.domain().intersect(isl.Set(text)).to_union_set()


@dataclass(frozen=True)
class FlatCopy(Copy):
    """A copy into or out of a shared buffer whose elements are dealt to the
    threads in the buffer's row-major order: with `L` the thread's linear id
    (`x` fastest) and `T` the block's threads, element `f` of the tile (its
    buffer index flattened) goes to the thread with `L = f mod T`, one round
    of `T` elements at a time. Consecutive threads then move consecutive
    elements across rows too, where `Copy`'s dealing of each dimension to
    one thread id leaves most threads idle (a filter bank's 64x8x3x3 tile
    on 18x16 threads: 16 rounds instead of 192)."""

    def _flat_index(self) -> isl.Map:
        """`{ copy[p, a] -> [f] }`: an instance's flattened buffer index."""
        p, _, a = self._dims
        tensor = self.elements.get_tuple_name(isl.dim_type.out)
        pairs = isl.Map(f"{{ {self._instance()} -> [[{', '.join(p)}] -> {tensor}[{', '.join(a)}]] }}")
        sizes = self.tile.buffer_sizes
        b = [f"b{k}" for k in range(len(sizes))]
        terms = [f"{math.prod(sizes[k + 1:])} * {bk}" for k, bk in enumerate(b)]
        flatten = isl.Map(f"{{ [{', '.join(b)}] -> [{' + '.join(terms)}] }}")
        return pairs.apply_range(isl.Map.from_multi_aff(self.tile.index())).apply_range(flatten)

    def schedule(self) -> isl.MultiUnionPwAff:
        """The copy loop over rounds of `T` elements, then (one instance each)
        the tensor dimensions."""
        _, total = linear_thread_id(self.block_threads)
        flat = isl.PwMultiAff.from_map(self._flat_index()).get_pw_aff(0)
        rounds = isl.UnionPwAff.from_pw_aff(flat.scale_down_val(isl.Val(total)).floor())
        return isl.MultiUnionPwAff.from_union_pw_aff(rounds).flat_range_product(super().schedule())

    def thread_filter(self) -> isl.UnionSet:
        """The instances of the thread whose linear id is the flat index modulo `T`."""
        thread, total = linear_thread_id(self.block_threads)
        params = ", ".join(ident for ident, _ in self.block_threads)
        owner = isl.Set(f"[{params}] -> {{ [f] : exists (e : f = {thread} + {total} * e) }}")
        return self._flat_index().intersect_range(owner).domain().intersect(self.domain()).to_union_set()


def linear_thread_id(threads: Sequence[tuple[str, int]]) -> tuple[str, int]:
    """A thread's linear id over `threads` (`x` fastest) as isl text, and the
    number of threads."""
    terms, scale = [], 1
    for ident, size in threads:
        terms.append(f"{scale} * {ident}")
        scale *= size
    return " + ".join(terms), scale


FLAT_COPY_GAIN = 2
"""`FlatCopy` where it takes at most half of `Copy`'s rounds: its index
arithmetic (divisions by the tile's sizes, guards of partial tiles) costs
more than a few rounds."""

WARP = 32


def flat_copy_pays(tile: ArrayTile, threads: Sequence[tuple[str, int]]) -> bool:
    """Whether `FlatCopy` moves a tile in at most 1 / `FLAT_COPY_GAIN` of the
    rounds of `Copy`, whose dimensions from the last go to `x`, `y`, `z`
    (the rest loop), on blocks of whole warps (with others, isl's closed
    forms of a thread's elements grow costly: docs/guide/defaults.md)."""
    sizes = list(tile.sizes)
    rounds = 1
    for k, size in enumerate(reversed(sizes)):
        rounds *= -(-size // threads[k][1]) if k < len(threads) else size
    _, total = linear_thread_id(threads)
    return total % WARP == 0 and FLAT_COPY_GAIN * -(-math.prod(sizes) // total) <= rounds
