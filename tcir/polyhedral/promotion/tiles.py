"""Array tiles: fixed-size boxes covering the footprint of a schedule tile.

A footprint is a relation `{ [p] -> T[a] }` from the values `p` of the outer
schedule (one block's tile, or one thread's) to the elements it accesses. Its
array tile gives each dimension `k` a stride `s_k` with a stride offset
`o_k(p)` (every accessed `a_k` is `o_k(p) + s_k * e`), a box offset `l_k(p)`
and a constant size `n_k`, such that the buffer index

    b_k = floor((a_k - o_k(p)) / s_k) - l_k(p)

of every accessed element lies in `[0, n_k)`. Among the lower bounds of the
(compressed) footprint, the box offset is the one giving the smallest size.
A tile may lay its buffer's dimensions out in another `order` than the
array's (a transposed copy: `order = (1, 0)` holds `B[k][n]` as `[n][k]`).

Where the accessed `b_k` are runs of `g_k` consecutive values every `q_k`
(a thread's rows `4t..4t+3` and `64+4t..64+4t+3` under `poly-map-to-gpu`'s
`size-per-thread`), the buffer keeps the runs only where that is smaller
than the box: its index is `floor(b_k / q_k) * g_k + b_k mod q_k`, of size
`g_k` times the runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from tcir.polyhedral.bands import has_consecutive_values


def on_pairs(function: isl.Aff, footprint_space: isl.Space) -> isl.Aff:
    """A function of `p` as a function on the pairs `[[p] -> T[a]]`."""
    return function.pullback_multi_aff(isl.MultiAff.domain_map(footprint_space))


def _element(footprint_space: isl.Space, k: int) -> isl.Aff:
    """`a_k` as a function on the pairs `[[p] -> T[a]]`."""
    space = footprint_space.wrap()
    n_p = footprint_space.dim(isl.dim_type.in_)
    return isl.Aff.var_on_domain(
        isl.LocalSpace.from_space(space), isl.dim_type.set, n_p + k
    )


@dataclass(frozen=True)
class ArrayTile:
    """The array tile of a footprint (see the module docstring)."""

    footprint: isl.Map
    strides: tuple[int, ...]
    stride_offsets: tuple[isl.Aff, ...]
    offsets: tuple[isl.Aff, ...]
    sizes: tuple[int, ...]
    """The box's sizes, in the array's order of dimensions."""
    order: tuple[int, ...] = ()
    """The array dimensions that the buffer's dimensions follow, outermost
    first; empty: the array's own order."""
    runs: tuple[tuple[int, int], ...] = ()
    """By dimension: `(g_k, q_k)` where the accessed values are runs of
    `g_k` every `q_k`, else `(1, 1)`; empty: none anywhere."""

    @property
    def elements(self) -> int:
        count = 1
        for size in self.sizes:
            count *= size
        return count

    @property
    def layout(self) -> tuple[int, ...]:
        """`order`, or the array's order where it is empty."""
        return self.order or tuple(range(len(self.sizes)))

    @property
    def buffer_sizes(self) -> tuple[int, ...]:
        """The buffer's shape (before padding): the sizes in `order`."""
        return tuple(self.sizes[k] for k in self.layout)

    def index(self) -> isl.MultiAff:
        """`[[p] -> T[a]] -> [b]`: the buffer index of an element."""
        space = self.footprint.get_space()
        affs = isl.AffList.alloc(space.get_ctx(), len(self.sizes))
        for k in self.layout:
            stride = self.strides[k]
            shifted = _element(space, k).sub(on_pairs(self.stride_offsets[k], space))
            compressed = shifted.scale_down_val(isl.Val(stride)).floor()
            boxed = compressed.sub(on_pairs(self.offsets[k], space))
            length, period = self.runs[k] if self.runs else (1, 1)
            if period > 1:
                run = boxed.scale_down_val(isl.Val(period)).floor().scale_val(isl.Val(length))
                boxed = run.add(boxed.mod_val(isl.Val(period)))
            affs = affs.add(boxed)
        target = space.wrap().from_domain().add_dims(isl.dim_type.out, len(self.sizes))
        return isl.MultiAff.from_aff_list(target, affs)

    def buffer_footprint(self, elements: isl.Map) -> isl.Map:
        """`{ [p] -> [b] }`: the buffer indices of `elements` (`{ [p] -> T[a] }`)."""
        index = self.index()
        pairs = isl.MultiAff.domain_map(self.footprint.get_space()).range_product(index)
        return elements.wrap().apply(isl.Map.from_multi_aff(pairs)).unwrap()


