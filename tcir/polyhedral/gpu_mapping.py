"""Map a schedule tree to CUDA blocks and threads (the paper's Figure (e)).

The mapping is written into the tree with isl's own node kinds, so that isl's
AST generator produces the per-block and per-thread loops:
- a `context` node introduces the parameters `block_x`..., `thread_x`... with
  their ranges `0 <= block_x < grid_x`;
- each kernel's subtree sits under a `mark "kernel"`;
- above the outermost band, a mapping `filter` keeps the instances whose
  leading parallel members equal the block ids modulo the grid size
  (`exists e: m = block_y + grid_y * e`), so a block runs every grid-th tile
  (isl turns this into a loop starting at `block_y` with stride `grid_y`);
- above the innermost parallel band of each branch, a filter does the same
  for thread ids; a branch with fewer parallel members than the block has
  thread dimensions runs on thread id 0 of the others (and a branch with
  none on thread 0), so that no two threads run one instance; likewise a
  kernel without a parallel band runs on block 0 of the launch's grid.
- between the parts of a sequence that all threads of a block run together
  (above the thread filters), a `sync_<k>()` extension statement, which code
  generation turns into `__syncthreads()`, where a dependence (flow, anti or
  output, memory-based) relates instances of different threads of the block
  in the same iteration of the enclosing loops; and after the last part,
  inside a loop, where one relates instances of different iterations. The
  thread of an instance is given by its mapping filters; an instance no
  filter maps runs on every thread. Being unmapped, a sync keeps isl from
  hoisting thread guards around the sequence.
isl's AST generator rejects context nodes that introduce parameters, so code
generation moves the context into the AST build (`split_context`).
Blocks take the outermost parallel members, threads the innermost ones, and
the innermost mapped member goes to `x` (consecutive threads touch
consecutive elements). With `warps` (Triton's `warpsPerCTA`, x first), the
thread-mapped members' tile is first cut into `warps[k]` sub-tiles along the
member of thread dimension k; the next thread dimension numbers the
sub-tiles (x fastest) and the others deal each sub-tile's points round-robin:
`threads=[4, 8]` with `warps=[4, 2]` gives a block of 4x8x8 threads, one warp
per sub-tile of a quarter of the columns and half the rows. Reduction members are never coincident, so they are
never mapped. A leaf whose innermost parallel band has others' below it
runs on thread 0 (as a leaf under none), so no instance is mapped twice.
A top-level sequence whose children share no parallel band
becomes one kernel per child, launched in order.

Rows of a warp: with `threads=[32, Y]` where every branch maps one member
to x, the first band with parallel members below the kernel band and above
every branch (the point band of a tile of rows, over a softmax's sequence)
takes thread y, round-robin like any thread mapping: each warp runs the
sequence on its rows. Its sequences are then a warp's, their barriers
`syncwarp_<k>()` (`__syncwarp()`), and the block-wide statements under it
(combines of `poly-block-reduction`) run on the threads of a row.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

import islpy as isl

from tcir.errors import TCError
from tcir.polyhedral.bands import statement_names

NodeType = isl.schedule_node_type
Path = tuple[int, ...]
_Params = TypeVar("_Params", isl.Set, isl.UnionSet, isl.Map, isl.UnionMap)

BLOCK_IDS = ("block_x", "block_y", "block_z")
THREAD_IDS = ("thread_x", "thread_y", "thread_z")
KERNEL_MARK = "kernel"
SYNC_PREFIX = "sync_"
"""Extension statements `sync_<k>()` stand for `__syncthreads()`."""
SUBGROUP_SYNC_PREFIX = "syncwarp_"
"""Extension statements `syncwarp_<k>()` stand for `__syncwarp()`."""
ROW_THREADS = 32
"""Threads of a row where a block's rows go to its thread y (a warp)."""


def node_at(schedule: isl.Schedule, path: Path) -> isl.ScheduleNode:
    """The node of `schedule` at child positions `path` from the root."""
    node = schedule.get_root()
    for k in path:
        node = node.child(k)
    return node


