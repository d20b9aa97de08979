"""Full tiles apart from partial ones, block by block.

A kernel's blocks each run a tile of its statements' instances. Where a
dimension's size is not a multiple of the tile (a 1000 x 1000 output on
64 x 64 tiles), the blocks at the edge get partial tiles, and isl's AST
must guard each point of the tile against the sizes. Those guards depend on
the block ids, so isl cannot hoist them out of the point loops, and every
block pays for them: in an unrolled register tile they sit around each
point, and the shared-memory reads lose their vector form.

Here the block ids whose tiles are full are worked out from the schedule:
below the band that the blocks map, each statement's instances take values
of the bands on their path, first of the loops the whole block runs (over
k tiles), then of its threads' bands; a block's tiles are full when, at
each value of its loops, its instances take every value of the threads'
bands that the instances of any block take there (so a ragged last k tile,
partial in every block, leaves the blocks full, and split-K's slices are
compared each with its own k tiles). The band then sits
under a sequence of two filters, the instances of the blocks with full
tiles and the others, each with a copy of the subtree: isl's AST generator
knows the block ids in the first and drops every guard that they imply.

Both copies compute exactly the kernel's instances in the kernel's order
(the filters split the instances by block, and each block runs one of
them), so this is correct whatever the split; it only pays where the split
is by full tiles. Statements introduced by extension nodes (promotion's
copies) follow the instances whose prefix values they extend.
"""

from __future__ import annotations

import islpy as isl

from tcir.polyhedral.bands import statement_names
from tcir.polyhedral.gpu_mapping import BLOCK_IDS, KERNEL_MARK, THREAD_IDS, Path, maps_threads, node_at, project_params

NodeType = isl.schedule_node_type


def _only(domain: isl.UnionSet, names: set[str]) -> isl.UnionSet:
    sets = domain.get_set_list()
    kept = isl.UnionSet.empty(domain.get_space())
    for s in (sets.get_at(k) for k in range(sets.n_set())):
        if s.get_tuple_name() in names:
            kept = kept.union(isl.UnionSet.from_set(s))
    return kept


def _values(
    node: isl.ScheduleNode, domain: isl.UnionSet, outer: isl.UnionMap, inner: isl.UnionMap, threads: bool
) -> isl.UnionMap:
    """`{ S[i] -> [[o] -> [t]] }` for the statements of `domain` below
    `node`: the values of the bands on each statement's path, `o` those the
    whole block runs (above the thread mapping: the loop over k tiles), `t`
    its threads' (filters route statements by name only; extension nodes
    add none of them)."""
    kind = node.get_type()
    if kind == NodeType.filter:
        domain = _only(domain, statement_names(node.filter_get_filter()))
        threads = threads or maps_threads(node)
    elif kind == NodeType.band and node.band_n_member() > 0:
        partial = isl.UnionMap.from_multi_union_pw_aff(node.band_get_partial_schedule()).intersect_domain(domain)
        if threads:
            inner = inner.flat_range_product(partial)
        else:
            outer = outer.flat_range_product(partial)
    if domain.is_empty():
        return isl.UnionMap.empty(domain.get_space())
    if kind == NodeType.leaf:
        return outer.range_product(inner).intersect_domain(domain)
    found = isl.UnionMap.empty(domain.get_space())
    for k in range(node.n_children()):
        found = found.union(_values(node.child(k), domain, outer, inner, threads))
    return found


def full_blocks(band: isl.ScheduleNode, context: isl.Set) -> isl.Set | None:
    """The parameter values (block ids among them, within `context`) at which
    the instances reaching the block-mapped `band`, at each value of the
    block's own loops below it, take every value of the threads' bands that
    those of any block take there; None where that is every block or none."""
    domain = band.get_domain().intersect_params(context)
    start = isl.UnionMap.from_domain(domain)
    reached = _values(band.child(0), domain, start, start, False).range().unwrap()
    every = project_params(reached, BLOCK_IDS).intersect_domain(reached.domain())
    missing = every.subtract(reached).params()
    partial = missing.intersect(context)
    if partial.is_empty():
        return None
    full = context.subtract(partial)
    return None if full.is_empty() else full.coalesce()


def _block_bands(node: isl.ScheduleNode, path: Path) -> list[Path]:
    """The path of the band below each kernel's block-mapping filter."""
    if node.get_type() == NodeType.mark and node.mark_get_id().get_name() == KERNEL_MARK:
        below = node.child(0)
        if below.get_type() == NodeType.filter and below.child(0).get_type() == NodeType.band:
            return [(*path, 0, 0)]
        return []
    return [found for k in range(node.n_children()) for found in _block_bands(node.child(k), (*path, k))]


def _candidates(schedule: isl.Schedule, statements: set[str]) -> list[tuple[Path, isl.ScheduleNode]]:
    """The block bands of the kernels that run any of `statements`."""
    bands = [(path, node_at(schedule, path)) for path in _block_bands(schedule.get_root(), ())]
    return [(path, band) for path, band in bands if statement_names(band.get_domain()) & statements]


def has_partial_tiles(schedule: isl.Schedule, context: isl.Set, statements: set[str]) -> bool:
    """Whether a kernel of `schedule` that runs any of `statements` has blocks
    of full tiles and others."""
    context = project_params(context, THREAD_IDS)
    return any(full_blocks(band, context) is not None for _, band in _candidates(schedule, statements))


def separate_full_tiles(
    schedule: isl.Schedule, context: isl.Set, max_kernels: int, statements: set[str]
) -> isl.Schedule:
    """`schedule` (mapped to blocks; `context` bounds the block ids) with the
    block band of each kernel that runs any of `statements` and has both
    full and partial tiles under a sequence of the two (see the module), in
    the first `max_kernels` such kernels."""
    context = project_params(context, THREAD_IDS)
    split = 0
    for path, _ in _candidates(schedule, statements):  # edits below a kernel keep the others' paths
        if split == max_kernels:
            break
        band = node_at(schedule, path)
        full = full_blocks(band, context)
        if full is None:
            continue
        domain = band.get_domain()
        filters = isl.UnionSetList.alloc(band.get_ctx(), 2)
        filters = filters.add(domain.intersect_params(full))
        filters = filters.add(domain.intersect_params(context.subtract(full)))
        schedule = band.insert_sequence(filters).get_schedule()
        split += 1
    return schedule