def _stride(footprint: isl.Map, k: int) -> tuple[int, isl.Aff]:
    zero = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(footprint.get_space().domain()))
    rank = footprint.dim(isl.dim_type.out)
    values = footprint.project_out(isl.dim_type.out, k + 1, rank - k - 1).project_out(
        isl.dim_type.out, 0, k
    ).reset_tuple_id(isl.dim_type.out)
    if has_consecutive_values(values):  # `a_k` takes consecutive values at one `p`
        return 1, zero
    info = footprint.get_range_stride_info(k)
    stride = info.get_stride()
    if not stride.is_int() or stride.to_python() <= 1:
        return 1, zero
    return stride.to_python(), info.get_offset()


def _smallest_box(compressed: isl.Map, k: int) -> tuple[isl.Aff, int] | None:
    """The lower bound of dimension `k` of `compressed` giving the smallest
    constant extent, and that extent; None when no extent is constant."""
    space = compressed.get_space()
    pairs = compressed.wrap()
    best: tuple[isl.Aff, int] | None = None
    for _, candidate in compressed.dim_min(k).get_pieces():
        distance = _element(space, k).sub(on_pairs(candidate, space))
        low, high = pairs.min_val(distance), pairs.max_val(distance)
        if not (low.is_int() and high.is_int()) or low.to_python() < 0:
            continue
        size = high.to_python() + 1
        if best is None or size < best[1]:
            best = (candidate, size)
    return best


def array_tile(footprint: isl.Map) -> ArrayTile | None:
    """The array tile of `footprint`, or None if it has no fixed size."""
    if footprint.is_empty():
        return None
    # isl's bounds miss equalities left implicit (a tile index next to a
    # floor of the element, as sub-tiles of `warps` leave): make them explicit.
    footprint = footprint.detect_equalities()
    space = footprint.get_space()
    rank = space.dim(isl.dim_type.out)
    strides = [_stride(footprint, k) for k in range(rank)]
    partial = ArrayTile(
        footprint,
        tuple(s for s, _ in strides),
        tuple(o for _, o in strides),
        tuple(
            isl.Aff.zero_on_domain(isl.LocalSpace.from_space(space.domain()))
            for _ in range(rank)
        ),
        (0,) * rank,
    )
    compressed = partial.buffer_footprint(footprint)
    boxes = [_smallest_box(compressed, k) for k in range(rank)]
    if any(box is None for box in boxes):
        return None
    boxed = ArrayTile(
        footprint,
        partial.strides,
        partial.stride_offsets,
        tuple(box[0] for box in boxes if box is not None),
        tuple(box[1] for box in boxes if box is not None),
    )
    indices = boxed.buffer_footprint(footprint)
    runs, sizes = [], []
    for k, size in enumerate(boxed.sizes):
        length, period = _runs(indices, k, size)
        kept = length * ((size - 1) // period + 1)
        runs.append((length, period) if kept < size else (1, 1))
        sizes.append(min(kept, size))
    if all(period == 1 for _, period in runs):
        return boxed
    return replace(boxed, sizes=tuple(sizes), runs=tuple(runs))


MAX_RUN_VALUES = 1024
"""Largest box extent whose values `_runs` enumerates."""


def _runs(indices: isl.Map, k: int, size: int) -> tuple[int, int]:
    """`(g, q)` where the values of buffer index `k` (in `indices`, `{ [p]
    -> [b] }`) all lie in runs `q * j + r`, `0 <= r < g < q`, the first run
    whole and the next one starting at `q` (a ragged tile's threads may have
    fewer); else `(1, 1)`."""
    if size <= 2 or size > MAX_RUN_VALUES:
        return 1, 1
    rank = indices.dim(isl.dim_type.out)
    taken = indices.project_out(isl.dim_type.out, k + 1, rank - k - 1).project_out(isl.dim_type.out, 0, k).range()
    taken = taken.project_out(isl.dim_type.param, 0, taken.dim(isl.dim_type.param))
    points: list[int] = []
    taken.foreach_point(lambda point: points.append(point.get_coordinate_val(isl.dim_type.set, 0).to_python()))
    points.sort()
    length = next((i for i, v in enumerate(points) if v != i), len(points))
    if length == 0 or length == len(points):
        return 1, 1
    period = points[length]
    if any(v % period >= length for v in points):
        return 1, 1
    return length, period