def _parallel_members(node: isl.ScheduleNode) -> list[int]:
    """The band's leading coincident members that still vary once the outer
    bands are fixed (a member repeating an outer loop is not worth mapping)."""
    if node.get_type() != NodeType.band:
        return []
    domain = node.get_domain()
    prefix = node.get_prefix_schedule_union_map().intersect_domain(domain)
    partial = node.band_get_partial_schedule()
    members: list[int] = []
    for k in range(node.band_n_member()):
        if not node.band_member_get_coincident(k):
            break
        member = isl.UnionMap.from_union_pw_aff(partial.get_union_pw_aff(k))
        if not prefix.reverse().apply_range(member.intersect_domain(domain)).is_single_valued():
            members.append(k)
    return members


MAX_GRID = (2**31 - 1, 65535, 65535)


def mapped_grid(counts: list[int]) -> list[int]:
    """Grid sizes (x first) of a block per value of the outermost three of
    the members taking `counts` values (outer first), as `poly-map-to-gpu`
    maps them: members of one value are no parallel members to map."""
    mapped = [c for c in counts if c > 1][:3]
    return [min(c, limit) for c, limit in zip(reversed(mapped), MAX_GRID)] or [1]


def _strip_mine(node: isl.ScheduleNode, mapped: Sequence[int], sizes: Sequence[int]) -> isl.ScheduleNode:
    """Band `node` tiled by `sizes` (x first) along its `mapped` members (the
    innermost mapped member is x), by 1 along the others; returns the tile band."""
    per_member = [1] * node.band_n_member()
    for member, size in zip(reversed(mapped), sizes):
        per_member[member] = size
    multi = isl.MultiVal.zero(node.band_get_space())
    for k, size in enumerate(per_member):
        multi = multi.set_val(k, isl.Val.int_from_si(node.get_ctx(), size))
    return node.band_tile(multi)


def _member_filter(
    node: isl.ScheduleNode, member: int, ident: str, size: int, limit: int
) -> tuple[isl.UnionSet, int]:
    """Instances below band `node` whose member value is `ident` modulo `size`
    (in units of the member's stride), and that size: a size of 0 means one
    per distinct value, up to `limit`."""
    schedule = node.band_get_partial_schedule().get_union_pw_aff(member)
    relation = isl.UnionMap.from_union_pw_aff(schedule).intersect_domain(node.get_domain())
    values = isl.Set.from_union_set(relation.range())
    stride = values.get_stride_info(0)
    step = stride.get_stride()
    offset = stride.get_offset().get_constant_val()
    if size == 0:
        low, high = values.dim_min_val(0), values.dim_max_val(0)
        if low.is_int() and high.is_int():
            size = (high.to_python() - low.to_python()) // step.to_python() + 1
        else:  # symbolic extent: a fixed grid, blocks loop over the rest
            size = 256
        size = max(1, min(size, limit))
    # t = offset + step * (ident + size * e): tiles (or points) dealt round-robin.
    # `ident < size`: the grid is the largest of its kernels' sizes, and in a
    # kernel needing fewer blocks the others must not repeat its tiles.
    text = (
        f"[{ident}] -> {{ [t] : {ident} < {size} and "
        f"exists (e : t = {offset} + {step} * ({ident} + {size} * e)) }}"
    )
    mapped = isl.Set(text).align_params(values.get_space())
    return relation.intersect_range(isl.UnionSet.from_set(mapped)).domain(), size


Runs = tuple[isl.UnionMap, isl.Space, int, int, int]
"""A member's instances -> values, their space, the first value, the stride
and the length of each of its equal runs (`_runs`)."""


