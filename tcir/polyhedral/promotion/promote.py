"""The promotion heuristic on a schedule tree mapped by `poly-map-to-gpu`.

For each kernel whose outer band is mapped to blocks:
- private (register) promotion, per thread, at the block's tile (right below
  the block-mapped band): groups that write, or that several statements
  read (a row that a fused chain reads at every step), whose elements no
  other thread touches, with a fixed tile of at most `max_private_elements` elements (the
  per-thread accumulators: 8x8 of them make a register micro-tile). They
  are loaded before the tile's code and stored after it, by each thread.
  The atomic sums of `poly-parallel-reduction` are promoted although other
  threads update the same elements: each thread's buffer starts at 0 and is
  added to the tensor atomically at the end (never to shared memory);
- shared-memory promotion at the tile level below the tile loops that
  iterate inside the block (bands whose members are all tile indices, e.g.
  tmm's `kk` tile loop, after any leading members that take one value in a
  block, split off: split-K's untiled image of a slice): groups with a
  fixed tile, elements accessed more than once, and at least one access
  whose last index does not follow `thread_x` (not coalesced) or, read
  only, elements that several threads read (a matmul's `B(k, n)`; a
  convolution's image, read alike by the threads of every filter),
  greedily within the shared memory budget. A shared tile that every
  thread reads alike (a convolution's filters on the plane rule's threads)
  is laid out with the dimension its statement indexes by an output index
  last, unpadded (`_broadcast_order`): a thread's register tile then reads
  consecutive elements, as vectors.
  Copies into the buffer run between two `sync_` statements (the buffer may
  still be read from the previous tile; the copied data is read by other
  threads); copies back follow a `sync_` and precede another; a shared
  temporary that each tile writes before reading it (neither copied in nor
  back) gets a `sync_` at the start of each tile where a block runs several.
  A read-only group whose tensor nothing in the kernel writes is then
  hoisted to the outermost tile level where its buffer grows at most
  `HOIST_GROWTH` times, fits, and is loaded at least `HOIST_GROWTH` times
  less in all than the inner copies load (the inner tiles reuse its
  elements): it is loaded once for all the inner tiles (gconv's input
  planes, once for all output
  channels; not tmm's operand panels, which no inner tile reuses).
The promoted references are rewritten to access the buffers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import islpy as isl
from xdsl.dialects.builtin import AnyFloat, DictionaryAttr, IntegerAttr, IntegerType, MemRefType, StringAttr
from xdsl.ir import Attribute, SSAValue

from tcir.dialects.poly import ScopOp
from tcir.dialects.tc import AllocOp, ReadOp, TensorType, UpdateOp
from tcir.lowering.tc_point import PROMOTED
from tcir.polyhedral.gpu_mapping import (
    BLOCK_IDS,
    KERNEL_MARK,
    SYNC_PREFIX,
    THREAD_IDS,
    is_group_band,
    maps_threads,
    node_at,
    project_params,
)
from tcir.polyhedral.promotion.affine import NotExpressible, coalesced, function_of
from tcir.polyhedral.promotion.copies import Copy, FlatCopy, VectorCopy, flat_copy_pays, promote_access
from tcir.polyhedral.promotion.indirect import IndirectCopy
from tcir.polyhedral.promotion.references import (
    Group,
    Reference,
    group_references,
    references,
)
from tcir.polyhedral.promotion.tiles import ArrayTile

NodeType = isl.schedule_node_type
Path = tuple[int, ...]

SHARED_SPACE = 3
PRIVATE_SPACE = 5
HOIST_GROWTH = 2
"""How much larger a shared buffer may grow to be loaded at an outer tile level."""
BUFFERS = "buffers"
"""Attribute of a promoted `poly.scop`: buffer name -> memref type."""


def private_buffers(scop: ScopOp) -> dict[str, MemRefType[Attribute]]:
    """The private buffers of `poly-promote` in `scop`, by name."""
    types = scop.attributes.get(BUFFERS, DictionaryAttr({}))
    assert isinstance(types, DictionaryAttr)
    return {
        name: type
        for name, type in types.data.items()
        if isinstance(type, MemRefType)
        and isinstance(type.memory_space, IntegerAttr)
        and type.memory_space.value.data == PRIVATE_SPACE
    }


def private_statements(scop: ScopOp) -> set[str]:
    """The statements of `scop` that access a private buffer of `poly-promote`."""
    private = {StringAttr(name) for name in private_buffers(scop)}
    return {
        stmt.sym_name.data
        for stmt in scop.statements
        for op in stmt.body.block.walk()
        if isinstance(op, ReadOp | UpdateOp) and op.attributes.get(PROMOTED) in private
    }


def _kernels(node: isl.ScheduleNode, path: Path) -> list[Path]:
    if (
        node.get_type() == NodeType.mark
        and node.mark_get_id().get_name() == KERNEL_MARK
    ):
        return [path]
    return [
        p for k in range(node.n_children()) for p in _kernels(node.child(k), (*path, k))
    ]


def _param_names(obj: isl.UnionSet | isl.Set | isl.Map | isl.UnionMap) -> set[str]:
    space = obj.get_space()
    return {
        space.get_dim_name(isl.dim_type.param, k)
        for k in range(space.dim(isl.dim_type.param))
    }


def _is_tile_band(node: isl.ScheduleNode) -> bool:
    """A band all of whose members are tile indices (no iterator appears
    outside an integer division), like the tile loops of `poly-tile`."""
    if node.get_type() != NodeType.band:
        return False
    schedule = node.band_get_partial_schedule()
    for k in range(node.band_n_member()):
        pieces = schedule.get_union_pw_aff(k).get_pw_aff_list()
        for j in range(pieces.n_pw_aff()):
            for _, aff in pieces.get_at(j).get_pieces():
                if any(
                    not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()
                    for d in range(aff.dim(isl.dim_type.in_))
                ):
                    return False
    return True


def _one_tile_per_block(site: Site) -> bool:
    """Whether every block runs one tile of `site` (a prefix value, whatever
    its threads) at most."""
    tiles = project_params(site.prefix.intersect_domain(site.instances), THREAD_IDS).range()
    return tiles.n_set() <= 1 and (tiles.is_empty() or isl.Set.from_union_set(tiles).is_singleton())


def _tiles_within(outer: Site, inner: Site) -> int:
    """How many tiles of `inner` one tile of `outer` holds, at most (the box
    of the inner prefixes that share an outer one)."""
    pairs = outer.prefix.reverse().apply_range(inner.prefix).intersect_domain(
        outer.prefix.intersect_domain(inner.instances).range()
    )
    together = pairs.reverse().apply_range(pairs)
    if together.n_map() != 1:
        return 1  # prefixes of several shapes: count none
    together = isl.Map.from_union_map(together).deltas()
    count = 1
    for d in range(together.dim(isl.dim_type.set)):
        top = together.dim_max_val(d)
        count *= int(top.to_python()) + 1 if top.is_int() else 1
    return count


def _members_fixed_per_block(band: isl.ScheduleNode) -> int:
    """How many leading members of the block-mapped `band` take one value
    in each block (given the block ids of the filter above it)."""
    domain = band.get_domain()
    partial = band.band_get_partial_schedule()
    for k in range(band.band_n_member()):
        member = isl.UnionMap.from_union_pw_aff(partial.get_union_pw_aff(k))
        values = member.intersect_domain(domain).range()
        if values.is_empty() or not isl.Set.from_union_set(values).is_singleton():
            return k
    return band.band_n_member()


def _fixed_then_tiles(node: isl.ScheduleNode) -> isl.ScheduleNode | None:
    """Band `node` split after its leading members that take one value in
    each block, where those after them are tile indices (split-K's loop
    over a slice's k tiles whose image member is untiled, one image a
    slice), so that copies may go below both; else None."""
    if node.get_type() != NodeType.band:
        return None
    fixed = _members_fixed_per_block(node)
    if not 0 < fixed < node.band_n_member():
        return None
    split = node.band_split(fixed)
    return split if _is_tile_band(split.child(0)) else None


def _buffer_bytes(group: Group, shape: Sequence[int]) -> int:
    """The bytes of a buffer of `shape` for `group`'s tensor elements."""
    assert isinstance(group.tensor.type, TensorType)
    element_type = group.tensor.type.element_type
    if isinstance(element_type, AnyFloat):
        size = element_type.bitwidth // 8
    else:
        assert isinstance(element_type, IntegerType)
        size = max(1, element_type.width.data // 8)
    return size * math.prod(shape)


MAPPING_IDS = (*BLOCK_IDS, *THREAD_IDS)


@dataclass
class Site:
    """Where copies go: a node's path, its prefix schedule, the statement
    instances below it (constrained by the block and thread mapping), and
    for each statement the band mapped to threads above it."""

    path: Path
    prefix: isl.UnionMap
    instances: isl.UnionSet
    thread_bands: dict[str, isl.ScheduleNode]
    keys: dict[str, tuple[isl.UnionMap, isl.UnionMap] | None] = field(default_factory=dict)
    """By statement, what `Promoter._coalesced` compares its references on."""

    @cached_property
    def grouped(self) -> bool:
        """Whether threads take this site's points in groups (`size_per_thread`)."""
        return any(band.n_children() == 1 and is_group_band(band.child(0)) for band in self.thread_bands.values())

    @cached_property
    def same_tile(self) -> isl.UnionMap:
        """`{ S[i] -> S'[j] }`: pairs of instances in one tile (computed once:
        the prefix never changes, and every copy of the site asks)."""
        return self.prefix.apply_range(self.prefix.reverse())


@dataclass
class Decision:
    """A promoted group: its buffer and each reference's buffer index."""

    site: Site
    group: Group
    buffer: str
    indices: list[isl.MultiAff]


@dataclass
class Promoter:
    """Promotes the groups of one scop (see the module docstring)."""

    scop: ScopOp
    schedule: isl.Schedule
    shared: bool
    private: bool
    max_shared_bytes: int
    max_private_elements: int
    vector_width: int = 1
    """Elements a thread reads at once along a shared buffer's rows (see `_padded`)."""
    copy_vector_width: int = 1
    """Elements a thread copies at once into a shared buffer (`VectorCopy`),
    where the tile's rows are aligned groups of them."""
    transpose_copies: bool = False
    """Lay out shared tiles with the dimension a thread's reads run along
    last (`_laid_out`)."""
    buffers: dict[str, MemRefType[Attribute]] = field(
        default_factory=dict[str, MemRefType[Attribute]]
    )
    copies: list[Copy] = field(default_factory=list[Copy])
    syncs: int = 0
    order: isl.UnionMap = field(init=False)
    """The statement instances' order before promotion (copies come later)."""
    shared_bytes: int = 0
    """Shared memory promoted so far, in all kernels: kernels of a top-level
    set run in one launch, so the budget is the scop's."""

    @property
    def _row_width(self) -> int:
        """The vector width shared rows are padded for: that of the compute
        reads or of the copies, whichever is wider."""
        return max(self.vector_width, self.copy_vector_width)

    @property
    def context(self) -> isl.Set:
        """The ranges of the block and thread ids."""
        return self.schedule.get_root().child(0).context_get_context()

    @cached_property
    def all_references(self) -> list[Reference]:
        """The references of the scop's statements (promotion rewrites their
        attributes only: they stay the same throughout)."""
        return references(self.scop.statements)

    @property
    def threads(self) -> list[tuple[str, int]]:
        """The thread ids of the mapping and their counts, x first."""
        context = self.context
        found: list[tuple[str, int]] = []
        for ident in THREAD_IDS:
            position = context.find_dim_by_name(isl.dim_type.param, ident)
            if position >= 0:
                values = context.move_dims(
                    isl.dim_type.set, 0, isl.dim_type.param, position, 1
                )
                found.append((ident, int(values.dim_max_val(0).to_python()) + 1))
        return found

    def run(self) -> isl.Schedule:
        """The schedule with the copies; `buffers` and `copies` describe them."""
        self.order = _without_extensions(self.schedule.get_root()).get_schedule().get_map()
        root = self.schedule.get_root()
        if root.n_children() == 0 or root.child(0).get_type() != NodeType.context:
            return self.schedule
        for kernel in reversed(_kernels(root, ())):
            self.kernel(kernel)
        return self.schedule

    def kernel(self, path: Path) -> None:
        block_filter = node_at(self.schedule, path).child(0)
        if (
            block_filter.get_type() != NodeType.filter
            or not _param_names(block_filter.filter_get_filter()) & set(BLOCK_IDS)
            or block_filter.child(0).get_type() != NodeType.band
        ):
            return  # no band mapped to blocks: nothing to tile
        private_path = (*path, 0, 0, 0)
        outer_paths: list[Path] = []
        band = block_filter.child(0)
        fixed = _members_fixed_per_block(band)
        if self.shared and 0 < fixed < band.band_n_member():
            # The members after those fixed by the block ids are loops of
            # each block: split them off, so that a copy may go above them.
            self.schedule = band.band_split(fixed).get_schedule()
            outer_paths.append(private_path)
            private_path = (*private_path, 0)
        shared_path = private_path
        while True:
            node = node_at(self.schedule, shared_path)
            if not _is_tile_band(node):
                split = _fixed_then_tiles(node)
                if split is None:
                    break
                self.schedule = split.get_schedule()
            outer_paths.append(shared_path)
            shared_path = (*shared_path, 0)
        done: set[Reference] = set()
        private: list[Decision] = []
        if self.private and self.threads:
            private = self.promote_private(self._site(private_path))
            done = {r for d in private for r in d.group.refs}
        shared: list[Decision] = []
        if self.shared:
            shared = self.promote_shared(self._site(shared_path), done)
            outer_sites = [self._site(p) for p in outer_paths]
            shared = [self._hoisted(d, outer_sites) for d in shared]
        # Innermost first (isl grafts nowhere below an extension node; a graft
        # leaves its ancestors' paths), shared before private at one node.
        grafts = [(p, [d for d in shared if d.site.path == p], True) for p in {d.site.path for d in shared}]
        grafts.append((private_path, private, False))
        for site_path, decisions, is_shared in sorted(grafts, key=lambda g: (-len(g[0]), not g[2])):
            self.graft(site_path, decisions, shared=is_shared)

    # -- sites ---------------------------------------------------------------------------

    def _site(self, path: Path) -> Site:
        node = node_at(self.schedule, path)
        names = {s.sym_name.data for s in self.scop.statements}
        instances = isl.UnionSet.empty(node.get_domain().get_space())
        bands: dict[str, isl.ScheduleNode] = {}
        for domain, band in _leaves(node, node.get_domain(), None):
            sets = domain.get_set_list()
            for s in (sets.get_at(k) for k in range(sets.n_set())):
                if s.get_tuple_name() in names:
                    instances = instances.union(isl.UnionSet.from_set(s))
                    if band is not None:
                        bands[s.get_tuple_name()] = band
        instances = instances.intersect_params(self.context)
        return Site(path, node.get_prefix_schedule_union_map(), instances, bands)

    def _footprint(
        self, site: Site, ref: Reference, per_thread: bool
    ) -> isl.Map | None:
        """`{ [p] -> T[a] }`, per block or (with thread ids) per thread."""
        if ref.access is None:
            return None
        return self._elements(site, isl.UnionMap.from_map(ref.access), per_thread)

    def _elements(
        self, site: Site, accesses: isl.UnionMap, per_thread: bool
    ) -> isl.Map | None:
        """The footprint `{ [p] -> T[a] }` of `accesses` (`{ S[i] -> T[a] }`)."""
        accesses = accesses.intersect_domain(site.instances)
        hidden = BLOCK_IDS if per_thread else MAPPING_IDS
        footprint = project_params(accesses.apply_domain(site.prefix), hidden)
        if footprint.is_empty():
            return None
        # Constraints on the elements that the prefix values already imply
        # (a split-K slice's bounds beside its k tile's) are dropped: isl's
        # AST generator can lose instances of copies that repeat them.
        prefixes = footprint.domain()
        elements = isl.Map.from_union_map(footprint.gist_domain(prefixes).intersect_domain(prefixes))
        return _without_spare_divisions(elements)

    def _groups(
        self, site: Site, per_thread: bool, skip: set[Reference]
    ) -> list[Group]:
        refs = [
            r
            for r in self.all_references
            if r not in skip
            and not isl.UnionSet(r.stmt.domain.data)
            .intersect(site.instances)
            .is_empty()
        ]
        arrays = list(dict.fromkeys(r.array for r in refs))
        return [
            group
            for array in arrays
            for group in group_references(
                [r for r in refs if r.array == array],
                lambda r: self._footprint(site, r, per_thread),
            )
        ]

    def _indices(
        self, site: Site, group: Group, tile: ArrayTile
    ) -> list[isl.MultiAff] | None:
        """Each reference's buffer index as a function of its statement's iterators."""
        index = isl.UnionMap.from_map(isl.Map.from_multi_aff(tile.index()))
        result: list[isl.MultiAff] = []
        for ref in group.refs:
            assert ref.access is not None
            pairs = site.prefix.range_product(isl.UnionMap.from_map(ref.access))
            function = pairs.apply_range(index).intersect_domain(site.instances)
            try:
                result.append(
                    function_of(isl.Map.from_union_map(function), THREAD_IDS, late=BLOCK_IDS)
                )
            except NotExpressible:
                return None
        return result

    # -- heuristics --------------------------------------------------------------------------

    def promote_private(self, site: Site) -> list[Decision]:
        decisions: list[Decision] = []
        groups = self._groups(site, True, set())
        for group in groups:
            tile = group.tile
            if (
                not (group.writes or _read_by_statements(group) > 1)
                or any(r.conditional for r in group.refs)
                or group.footprint is None
                or tile is None
                or tile.elements > self.max_private_elements
                or not (group.atomic or _thread_exclusive(group.footprint))
                or self._shared_with_other_threads(site, group, groups)
            ):
                continue
            indices = self._indices(site, group, tile)
            if indices is not None:
                buffer = self._buffer("private", group, tile.sizes, PRIVATE_SPACE)
                decisions.append(Decision(site, group, buffer, indices))
        return decisions

    def _shared_with_other_threads(self, site: Site, group: Group, groups: list[Group]) -> bool:
        """Whether another group of the same tensor touches elements of
        `group`'s in the tile, on any thread: per-thread footprints of
        different groups can be disjoint although one thread reads what
        another wrote (a private copy would hide the write until the end)."""
        mine = _accesses(group)
        for other in groups:
            if other is group or other.refs[0].array != group.refs[0].array:
                continue
            theirs = _accesses(other)
            if mine is None or theirs is None:  # indirect: may touch anything
                return True
            ours, others = self._elements(site, mine, False), self._elements(site, theirs, False)
            if ours is not None and others is not None and not ours.intersect(others).is_empty():
                return True
        return False

    def promote_shared(self, site: Site, skip: set[Reference]) -> list[Decision]:
        decisions: list[Decision] = []
        budget = self.max_shared_bytes - self.shared_bytes
        groups = self._groups(site, False, skip)
        # Indirect groups first: the index reads they replace need no copy.
        groups.sort(key=lambda g: g.refs[0].indirection is None)
        consumed: set[ReadOp] = set()
        for group in groups:
            tile = group.tile
            if group.footprint is None or tile is None or not _guarded_copyable(group):
                continue
            if group.atomic:  # combined across the block's threads: never one shared copy
                continue
            indirect = group.refs[0].indirection is not None
            if not indirect and all(r.op in consumed for r in group.refs):
                continue
            # An indirect group is promoted for its gathers: the copy issues
            # them all at once, instead of one dependent load per iteration.
            if not indirect and (
                not self._reused(site, group)
                or (all(self._coalesced(site, r) for r in group.refs) and not self._read_by_several_threads(site, group))
            ):
                continue
            group, shape = self._buffer_layout(site, group)
            tile = group.tile
            assert tile is not None
            size = _buffer_bytes(group, shape)
            if size > budget:
                continue
            indices = self._indices(site, group, tile)
            if indices is not None:
                budget -= size
                self.shared_bytes += size
                buffer = self._buffer("shared", group, shape, SHARED_SPACE)
                decisions.append(Decision(site, group, buffer, indices))
                consumed |= {
                    r.indirection.index
                    for r in group.refs
                    if r.indirection is not None
                    and r.indirection.index.result.has_one_use()
                }
        return decisions

    def _buffer_layout(self, site: Site, group: Group) -> tuple[Group, list[int]]:
        """`group` laid out for a shared buffer at `site`, and the buffer's
        shape: a broadcast tile (`_broadcast_order`) unpadded, since every
        thread reads the same element of it (no bank conflicts to pad
        against) and its rows stay whole vectors; others `_padded`."""
        broadcast = self._broadcast_order(site, group)
        group = self._laid_out(site, group, broadcast)
        assert group.tile is not None
        return group, list(group.tile.buffer_sizes) if broadcast else _padded(group.tile.buffer_sizes, self._row_width)

    def _laid_out(self, site: Site, group: Group, order: tuple[int, ...] = ()) -> Group:
        """`group` with its buffer's dimensions in `order` or, with
        `transpose_copies`, reordered so that a thread's reads run along the
        last: where threads take output points round-robin, the dimension
        read by the innermost reduction iterator (`_reduction_order`: a
        contraction's `B(k, n)` copied into `[n][k]`, read as vectors along
        k); where they take them in groups (`size_per_thread`), the one
        read by an output iterator (`_output_order`: `A(m, k)` copied into
        `[k][m]`, a group's rows read as one vector). The copy writes such a
        tile an element at a time (`Copy`)."""
        if not order and self.transpose_copies and group.tile is not None:
            order = _output_order(group) if site.grouped else _reduction_order(group)
        if not order:
            return group
        assert group.tile is not None
        return dataclasses.replace(group, tile=dataclasses.replace(group.tile, order=order))

    def _broadcast_order(self, site: Site, group: Group) -> tuple[int, ...]:
        """The layout (`ArrayTile.order`) of read-only `group`, where every
        thread of the block reads the same elements of it (a convolution's
        filters on the plane rule's threads), that puts last the one tensor
        dimension its statement indexes by an output index (the filters of
        `W(f, c, kh, kw)`): a thread's register tile then reads consecutive
        elements of the tile, which the CUDA compiler loads as vectors; ()
        where there is no such dimension, or it is the last already."""
        if group.writes or group.tile is None or len(group.tile.sizes) < 2:
            return ()
        if any(r.access is None or r.indirection is not None for r in group.refs):
            return ()
        per_thread = self._elements(site, _accesses(group), True)  # type: ignore[arg-type]
        if per_thread is None or not all(_same_for_all(per_thread, ident) for ident, _ in self.threads):
            return ()
        found = _output_dimensions(group)
        if found is None or len(found) != 1:
            return ()
        (last,) = found
        return () if group.tile.sizes[last] == 1 else _with_last(len(group.tile.sizes), last)

    def _hoisted(self, decision: Decision, sites: list[Site]) -> Decision:
        """`decision` at the outermost of `sites` (outer first) where its
        group is the same references with a fixed tile at most `HOIST_GROWTH`
        times larger that fits the budget; as it is where none is, or where
        the group writes, is indirect or its tensor is written in the kernel."""
        group = decision.group
        if group.writes or group.refs[0].indirection is not None or group.tile is None:
            return decision
        refs = set(group.refs)
        everything = self.all_references
        inner = self.buffers[decision.buffer].get_shape()
        for site in sites:
            if self._written_in(site, group.tensor, everything):
                return decision
            groups = self._groups(site, False, {r for r in everything if r not in refs})
            if len(groups) != 1 or set(groups[0].refs) != refs or groups[0].tile is None:
                continue
            outer, shape = self._buffer_layout(site, groups[0])
            assert outer.tile is not None
            growth = _buffer_bytes(group, shape) - _buffer_bytes(group, inner)
            loads = outer.tile.elements * HOIST_GROWTH
            if (
                math.prod(shape) > HOIST_GROWTH * math.prod(inner)
                or growth > self.max_shared_bytes - self.shared_bytes
                or loads > group.tile.elements * _tiles_within(site, decision.site)
            ):
                continue
            indices = self._indices(site, outer, outer.tile)
            if indices is None:
                continue
            self.shared_bytes += growth
            old = self.buffers[decision.buffer]
            self.buffers[decision.buffer] = MemRefType(old.element_type, shape, memory_space=old.memory_space)
            return Decision(site, outer, decision.buffer, indices)
        return decision

    def _dead_after(self, group: Group, live_in: isl.UnionMap) -> bool:
        """Whether what `group` writes is never read from its tensor: a
        temporary of the def that no reference outside the group reads, and
        that no tile of the group reads before writing it (its `live_in`
        empty: a softmax's exponentials, kept in registers)."""
        if not isinstance(group.tensor.owner, AllocOp):
            return False
        mine = set(group.refs)
        if any(r.tensor == group.tensor and r.reads and r not in mine for r in self.all_references):
            return False
        return live_in.is_empty()

    def _written_in(self, site: Site, tensor: SSAValue, refs: list[Reference]) -> bool:
        """Whether a statement below `site` writes `tensor`."""
        return any(
            r.writes
            and r.tensor == tensor
            and not isl.UnionSet(r.stmt.domain.data).intersect(site.instances).is_empty()
            for r in refs
        )

    def _read_by_several_threads(self, site: Site, group: Group) -> bool:
        """Whether threads of the block read elements of read-only `group`
        that other threads read too in a tile, those of one `thread_x`: a
        contraction's operand whose rows are coalesced (a matmul's `B(k,
        n)`, every row of threads reading the same `n`), which one copy to
        shared memory serves. (Elements read along `thread_x` by several
        threads, a convolution's shifted rows, stay where they are: their
        reads are coalesced and L1 serves them.)"""
        if group.writes or any(r.access is None for r in group.refs):
            return False
        per_thread = self._elements(site, _accesses(group), True)  # type: ignore[arg-type]
        return per_thread is not None and (
            (not _thread_exclusive(per_thread) and _thread_exclusive(per_thread, THREAD_IDS[:1]))
            or any(_same_for_all(per_thread, ident) for ident, size in self.threads[1:] if size > 1)
        )

    def _reused(self, site: Site, group: Group) -> bool:
        """Some element is accessed by several instances of one tile."""
        accesses = isl.UnionMap.empty(site.prefix.get_space())
        for ref in group.refs:
            assert ref.access is not None
            accesses = accesses.union(isl.UnionMap.from_map(ref.access))
        accesses = project_params(
            accesses.intersect_domain(site.instances), MAPPING_IDS
        )
        instances = project_params(site.prefix, MAPPING_IDS)
        return not instances.range_product(accesses).is_injective()

    def _coalesced(self, site: Site, ref: Reference) -> bool:
        """Threads next in `x` access elements next in the last dimension
        (a 0-d tensor: one element that a warp reads at once)."""
        if ref.access is None:
            return False
        if ref.access.dim(isl.dim_type.out) == 0:
            return True
        statement = ref.stmt.sym_name.data
        if statement not in site.keys:
            site.keys[statement] = self._thread_keys(site, ref)
        keyed = site.keys[statement]
        if keyed is None:
            return False
        key, x_values = keyed
        rank = ref.access.dim(isl.dim_type.out)
        last = ref.access.project_out(isl.dim_type.out, 0, rank - 1).reset_tuple_id(
            isl.dim_type.out
        )
        # The (key, x, last index) triples the instances reach, as a map
        # (key, x) -> last; the differences of the last indices at x and x + 1
        # for one key must all be 1. (Pairing the triples, not the instances,
        # keeps the relations small: the same answer, many times faster.)
        triples = key.flat_range_product(x_values).flat_range_product(isl.UnionMap.from_map(last))
        if triples.is_empty():
            return True
        reached = isl.Set.from_union_set(triples.range())
        n = reached.dim(isl.dim_type.set)
        by_key = isl.Map.from_domain(reached).move_dims(isl.dim_type.out, 0, isl.dim_type.in_, n - 1, 1)
        dims = [f"k{d}" for d in range(n - 2)]
        shift = isl.Map(f"{{ [{', '.join([*dims, 'x'])}] -> [{', '.join([*dims, 'x + 1'])}] }}")
        deltas = by_key.reverse().apply_range(shift.apply_range(by_key)).deltas()
        return deltas.is_subset(isl.Set("{ [1] }"))

    def _thread_keys(
        self, site: Site, ref: Reference
    ) -> tuple[isl.UnionMap, isl.UnionMap] | None:
        """For the instances at `site` of `ref`'s statement (the same for all
        its references): the schedule values besides the member `thread_x`
        iterates over (the outer schedule, the band's other members: the
        key), and that member's values; None where no band maps the
        statement to `thread_x`."""
        band = site.thread_bands.get(ref.stmt.sym_name.data)
        if band is None or ref.access is None:
            return None
        x = self._x_member(band, site.instances)
        if x is None:
            return None
        # Only the reference's statement: pairs of other statements' instances
        # would make the relations below large for nothing.
        own = site.instances.intersect(isl.UnionSet.from_set(ref.access.domain()))
        domain = project_params(isl.UnionMap.from_domain(own), MAPPING_IDS).domain()
        partial = band.band_get_partial_schedule()

        def member(k: int) -> isl.UnionMap:
            return isl.UnionMap.from_union_pw_aff(
                partial.get_union_pw_aff(k)
            ).intersect_domain(domain)

        key = project_params(band.get_prefix_schedule_union_map(), MAPPING_IDS)
        key = key.intersect_domain(domain)
        for k in range(band.band_n_member()):
            if k != x:
                key = key.flat_range_product(member(k))
        return key, member(x)

    def _x_member(self, band: isl.ScheduleNode, instances: isl.UnionSet) -> int | None:
        """The member of a thread-mapped band that `thread_x` iterates over."""
        ident, size = self.threads[0]
        partial = band.band_get_partial_schedule()
        mapped = isl.Set(
            f"[{ident}] -> {{ [f] : exists (e : f = {ident} + {size} * e) }}"
        )
        for k in range(band.band_n_member()):
            member = isl.UnionMap.from_union_pw_aff(partial.get_union_pw_aff(k))
            values = member.intersect_domain(instances).range()
            if values.is_empty() or not values.is_subset(isl.UnionSet.from_set(mapped)):
                continue
            spread = project_params(
                isl.UnionMap.from_range(values), MAPPING_IDS
            ).range()
            if not isl.Set.from_union_set(spread).is_singleton():
                return k
        return None

    def _buffer(self, kind: str, group: Group, shape: Sequence[int], space: int) -> str:
        assert isinstance(group.tensor.type, TensorType) and group.footprint is not None
        tensor = group.footprint.get_tuple_name(isl.dim_type.out)
        name = f"{kind}_{tensor}"
        k = 0
        while f"{name}_{k}" in self.buffers:
            k += 1
        name = f"{name}_{k}"
        self.buffers[name] = MemRefType(
            group.tensor.type.scalar_type,
            list(shape),
            memory_space=IntegerAttr(space, 64),
        )
        return name

    # -- copies ----------------------------------------------------------------------------------

    def _live_in(self, site: Site, group: Group, shared: bool) -> isl.UnionMap:
        """`{ S[i] -> T[a] }`: the group's reads in a tile of `site` whose
        value no write of the group in the same tile produces (the elements
        a copy into the buffer must bring). For a shared buffer the writes of
        every thread of the block count (the thread ids are projected out:
        per thread, a read of what another thread wrote would look live-in,
        and its copy would read the element from global memory before any
        write); a private buffer is its thread's alone."""
        reads = isl.UnionMap.empty(site.prefix.get_space())
        writes = isl.UnionMap.empty(site.prefix.get_space())
        for ref in group.refs:
            assert ref.access is not None
            access = isl.UnionMap.from_map(ref.access).intersect_domain(site.instances)
            if ref.reads:
                reads = reads.union(access)
            if ref.writes:
                writes = writes.union(access)
        if writes.is_empty():
            return reads
        order = self.order
        if shared:
            reads, writes, order = (project_params(m, THREAD_IDS) for m in (reads, writes, order))
        flow = (
            isl.UnionAccessInfo.from_sink(reads)
            .set_must_source(writes)
            .set_schedule_map(order)
            .compute_flow()
        )
        # { source -> [sink -> element] }, kept where source and sink share a tile.
        flows = flow.get_full_must_dependence().uncurry().intersect_domain(site.same_tile.wrap())
        return reads.subtract(flows.domain_factor_range())

    def _copy(self, decision: Decision, live_in: isl.UnionMap | None, shared: bool) -> Copy | None:
        """The copy of `decision`'s buffer: into it (of the group's reads
        `live_in`) or, where that is None, out of it (of its writes)."""
        site, group = decision.site, decision.group
        into_buffer = live_in is not None
        accesses = live_in
        if accesses is None:
            accesses = isl.UnionMap.empty(site.prefix.get_space())
            for ref in group.refs:
                if ref.writes and ref.access is not None:
                    accesses = accesses.union(isl.UnionMap.from_map(ref.access))
        footprint = self._elements(site, accesses, not shared)
        if footprint is not None and (any(r.conditional for r in group.refs) or not into_buffer):
            # A conditional read's elements, and the writes of a statement
            # padded to whole tiles (`poly-pad-tiles`), within the tensor.
            bounds = _bounds(footprint, group)
            if not footprint.range().is_subset(bounds):
                footprint = footprint.intersect_range(bounds)
        if footprint is None or footprint.is_empty():
            return None
        footprint = _as_box(footprint)
        assert decision.group.tile is not None
        kind = "read" if into_buffer else "write"
        threads = self.threads
        args = (
            f"{kind}_{decision.buffer}",
            decision.buffer,
            decision.group.tensor,
            into_buffer,
            coalesced(footprint),
            decision.group.tile,
            () if shared else tuple(ident for ident, _ in threads),
            tuple(self.scop.param_names),
            decision.group.atomic,
            tuple(threads),
        )
        indirection = decision.group.refs[0].indirection
        if indirection is not None:
            return IndirectCopy(*args, indirection)
        width = self.copy_vector_width
        if decision.group.tile.order:  # a transposing copy: coalesced reads, the last array index on thread_x
            return Copy(*args)
        if shared and into_buffer and not decision.group.atomic and _in_groups(footprint, decision, width):
            return VectorCopy(*args, width)
        if shared and not decision.group.atomic and threads and flat_copy_pays(decision.group.tile, threads):
            return FlatCopy(*args)
        return Copy(*args)

    def _sync(self, site: Site) -> tuple[isl.UnionMap, isl.UnionSet]:
        """A new `sync_` statement at every tile of `site`: its extension and filter."""
        name = f"{SYNC_PREFIX}promote{self.syncs}"
        self.syncs += 1
        sync = isl.UnionSet(f"{{ {name}[] }}")
        return isl.UnionMap.from_domain_and_range(site.prefix.range(), sync), sync

    def _subtree(
        self, site: Site, copies: list[Copy], shared: bool
    ) -> isl.ScheduleNode:
        """An extension node introducing `copies` (between syncs if `shared`),
        with their loops mapped to threads for shared buffers."""
        extension = isl.UnionMap.empty(site.prefix.get_space())
        parts: list[isl.UnionSet] = []
        for copy in copies:
            extension = extension.union(copy.extension())
            parts.append(copy.domain().to_union_set())
        if shared:
            (first, first_filter), (last, last_filter) = (
                self._sync(site),
                self._sync(site),
            )
            extension = extension.union(first).union(last)
            parts = [first_filter, *parts, last_filter]
        filters = isl.UnionSetList.alloc(extension.get_ctx(), len(parts))
        for part in parts:
            filters = filters.add(part)
        node = (
            isl.ScheduleNode.from_extension(extension).child(0).insert_sequence(filters)
        )
        for k, copy in enumerate(copies):
            position = k + 1 if shared else k
            band = node.child(position).child(0)
            if copy.elements.dim(isl.dim_type.out) > 0:  # a 0-d tensor's copy has no loop
                band = band.insert_partial_schedule(copy.schedule())
            if shared:
                band = band.insert_filter(copy.thread_filter())
            node = _ancestor_of_type(band, NodeType.sequence)
        return node.parent()

    def graft(self, path: Path, decisions: list[Decision], shared: bool) -> None:
        """Insert the copies of `decisions` around the node at `path` and
        rewrite the promoted references."""
        kept: list[tuple[Decision, Copy | None, Copy | None]] = []
        for d in decisions:
            live_in = self._live_in(d.site, d.group, shared)
            dead = self._dead_after(d.group, live_in)
            into = self._copy(d, live_in, shared)
            out = None if dead and shared else self._copy(d, None, shared)
            if not shared and not all(_expressible(c) for c in (into, out) if c is not None):
                continue  # a private copy whose buffer index isl gives in pieces only: not promoted
            kept.append((d, into, None if dead else out))
        if not kept:
            return
        decisions = [d for d, _, _ in kept]
        site = decisions[0].site
        before = [c for _, c, _ in kept if c is not None]
        after = [c for _, _, c in kept if c is not None]
        params = self.scop.param_names
        for decision in decisions:
            for ref, index in zip(decision.group.refs, decision.indices):
                promote_access(ref.op, decision.buffer, index, params)
        node = node_at(self.schedule, path)
        if before:
            node = node.graft_before(self._subtree(site, before, shared))
        elif shared and not after and any(d.group.writes for d in decisions) and not _one_tile_per_block(site):
            # A shared temporary written and read within each tile, with no
            # copy whose syncs would fence it: a tile's writes must wait for
            # the threads still reading the previous tile's values.
            extension, _ = self._sync(site)
            node = node.graft_before(isl.ScheduleNode.from_extension(extension))
        if after:
            node = node.graft_after(self._subtree(site, after, shared))
        self.schedule = node.get_schedule()
        self.copies += before + after


def _expressible(copy: Copy) -> bool:
    """Whether `copy` has a buffer index of one quasi-affine piece (isl
    splits some private ones by the parity of a warp's index: `mv` with
    `warps=[2, 2]` crashed the pass)."""
    try:
        copy.buffer_index()
    except NotExpressible:
        return False
    return True


def _reduction_order(group: Group) -> tuple[int, ...]:
    """The layout (`ArrayTile.order`) that puts last the tensor dimension
    every read of `group` indexes by its statement's innermost iterator,
    where that iterator is a reduction's (no write of the statement uses
    it: the loop `poly-vectorize` reads in vectors) and indexes no other
    dimension, the last one included; () where there is no such dimension
    or it is already the last."""
    found: set[int] = set()
    for ref in group.refs:
        if ref.writes or ref.access is None or ref.indirection is not None:
            return ()
        innermost = ref.access.dim(isl.dim_type.in_) - 1
        writes = isl.UnionMap(ref.stmt.writes.data)
        if innermost < 0 or writes.is_empty() or _dimensions_using(isl.Map.from_union_map(writes), innermost):
            return ()
        using = _dimensions_using(ref.access, innermost)
        if len(using) != 1:
            return ()
        found.add(using[0])
    if len(found) != 1 or group.tile is None:
        return ()
    (vector,) = found
    return _with_last(len(group.tile.sizes), vector)


def _output_dimensions(group: Group) -> set[int] | None:
    """The tensor dimensions that the reads of `group` index by iterators
    their statements write with (a contraction's `A(m, k)`: m); None where a
    reference is no plain read or its statement writes a relation (a
    scatter)."""
    found: set[int] = set()
    for ref in group.refs:
        if ref.writes or ref.access is None or ref.indirection is not None:
            return None
        writes = isl.UnionMap(ref.stmt.writes.data)
        if writes.is_empty() or not writes.is_single_valued():
            return None
        write = isl.Map.from_union_map(writes)
        outputs = [i for i in range(ref.access.dim(isl.dim_type.in_)) if _dimensions_using(write, i)]
        found |= {d for i in outputs for d in _dimensions_using(ref.access, i)}
    return found


def _output_order(group: Group) -> tuple[int, ...]:
    """The layout (`ArrayTile.order`) that puts last the one dimension of
    more than one element in the tile among `_output_dimensions` (`A(m, k)`
    copied into `[k][m]`); () where there is none, several, or it is
    already the last."""
    found = _output_dimensions(group)
    if found is None or group.tile is None:
        return ()
    sizes = group.tile.sizes
    found = {d for d in found if sizes[d] > 1}
    if len(found) != 1:
        return ()
    (last,) = found
    return _with_last(len(sizes), last)


def _with_last(rank: int, last: int) -> tuple[int, ...]:
    """The layout (`ArrayTile.order`) of `rank` dimensions with dimension
    `last` moved last; () where it is already."""
    return () if last == rank - 1 else (*(k for k in range(rank) if k != last), last)


def _dimensions_using(access: isl.Map, iterator: int) -> list[int]:
    """The output dimensions of `access` (one map) whose subscript depends on input dimension `iterator`."""
    subscripts = isl.PwMultiAff.from_map(access)
    return [
        k
        for k in range(subscripts.dim(isl.dim_type.out))
        if any(aff.involves_dims(isl.dim_type.in_, iterator, 1) for _, aff in subscripts.get_pw_aff(k).get_pieces())
    ]


def _without_spare_divisions(footprint: isl.Map) -> isl.Map:
    """`footprint` without its existentially quantified variables where it is
    the same set without them (the block and thread ids projected out of a
    round-robin mapping that covers the whole tile leave some): isl's AST
    generation of copies over them took minutes for some mappings."""
    plain = footprint.remove_divs()
    return plain if plain.is_subset(footprint) else footprint


def _as_box(footprint: isl.Map) -> isl.Map:
    """`footprint` as the box of each element index between its least and
    greatest value at each prefix, where its pieces bound element indices
    by divisions and it is that box in fewer pieces without any. A strided
    tile's exact footprint can come out of the projection of the block ids
    as pieces over divisions (a stride-2 convolution's `2 * w + kw` on 64
    columns a block), whose copy isl's AST generator fails on; a box whose
    bounds need divisions (floors of the block ids) makes copies that isl's
    analyses of a thread's loops get lost in. Where isl fails on the box
    (its coalescing can), the exact footprint."""
    rank = footprint.dim(isl.dim_type.out)
    pieces = footprint.get_basic_maps()
    if rank == 0 or len(pieces) < 2 or not any(_divides_elements(m) for m in pieces):
        return footprint
    try:
        ranges = []
        for k in range(rank):
            least, greatest = isl.Map.from_pw_aff(footprint.dim_min(k)), isl.Map.from_pw_aff(footprint.dim_max(k))
            between = least.apply_range(isl.Map("{ [x] -> [y] : y >= x }"))
            ranges.append(between.intersect(greatest.apply_range(isl.Map("{ [x] -> [y] : y <= x }"))))
        box = ranges[0]
        for more in ranges[1:]:
            box = box.flat_range_product(more)
        tensor = footprint.get_tuple_id(isl.dim_type.out)
        box = box.set_tuple_id(isl.dim_type.out, tensor).intersect_domain(footprint.domain()).coalesce()
        parts = box.get_basic_maps()
        plain = len(parts) < len(pieces) and all(m.dim(isl.dim_type.div) == 0 for m in parts)
        return box if plain and box.is_subset(footprint) else footprint
    except isl.Error:
        return footprint


def _divides_elements(piece: isl.BasicMap) -> bool:
    """Whether a constraint of `piece` bounds an element index by a division."""
    divisions, rank = piece.dim(isl.dim_type.div), piece.dim(isl.dim_type.out)
    return any(
        any(not c.get_coefficient_val(isl.dim_type.div, k).is_zero() for k in range(divisions))
        and any(not c.get_coefficient_val(isl.dim_type.out, j).is_zero() for j in range(rank))
        for c in piece.get_constraints()
    )


def _guarded_copyable(group: Group) -> bool:
    """Whether a shared copy of `group` is safe: a group of unconditional
    references, or a read-only one of a tensor of static shape, copied
    within the tensor's bounds (`_bounds`). Its guarded reads run only where
    they are in bounds (range inference checks so), hence only on copied
    elements, though the unguarded footprint reaches beyond (a padded
    convolution's `I(h + kh - 1, w + kw - 1)`)."""
    if not any(r.conditional for r in group.refs):
        return True
    tensor_type = group.tensor.type
    return not group.writes and isinstance(tensor_type, TensorType) and tensor_type.static_shape() is not None


def _bounds(footprint: isl.Map, group: Group) -> isl.Set:
    """The elements of `group`'s tensor (of static shape), as the range of `footprint`."""
    tensor_type = group.tensor.type
    assert isinstance(tensor_type, TensorType)
    shape = tensor_type.static_shape()
    assert shape is not None
    box = isl.Set.universe(footprint.get_space().range())
    for k, size in enumerate(shape):
        box = box.lower_bound_val(isl.dim_type.set, k, 0).upper_bound_val(isl.dim_type.set, k, size - 1)
    return box


def _read_by_statements(group: Group) -> int:
    """How many statements read the elements of `group`."""
    return len({r.stmt for r in group.refs if r.reads})


def _accesses(group: Group) -> isl.UnionMap | None:
    """`{ S[i] -> T[a] }` of every reference of `group`; None if one is indirect."""
    result = None
    for ref in group.refs:
        if ref.access is None:
            return None
        access = isl.UnionMap.from_map(ref.access)
        result = access if result is None else result.union(access)
    return result


def _without_extensions(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """The tree at `node` without its extension nodes (the `sync_` statements
    they introduce drop out), so that isl can flatten it into a map."""
    if node.get_type() == NodeType.extension:
        return _without_extensions(node.delete())
    for k in range(node.n_children()):
        node = _without_extensions(node.child(k)).parent()
    return node


def _ancestor_of_type(
    node: isl.ScheduleNode, kind: isl.schedule_node_type
) -> isl.ScheduleNode:
    node = node.parent()
    while node.get_type() != kind:
        node = node.parent()
    return node


def _leaves(
    node: isl.ScheduleNode, domain: isl.UnionSet, band: isl.ScheduleNode | None
) -> list[tuple[isl.UnionSet, isl.ScheduleNode | None]]:
    """The instances of `domain` reaching each leaf below `node` (the filters
    on the way applied), with the band mapped to threads above the leaf."""
    kind = node.get_type()
    if kind == NodeType.leaf:
        return [(domain, band)]
    if kind == NodeType.filter:
        domain = domain.intersect(node.filter_get_filter())
        if maps_threads(node) and node.child(0).get_type() == NodeType.band:
            band = node.child(0)
    return [
        leaf
        for k in range(node.n_children())
        for leaf in _leaves(node.child(k), domain, band)
    ]


def _same_for_all(footprint: isl.Map, ident: str) -> bool:
    """Whether a per-thread footprint `{ [p] -> T[a] }` (thread ids as
    parameters) is the same for every value of thread id `ident`."""
    position = footprint.find_dim_by_name(isl.dim_type.param, ident)
    if position < 0:
        return True
    n_p = footprint.dim(isl.dim_type.in_)
    by_thread = footprint.move_dims(isl.dim_type.in_, n_p, isl.dim_type.param, position, 1)
    anyone = by_thread.project_out(isl.dim_type.in_, n_p, 1).insert_dims(isl.dim_type.in_, n_p, 1)
    return anyone.intersect_domain(by_thread.domain()).is_subset(by_thread)


def _thread_exclusive(footprint: isl.Map, ids: Sequence[str] = THREAD_IDS) -> bool:
    """No element of a per-thread footprint `{ [p] -> T[a] }` (thread ids as
    parameters) belongs to two threads of one tile that differ in `ids`."""
    n_p = footprint.dim(isl.dim_type.in_)
    rank = footprint.dim(isl.dim_type.out)
    owners = footprint.reset_tuple_id(isl.dim_type.out)
    for ident in set(THREAD_IDS) - set(ids):  # any value of the other ids
        position = owners.find_dim_by_name(isl.dim_type.param, ident)
        if position >= 0:
            owners = owners.project_out(isl.dim_type.param, position, 1)
    n_t = 0
    for ident in ids:
        position = owners.find_dim_by_name(isl.dim_type.param, ident)
        if position >= 0:
            owners = owners.move_dims(
                isl.dim_type.out, rank + n_t, isl.dim_type.param, position, 1
            )
            n_t += 1
    # { [p, a] -> [t] } must be single-valued.
    owners = owners.move_dims(isl.dim_type.in_, n_p, isl.dim_type.out, 0, rank)
    return owners.is_single_valued()


def _in_groups(footprint: isl.Map, decision: Decision, width: int) -> bool:
    """Whether each tile's `footprint` (`{ [p] -> T[a] }`) is made of whole
    aligned groups of `width` consecutive elements of 32 or 16 bits along
    the last dimension, that the buffer holds at aligned places: where
    `VectorCopy` deals groups that one vector load and store can move."""
    tile = decision.group.tile
    assert tile is not None
    element = decision.group.tensor.type.scalar_type  # type: ignore[attr-defined]
    if width == 1 or tile.strides[-1] != 1 or getattr(element, "bitwidth", None) not in (16, 32):
        return False
    rank = footprint.dim(isl.dim_type.out)
    a = [f"a{k}" for k in range(rank)]
    b = [*a[:-1], "b"]
    tensor = footprint.get_tuple_name(isl.dim_type.out)
    same_group = isl.Map(
        f"{{ {tensor}[{', '.join(a)}] -> {tensor}[{', '.join(b)}] : floor(b / {width}) = floor({a[-1]} / {width}) }}"
    )
    if not footprint.apply_range(same_group).is_subset(footprint):
        return False
    # The buffer's last index is `a - offset(p)`: aligned where the offset is.
    offset = isl.Map.from_aff(tile.offsets[-1])
    return offset.is_subset(offset.intersect_range(isl.Set(f"{{ [o] : o mod {width} = 0 }}")))


def _padded(sizes: Sequence[int], vector_width: int = 1) -> list[int]:
    """A shared buffer's shape. The rows of a 2-d or larger buffer are padded so
    that threads reading a column, one element each, hit distinct banks: an
    even last dimension grows by one. With a `vector_width` above 1 that
    divides the last dimension, rows are padded to an odd multiple of the
    width instead: every row then starts on a vector boundary, and threads
    reading `vector_width` elements of consecutive rows at once hit distinct
    groups of banks."""
    shape = list(sizes)
    if len(shape) < 2:
        return shape
    if vector_width > 1 and shape[-1] % vector_width == 0:
        if shape[-1] // vector_width % 2 == 0:
            shape[-1] += vector_width
    elif shape[-1] % 2 == 0:
        shape[-1] += 1
    return shape