def _runs(node: isl.ScheduleNode, member: int, count: int) -> Runs:
    """`count` equal runs of the values of band `node`'s `member`."""
    schedule = node.band_get_partial_schedule().get_union_pw_aff(member)
    relation = isl.UnionMap.from_union_pw_aff(schedule).intersect_domain(node.get_domain())
    values = isl.Set.from_union_set(relation.range())
    low, high = values.dim_min_val(0), values.dim_max_val(0)
    if not (low.is_int() and high.is_int()):
        raise TCError("poly-map-to-gpu: warps need tiles of a known size (specialize the sizes)")
    step = values.get_stride_info(0).get_stride().to_python()
    first = low.to_python()
    points = (high.to_python() - first) // step + 1
    return relation, values.get_space(), first, step, step * -(-points // count)


def _sub_tile_filter(node: isl.ScheduleNode, runs: Sequence[Runs], counts: Sequence[int], ident: str) -> isl.UnionSet:
    """Instances below band `node` in the sub-tile numbered `ident`: the
    values of each member (x first) cut into `runs` (`counts` of them along
    it), the sub-tiles numbered with the first member's fastest."""
    result = node.get_domain()
    subs = [f"sub{k}" for k in range(len(runs))]
    for sub, (relation, space, first, _, length) in zip(subs, runs):
        run = isl.Set(f"[{sub}] -> {{ [t] : {sub} = floor((t - ({first})) / {length}) }}")
        result = result.intersect(relation.intersect_range(isl.UnionSet.from_set(run.align_params(space))).domain())
    number, stride = [], 1
    for sub, count in zip(subs, counts):
        number.append(f"{stride} * {sub}")
        stride *= count
    bounds = " and ".join(f"0 <= {sub} < {count}" for sub, count in zip(subs, counts))
    numbering = isl.Set(f"[{ident}, {', '.join(subs)}] -> {{ : {ident} = {' + '.join(number)} and {bounds} }}")
    result = result.intersect_params(numbering)
    for sub in subs:
        result = result.project_out(isl.dim_type.param, result.get_space().find_dim_by_name(isl.dim_type.param, sub), 1)
    return result


def _most_parallel(node: isl.ScheduleNode) -> int:
    """The most leading parallel members of a band in `node`'s subtree."""
    here = len(_parallel_members(node))
    below = [_most_parallel(node.child(k)) for k in range(node.n_children())]
    return max([here, *below])


def kernel_domains(schedule: isl.Schedule) -> list[isl.UnionSet]:
    """The statement instances of each `mark "kernel"` subtree, in schedule order."""
    found: list[isl.UnionSet] = []

    def visit(node: isl.ScheduleNode) -> None:
        if node.get_type() == NodeType.mark and node.mark_get_id().get_name() == KERNEL_MARK:
            found.append(node.get_domain())
            return
        for k in range(node.n_children()):
            visit(node.child(k))

    visit(schedule.get_root())
    return found


def project_params(obj: _Params, names: Sequence[str]) -> _Params:
    """`obj` without the parameters `names` (existentially quantified)."""
    for name in names:
        position = obj.get_space().find_dim_by_name(isl.dim_type.param, name)
        if position >= 0:
            obj = obj.project_out(isl.dim_type.param, position, 1)
    return obj


def mapped_context(context: isl.Set, mapping: isl.Set) -> isl.Set:
    """A scop's parameter `context` with the bounds of the block and thread
    ids of its `mapping` (the context node of `split_context`)."""
    context = context.align_params(mapping.get_space())
    return context.intersect(mapping.align_params(context.get_space()))


def split_context(schedule: isl.Schedule) -> tuple[isl.Schedule, isl.Set | None]:
    """`schedule` without the mapping context node below its root, and that context."""
    node = schedule.get_root().child(0)
    if node.get_type() != NodeType.context:
        return schedule, None
    context = node.context_get_context()
    return node.delete().get_schedule(), context


def maps_threads(node: isl.ScheduleNode, ignored: Collection[str] = ()) -> bool:
    """Whether `node` is a filter mapping instances to thread ids (other than `ignored`)."""
    if node.get_type() != NodeType.filter:
        return False
    space = node.filter_get_filter().get_space()
    names = {space.get_dim_name(isl.dim_type.param, k) for k in range(space.dim(isl.dim_type.param))}
    return bool(names & (set(THREAD_IDS) - set(ignored)))


def is_group_band(node: isl.ScheduleNode) -> bool:
    """Whether band `node` runs the points of a thread's groups
    (`size_per_thread`: the inner band that `_group_points` strip-mines off
    a thread-mapped one, none of its members coincident)."""
    parent = node.parent()
    return (
        node.get_type() == NodeType.band
        and parent.get_type() == NodeType.band
        and node.band_get_permutable()
        and not any(node.band_member_get_coincident(k) for k in range(node.band_n_member()))
        and any(parent.band_member_get_coincident(k) for k in range(parent.band_n_member()))
    )


def row_statements(schedule: isl.Schedule, names: Collection[str]) -> set[str]:
    """Those of the statements `names` that run below a filter mapping
    thread y and none mapping thread x: block-wide statements (which get no
    filter of their own) that run on the threads x of a row
    (`GpuMapping._rows_band`)."""
    found: set[str] = set()
    others = THREAD_IDS[1:]

    def visit(node: isl.ScheduleNode, reaching: set[str], rows: bool, columns: bool) -> None:
        if node.get_type() == NodeType.filter:  # isl has no domain below an extension node
            reaching = reaching & statement_names(node.filter_get_filter())
            rows = rows or maps_threads(node, THREAD_IDS[:1])
            columns = columns or maps_threads(node, others)
        if node.get_type() == NodeType.leaf and rows and not columns:
            found.update(reaching)
        for k in range(node.n_children()):
            visit(node.child(k), reaching, rows, columns)

    visit(schedule.get_root(), set(names), False, False)
    return found


def _block_level_sequences(
    node: isl.ScheduleNode, path: Path, in_loop: bool, rows: Collection[str] = ()
) -> list[tuple[Path, bool]]:
    """Sequences run by all threads of a block together (above every thread
    mapping filter but those of the row ids `rows`: then all threads of a
    row), and whether a loop of the kernel encloses them."""
    if maps_threads(node, rows):
        return []
    kind = node.get_type()
    found = [(path, in_loop)] if kind == NodeType.sequence else []
    in_loop = in_loop or kind == NodeType.band
    for k in range(node.n_children()):
        found += _block_level_sequences(node.child(k), (*path, k), in_loop, rows)
    return found


def _leaf_domains(node: isl.ScheduleNode) -> isl.UnionSet:
    """The instances reaching the leaves below `node`, with the mapping
    filters' constraints on the block and thread ids."""
    if node.get_type() == NodeType.leaf:
        return node.get_domain()
    result = None
    for k in range(node.n_children()):
        part = _leaf_domains(node.child(k))
        result = part if result is None else result.union(part)
    return result if result is not None else node.get_domain()


def _thread_relation(domains: isl.UnionSet, context: isl.Set) -> isl.UnionMap:
    """Statement instance -> `T[thread ids]` of every thread that runs it.

    The thread ids are the parameters of `context` named in `THREAD_IDS`; an
    instance whose filters do not constrain one runs on all its values."""
    space = context.get_space()
    names = [
        space.get_dim_name(isl.dim_type.param, k)
        for k in range(space.dim(isl.dim_type.param))
        if space.get_dim_name(isl.dim_type.param, k) in THREAD_IDS
    ]
    ids = ", ".join(names)
    threads = isl.Set(f"[{ids}] -> {{ T[{ids}] }}").intersect_params(context)
    result = isl.UnionMap.empty(domains.get_space())
    pieces = domains.intersect_params(context).get_set_list()
    for piece in (pieces.get_at(k) for k in range(pieces.n_set())):
        target = threads.align_params(piece.get_space())
        piece = piece.align_params(target.get_space())
        relation = isl.Map.from_domain_and_range(piece, target)
        for name in names:
            pos = relation.find_dim_by_name(isl.dim_type.param, name)
            relation = relation.project_out(isl.dim_type.param, pos, 1)
        result = result.union(isl.UnionMap.from_map(relation))
    return result


@dataclass(frozen=True)
class _Conflicts:
    """Which pairs of statement instances need a barrier between them: both
    touch one array element, at least one writes it, and different threads
    of the block run them (memory-based, so that no race is missed)."""

    reads: isl.UnionMap
    writes: isl.UnionMap
    threads: isl.UnionMap
    context: isl.Set

    def cross_thread(self, sources: isl.UnionSet, sinks: isl.UnionSet, order: isl.UnionMap) -> bool:
        """Whether some instance of `sources` and some later (by `order`, a
        relation source -> sink) instance of `sinks` conflict across threads."""
        src_writes = self.writes.intersect_domain(sources)
        src_reads = self.reads.intersect_domain(sources)
        dst_writes = self.writes.intersect_domain(sinks)
        dst_all = dst_writes.union(self.reads.intersect_domain(sinks))
        pairs = src_writes.apply_range(dst_all.reverse()).union(
            src_reads.apply_range(dst_writes.reverse())
        )
        pairs = pairs.intersect(order).intersect_params(self.context)
        if pairs.is_empty():
            return False
        by_thread = self.threads.reverse().apply_range(pairs).apply_range(self.threads)
        return _other_thread(by_thread)


def _other_thread(by_thread: isl.UnionMap) -> bool:
    """Whether `T[a] -> T[b]` relates two different threads: some difference
    `b - a` is not 0 (for isl far cheaper than subtracting the identity)."""
    differences: list[isl.Set] = []
    by_thread.deltas().foreach_set(differences.append)
    for difference in differences:
        zero = isl.Set.universe(difference.get_space())
        for k in range(difference.dim(isl.dim_type.set)):
            zero = zero.fix_dim_si(k, 0)
        if not difference.is_subset(zero):
            return True
    return False


def _part_domain(schedule: isl.Schedule, path: Path) -> isl.UnionSet:
    """The instances of the sequence part (filter node) at `path`."""
    return node_at(schedule, path).child(0).get_domain()


def _needed_syncs(
    schedule: isl.Schedule, path: Path, in_loop: bool, conflicts: _Conflicts | None
) -> list[int]:
    """After which parts of the sequence at `path` a barrier is needed.

    Between parts: the parts are cut greedily into runs without a barrier,
    a run ending before the first part that conflicts across threads with a
    part of the run in the same iteration of the enclosing loops. At the end
    (in a loop): when instances of the sequence conflict across threads with
    instances of a later iteration of the enclosing loops."""
    node = node_at(schedule, path)
    children = node.n_children()
    if conflicts is None:
        return list(range(children if in_loop else children - 1))
    prefix = node.get_prefix_schedule_union_map().intersect_domain(node.get_domain())
    same_iteration = prefix.apply_range(prefix.reverse())
    parts = [_part_domain(schedule, (*path, k)) for k in range(children)]
    syncs: list[int] = []
    run = None
    for k, part in enumerate(parts):
        if run is not None and conflicts.cross_thread(run, part, same_iteration):
            syncs.append(k - 1)
            run = None
        run = part if run is None else run.union(part)
    if in_loop:
        everything = node.get_domain()
        if conflicts.cross_thread(everything, everything, prefix.lex_lt_union_map(prefix)):
            syncs.append(children - 1)
    return syncs


def _insert_syncs(
    schedule: isl.Schedule, kernel: Path, conflicts: _Conflicts | None = None, rows: Collection[str] = ()
) -> isl.Schedule:
    """A `sync_<k>()` statement after the parts of every block-level sequence
    (and after the last one, for the next iteration, inside a loop) where the
    parts may be mapped to threads differently and read or overwrite what
    other threads wrote (or read): see `_needed_syncs`. Without `conflicts`
    (no accesses known) after every part. Sync statements are not mapped, so
    every thread reaches them. In a kernel whose thread ids `rows` number
    rows of a warp each, the sequences are a row's and the barriers its
    warp's, `syncwarp_<k>()` (rows share nothing: they are values of a
    coincident member)."""
    prefix_name = SUBGROUP_SYNC_PREFIX if rows else SYNC_PREFIX
    sequences = _block_level_sequences(node_at(schedule, kernel), kernel, False, rows)
    count = 0
    for path, in_loop in sorted(sequences, key=lambda item: -len(item[0])):
        # At every iteration of the loops around the sequence: a part may run
        # in fewer iterations than the parts it separates (an init at n = 0).
        sequence = node_at(schedule, path)
        prefix = sequence.get_prefix_schedule_union_map().intersect_domain(sequence.get_domain())
        for k in reversed(_needed_syncs(schedule, path, in_loop, conflicts)):
            node = node_at(schedule, (*path, k, 0))
            sync = isl.UnionSet(f"{{ {prefix_name}{count}[] }}")
            graft = isl.ScheduleNode.from_extension(
                isl.UnionMap.from_domain_and_range(prefix.range(), sync)
            )
            schedule = node.graft_after(graft).get_schedule()
            count += 1
    for path in sorted(_loop_bodies(node_at(schedule, kernel), kernel, rows), key=len, reverse=True):
        # A loop all threads run (a recurrence's steps): a sync ending each
        # iteration where a later one touches what another thread wrote.
        body = node_at(schedule, path)
        prefix = body.get_prefix_schedule_union_map().intersect_domain(body.get_domain())
        later = prefix.lex_lt_union_map(prefix)
        if conflicts is None or conflicts.cross_thread(body.get_domain(), body.get_domain(), later):
            sync = isl.UnionSet(f"{{ {prefix_name}{count}[] }}")
            graft = isl.ScheduleNode.from_extension(isl.UnionMap.from_domain_and_range(prefix.range(), sync))
            schedule = body.graft_after(graft).get_schedule()
            count += 1
    return schedule


def _loop_bodies(node: isl.ScheduleNode, path: Path, rows: Collection[str] = ()) -> list[Path]:
    """Thread-mapping filters right below a band that no thread filter
    (but of the row ids `rows`) is above: the bodies of loops that all
    threads of a block (or row) run together."""
    if maps_threads(node, rows):
        return []
    found = []
    for k in range(node.n_children()):
        if node.get_type() == NodeType.band and maps_threads(node.child(k), rows):
            found.append((*path, k))
        found += _loop_bodies(node.child(k), (*path, k), rows)
    return found


def _zero_filter(domain: isl.UnionSet, idents: Sequence[str]) -> isl.UnionSet:
    """The instances of `domain` run by the threads whose `idents` are 0."""
    if not idents:
        return domain
    params = ", ".join(idents)
    zeros = " and ".join(f"{i} = 0" for i in idents)
    return domain.intersect_params(isl.Set(f"[{params}] -> {{ : {zeros} }}"))


@dataclass(frozen=True)
class GpuMapping:
    """Grid and block sizes, CUDA order (x first); a grid size of 0 means
    "one block per tile" of the mapped member."""

    blocks: tuple[int, ...]
    threads: tuple[int, ...]
    warps: tuple[int, ...] = ()
    """Sub-tiles along the thread-mapped members, x first (none: one)."""
    size_per_thread: tuple[int, ...] = ()
    """Consecutive points a thread takes at a time along the thread-mapped
    members, x first (Triton's `sizePerThread`; none: 1)."""
    block_wide: frozenset[str] = frozenset()
    """Statements that every thread of the block runs together (the combines
    of `poly-block-reduction`): their leaves get no thread filter."""

    @property
    def block(self) -> tuple[int, ...]:
        """The block's sizes: the threads, then the number of sub-tiles."""
        return (*self.threads, math.prod(self.warps)) if self.warps else self.threads

    def context(self, blocks: Sequence[int]) -> isl.Set:
        idents = [*BLOCK_IDS[: len(blocks)], *THREAD_IDS[: len(self.block)]]
        sizes = [*blocks, *self.block]
        bounds = " and ".join(f"0 <= {i} < {s}" for i, s in zip(idents, sizes))
        return isl.Set(f"[{', '.join(idents)}] -> {{ : {bounds} }}")

    def map(
        self,
        schedule: isl.Schedule,
        accesses: tuple[isl.UnionMap, isl.UnionMap] | None = None,
    ) -> isl.Schedule:
        """`schedule` with kernel marks, mapping filters and the context.

        Threads `(0,)` mean "choose": 32x8 when some branch has two parallel
        members to map, else 256. `accesses` (reads, writes: instance ->
        element) let the barriers go where threads exchange data only;
        without them every block-level sequence part is followed by one.
        """
        top = schedule.get_root().child(0)
        kernels: list[Path] = [(0,)]
        if top.get_type() in (NodeType.sequence, NodeType.set) and not self._shared_band(top):
            kernels = [(0, k, 0) for k in range(top.n_children())]
        if self.threads == (0,):
            parallel = max(_most_parallel(node_at(schedule, p)) for p in kernels)
            threads = (32, 8) if parallel >= 2 else (256,)
            return dataclasses.replace(self, threads=threads).map(schedule, accesses)
        grid = [1] * len(self.blocks)
        for path in reversed(kernels):
            schedule, sizes = self._map_kernel(schedule, path, accesses)
            grid = [max(g, s) for g, s in zip(grid, sizes)]
        root_child = schedule.get_root().child(0)
        return root_child.insert_context(self.context(grid)).get_schedule()

    def _shared_band(self, node: isl.ScheduleNode) -> bool:
        return bool(_parallel_members(node))

    def _map_kernel(
        self,
        schedule: isl.Schedule,
        path: Path,
        accesses: tuple[isl.UnionMap, isl.UnionMap] | None = None,
    ) -> tuple[isl.Schedule, list[int]]:
        """Map the kernel at `path`; returns the schedule and the grid it uses."""
        node = node_at(schedule, path)
        kernel_band = bool(_parallel_members(node))
        if kernel_band and not self._has_coincident_band_below(node.child(0)):
            node = self._tile_for_threads(node)
            schedule = node.get_schedule()
        if self.size_per_thread and not self.block_wide:  # a block reduction's threads all reach its combine
            schedule = self._group_points(schedule, path, kernel_band)
        edits, rows = self._thread_edits(schedule, path, kernel_band)
        grid = [1] * len(self.blocks)
        if kernel_band:
            block_filter, grid = self._block_filter(node_at(schedule, path))
            edits.append((path, block_filter))
        else:  # the grid is shared with other kernels: one block runs this one
            domain = node_at(schedule, path).get_domain()
            edits.append((path, _zero_filter(domain, BLOCK_IDS[: len(self.blocks)])))
        for target, filter_set in sorted(edits, key=lambda e: -len(e[0])):
            schedule = node_at(schedule, target).insert_filter(filter_set).get_schedule()
        conflicts = None
        if accesses is not None:
            reads, writes = accesses
            context = self.context(grid)
            threads = _thread_relation(_leaf_domains(node_at(schedule, path)), context)
            conflicts = _Conflicts(reads, writes, threads, context)
        schedule = _insert_syncs(schedule, path, conflicts, rows)
        return node_at(schedule, path).insert_mark(isl.Id(KERNEL_MARK)).get_schedule(), grid

    def _group_points(self, schedule: isl.Schedule, kernel: Path, kernel_band: bool) -> isl.Schedule:
        """Strip-mine each thread-mapped band by `size_per_thread` along its
        mapped members: the outer band's groups are dealt to the threads
        round-robin, the inner band (not parallel: no thread maps it) runs a
        group's points (`thread_loops` unrolls it)."""
        sites: dict[Path, list[int]] = {}
        start = (*kernel, 0) if kernel_band else kernel
        self._find_sites(node_at(schedule, start), start, None, sites, [])
        for path, mapped in sorted(sites.items(), key=lambda e: -len(e[0])):
            sizes = self.size_per_thread[: len(mapped)]
            if all(size == 1 for size in sizes):
                continue
            inner = _strip_mine(node_at(schedule, path), mapped, sizes).child(0)
            for k in range(inner.band_n_member()):
                inner = inner.band_member_set_coincident(k, False)
            schedule = inner.get_schedule()
        return schedule

    def _has_coincident_band_below(self, node: isl.ScheduleNode) -> bool:
        if _parallel_members(node):
            return True
        return any(
            self._has_coincident_band_below(node.child(k)) for k in range(node.n_children())
        )

    def _tile_for_threads(self, node: isl.ScheduleNode) -> isl.ScheduleNode:
        """Strip-mine a kernel band with nothing parallel below by the thread sizes."""
        mapped = _parallel_members(node)[-len(self.threads) :]
        sizes = [t * (self.warps[k] if k < len(self.warps) else 1) for k, t in enumerate(self.threads)]
        return _strip_mine(node, mapped, sizes)

    def _block_filter(self, node: isl.ScheduleNode) -> tuple[isl.UnionSet, list[int]]:
        mapped = _parallel_members(node)[: len(self.blocks)]
        result = node.get_domain()
        grid = [1] * len(self.blocks)
        for k, member in enumerate(reversed(mapped)):  # innermost mapped member -> x
            block_filter, grid[k] = _member_filter(
                node, member, BLOCK_IDS[k], self.blocks[k], MAX_GRID[k]
            )
            result = result.intersect(block_filter)
        return _zero_filter(result, BLOCK_IDS[len(mapped) : len(self.blocks)]), grid

    def _thread_edits(
        self, schedule: isl.Schedule, kernel: Path, kernel_band: bool
    ) -> tuple[list[tuple[Path, isl.UnionSet]], tuple[str, ...]]:
        """The thread-mapping filters of every branch below `kernel`, by
        path, and the thread ids that number rows (see `_rows_band`)."""
        edits: list[tuple[Path, isl.UnionSet]] = []
        sites: dict[Path, list[int]] = {}
        leaves: list[Path] = []
        start = (*kernel, 0) if kernel_band else kernel
        self._find_sites(node_at(schedule, start), start, None, sites, leaves)
        rows: tuple[str, ...] = ()
        if kernel_band and (found := self._rows_band(schedule, start, sites)) is not None:
            path, member = found
            rows = (THREAD_IDS[1],)
            row_filter, _ = _member_filter(node_at(schedule, path), member, rows[0], self.threads[1], self.threads[1])
            edits.append((path, row_filter))
        used = len(self.block)  # every thread id a branch does not map is 0 there
        for path, mapped in sites.items():
            node = node_at(schedule, path)
            result = node.get_domain()
            unmapped = [i for i in THREAD_IDS[len(mapped) : used] if i not in rows]
            for k, member in enumerate(reversed(mapped)):
                thread_filter, _ = _member_filter(node, member, THREAD_IDS[k], self.threads[k], self.threads[k])
                result = result.intersect(thread_filter)
            # Warps where their threads divide every sub-tile (round-robin over
            # the tile is then the same as over each sub-tile); else the warp
            # id is 0 too (the other warps idle), as it is where warps do not
            # match the mapped members.
            if self.warps and len(mapped) == len(self.threads):
                runs = [_runs(node, member, count) for member, count in zip(reversed(mapped), self.warps)]
                if all(length % (step * threads) == 0 for (*_, step, length), threads in zip(runs, self.threads)):
                    result = result.intersect(_sub_tile_filter(node, runs, self.warps, unmapped.pop()))
            edits.append((path, _zero_filter(result, unmapped)))
        for path in leaves:
            domain = node_at(schedule, path).get_domain()
            edits.append((path, _zero_filter(domain, [i for i in THREAD_IDS[:used] if i not in rows])))
        return edits, rows

    def _rows_band(
        self, schedule: isl.Schedule, start: Path, sites: dict[Path, list[int]]
    ) -> tuple[Path, int] | None:
        """Where every branch maps one member, to a warp of x threads
        (`threads=[32, Y]`, no `warps`), the band with parallel members
        above all of them and below the kernel band (a tile's rows, each
        running a softmax's sequence): its path and innermost parallel
        member, which thread y then takes, a row of the tile per warp."""
        if self.warps or len(self.threads) != 2 or self.threads[0] != ROW_THREADS:
            return None
        if not sites or any(len(mapped) != 1 for mapped in sites.values()):
            return None
        path, node = start, node_at(schedule, start)
        while not _parallel_members(node):
            if node.n_children() != 1 or node.get_type() in (NodeType.sequence, NodeType.set):
                return None
            path, node = (*path, 0), node.child(0)
        if path in sites:  # some statement's own parallel band: threads x map it
            return None
        return path, _parallel_members(node)[-1]

    def _only_block_wide(self, domain: isl.UnionSet) -> bool:
        """Whether the instances `domain` are all of block-wide statements."""
        if not self.block_wide:
            return False
        names = statement_names(domain)
        return bool(names) and names <= self.block_wide

    def _find_sites(
        self,
        node: isl.ScheduleNode,
        path: Path,
        site: tuple[Path, list[int]] | None,
        sites: dict[Path, list[int]],
        leaves: list[Path],
    ) -> None:
        """For each leaf, the deepest band with parallel members above it
        (`site`: its path and parallel members) that no other leaf's is
        below: a leaf whose band is above others' runs on thread 0 (as one
        below none), so that no instance is mapped twice."""
        found: dict[Path, tuple[Path, list[int]] | None] = {}
        self._leaf_sites(node, path, site, found)
        nested = {s[0] for s in found.values() if s is not None}
        nested = {p for p in nested if any(q != p and q[: len(p)] == p for q in nested)}
        for leaf, leaf_site in found.items():
            if leaf_site is None or leaf_site[0] in nested:
                leaves.append(leaf)
            else:
                sites[leaf_site[0]] = leaf_site[1][-len(self.threads) :]

    def _leaf_sites(
        self,
        node: isl.ScheduleNode,
        path: Path,
        site: tuple[Path, list[int]] | None,
        found: dict[Path, tuple[Path, list[int]] | None],
    ) -> None:
        """The deepest band with parallel members above each leaf below `node`."""
        members = _parallel_members(node)
        if members:
            site = (path, members)
        if node.get_type() == NodeType.leaf:
            if not self._only_block_wide(node.get_domain()):
                found[path] = site
            return
        for k in range(node.n_children()):
            self._leaf_sites(node.child(k), (*path, k), site, found)
