"""The default mapping's convolution templates (see `tcir.compiler.defaults`).

A convolution is a sum of products of an image read at the output's last
two indices, shifted by taps (`I(n, c, h + kh, w + kw)`), and filters read
at the third-last index: a GEMM whose columns are the image's pixels. Rows
of 32 pixels or more take register tiles of filters x rows x pixels;
narrower rows, squares of pixels over the whole output plane. A filter
gradient (`dW(f, c, kh, kw) +=! dO(n, f, h, w) * I(n, c, h + kh, w + kw)`)
sums over images and pixels into a small output: split-K over the images.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tcir.compiler.options import MAX_THREADS_PER_BLOCK, MappingOptions
from tcir.compiler.tile_padding import pads_cheaply
from tcir.frontend import ast as A
from tcir.frontend.subscripts import beside, expr_to_lin, index_names, operand_reads
from tcir.polyhedral.gpu_mapping import mapped_grid


@dataclass(frozen=True)
class Convolution:
    """A convolution's image read, and where its output keeps the filters:
    before the image's rows and columns (NCHW, `Y(n, f, h, w)`; NCW, `Y(b,
    f, t)`, where the image has no `rows`) or after them (channels-last,
    `Y(n, h, w, f)`)."""

    image: A.Access
    filters_last: bool
    rows: bool = True

    @property
    def positions(self) -> tuple[int, int | None, int]:
        """The output positions (from the end) of the filters, the rows (None: none) and the columns."""
        if not self.rows:
            return (-1, None, -2) if self.filters_last else (-2, None, -1)
        return (-1, -3, -2) if self.filters_last else (-3, -2, -1)


def convolution_image(layer: A.Stmt) -> Convolution | None:
    """The convolution that `layer` is, where it sums products of an
    image read at two of the output's last three indices, its rows and
    columns (`I(n, c, h + kh, w + kw)`, `I(n, c, h, w)` for a 1x1
    convolution), but not at the third, the filters' (before them or
    after), and filters read at that one (`W(f, c, kh, kw)`) but at neither
    of the others: a GEMM whose columns are the image's pixels. A 1-D
    convolution (`X(b, c, t + k) * W(f, c, k)`) has no rows and taps.
    None for other statements."""
    reads = operand_reads(layer)
    if not layer.reduces or len(reads) != 2:
        return None
    shapes = [(f, r) for r in (True, False) for f in (False, True) if len(layer.lhs_indices) >= (4 if r else 3)]
    for filters_last, rows in shapes:
        at_filters, at_rows, at_columns = Convolution(reads[0], filters_last, rows).positions
        channel = layer.lhs_indices[at_filters]
        pixels = {layer.lhs_indices[at_columns], *([layer.lhs_indices[at_rows]] if at_rows is not None else [])}
        for image, filters in (reads, reads[::-1]):
            if (
                pixels <= index_names(image)
                and channel not in index_names(image)
                and channel in index_names(filters)
                and not pixels & index_names(filters)
                and (rows or taps(layer, image))
            ):
                return Convolution(image, filters_last, rows)
    return None


CONVOLUTION_FILTERS, CONVOLUTION_ROWS, CONVOLUTION_COLUMNS, CONVOLUTION_K = 64, 2, 64, 8
"""A convolution's block tile: filters x image rows x columns, and the
channels of a step (fewer where the filters' taps would make their tile
larger than `CONVOLUTION_FILTER_TILE` elements)."""

CONVOLUTION_FILTER_TILE = 6144

CONVOLUTION_PIXELS = 112
"""Pixels a block of a channels-last convolution computes at least: more
rows than `CONVOLUTION_ROWS` where its output rows are narrower than 56."""

WIDE_THREAD_FILTERS = 8
"""Filters of a thread that takes 4 pixels of a sum without guards, or of a 1x1 convolution."""
WIDE_THREAD_CHANNELS, WIDE_THREAD_POINTWISE_CHANNELS = 32, 64
"""The channels of a step where a thread takes `WIDE_THREAD_FILTERS`
filters (64 accumulators): with taps, 32 (the filters' tile then outgrows
shared memory and is read through the L1 cache), without (1x1), 64. A step
of 8 channels gave each barrier too little work (the defaults guide)."""

CONVOLUTION_MIN_COLUMNS = 32
"""NCHW images narrower take the small planes' templates."""
STRIDED_PLANE_THREADS = 256
"""A strided NCHW convolution whose plane takes at most this many threads
on 2x2 squares of pixels takes the plane rule, wide rows or not."""

FLOAT_BYTES = 4
"""Bytes of a float32 element of a staged tile."""


def _channel_steps(layer: A.Stmt, shifts: set[str], extents: dict[str, int], channels: int) -> list[int]:
    """The tile of each reduction index: every tap (`shifts`), at most
    `channels` of the others."""
    return [extents[i] if i in shifts else min(extents[i], channels) for i in layer.reduction_indices]


def convolution_options(
    layer: A.Stmt, convolution: Convolution, out: list[int], extents: dict[str, int], sizes: list[str]
) -> MappingOptions:
    """Register tiles of a convolution: a block computes 64 filters on 2
    rows of up to 64 pixels; a thread 4 filters on both rows at 2 to 4
    pixels (a divisor of the row where one is), 8 filters where it takes 4
    pixels of a sum without guards (64 accumulators), or with 1x1 filters
    8 filters at 2 pixels; the image's rows and the filters staged in
    shared memory for 8 channels (all taps) at a time, 32 (1x1: 64) where a
    thread takes 8 filters and their image tile fits in shared memory (a
    strided convolution's rows span twice the pixels: 8). Threads go along
    the output's innermost index (the pixels of a row, or the filters of a
    channels-last output); `sizes` are the def's size parameters."""
    at_filters, at_rows, at_columns = convolution.positions
    if at_rows is None:
        return _line_options(layer, convolution, out, extents)
    filters, columns = min(out[at_filters], CONVOLUTION_FILTERS), min(out[at_columns], CONVOLUTION_COLUMNS)
    rows = CONVOLUTION_ROWS
    if convolution.filters_last:  # rows enough for a block of `CONVOLUTION_PIXELS`
        rows = min(out[at_rows], max(rows, CONVOLUTION_PIXELS // columns))
    shifts = taps(layer, convolution.image)
    widths = (4, 3, 2) if shifts else (2,)
    points = next((p for p in widths if columns % p == 0), widths[0])
    wide = not shifts or (points == 4 and not isinstance(layer.rhs, A.Ternary))
    per_thread = WIDE_THREAD_FILTERS if wide and not convolution.filters_last else 4
    if per_thread == WIDE_THREAD_FILTERS:
        channels = WIDE_THREAD_CHANNELS if shifts else WIDE_THREAD_POINTWISE_CHANNELS
        tile = {layer.lhs_indices[at_rows]: rows, layer.lhs_indices[at_columns]: columns, **{t: extents[t] for t in shifts}}
        span = _image_points(convolution.image, tile, sizes)
        if span is None or channels * span * FLOAT_BYTES > MappingOptions().max_shared_memory:
            channels = CONVOLUTION_K
    else:
        channels = max(1, min(CONVOLUTION_K, CONVOLUTION_FILTER_TILE // (filters * math.prod(extents[i] for i in shifts))))
    row_threads = max(1, rows // CONVOLUTION_ROWS)
    return _tiled(
        layer, out, {at_filters: filters, at_rows: rows, at_columns: columns},
        {at_filters: max(1, -(-filters // per_thread)), at_rows: row_threads, at_columns: -(-columns // points)},
        _channel_steps(layer, shifts, extents, channels), per_thread * -(-rows // row_threads) * points,
    )


LINE_COLUMNS, LINE_POINTS = 128, 8
"""A 1-D convolution's block tile of outputs along the line, and a thread's points of it."""


def _line_options(layer: A.Stmt, convolution: Convolution, out: list[int], extents: dict[str, int]) -> MappingOptions:
    """A 1-D convolution: a block computes 64 filters at 128 points of
    the line, a thread 8 filters at 8 points (64 accumulators); the image
    and the filters staged in shared memory for 32 channels (all taps) at a
    time, fewer (a power of two) where the filters' tile would pass
    `CONVOLUTION_FILTER_TILE` elements."""
    at_filters, _, at_columns = convolution.positions
    filters, columns = min(out[at_filters], CONVOLUTION_FILTERS), min(out[at_columns], LINE_COLUMNS)
    shifts = taps(layer, convolution.image)
    points = next((p for p in (LINE_POINTS, 4, 2) if columns % p == 0), LINE_POINTS)
    fitting = CONVOLUTION_FILTER_TILE // (filters * math.prod(extents[i] for i in shifts))
    channels = min(WIDE_THREAD_CHANNELS, _power_of_two_at_most(fitting))
    return _tiled(
        layer, out, {at_filters: filters, at_columns: columns},
        {at_filters: max(1, -(-filters // WIDE_THREAD_FILTERS)), at_columns: -(-columns // points)},
        _channel_steps(layer, shifts, extents, channels), WIDE_THREAD_FILTERS * points,
    )


def _power_of_two_at_most(n: int) -> int:
    """The largest power of two not above `n` (1 for `n` below 2)."""
    return 1 << max(0, n.bit_length() - 1)


def _tiled(
    layer: A.Stmt, out: list[int], block: dict[int, int], threads: dict[int, int], steps: list[int], private: int
) -> MappingOptions:
    """Tiles of `block` (output position from the end -> extent), a block
    each (the grid over the output's other indices too), `threads` along
    those positions (innermost first), `steps` of the reduction indices;
    the output padded to whole tiles where that adds little (`pads_cheaply`)."""
    inner = sorted(block)
    return MappingOptions(
        tile=[*[1] * (len(out) - len(inner)), *(block[k] for k in inner), *steps],
        pad_tiles=pads_cheaply([out[k] for k in inner], [block[k] for k in inner]),
        blocks=mapped_grid([*out[: len(out) - len(inner)], *(-(-out[k] // block[k]) for k in inner)]),
        threads=[threads[k] for k in reversed(inner)],
        max_private_elements=max(MappingOptions().max_private_elements, private),
    )


PLANE_POINTS = (2, 3)
"""Pixels a thread computes along each of a narrow image's output rows and
columns (a square of them, the first that divides both)."""
PLANE_ACCUMULATORS = 64
"""A narrow convolution's accumulators a thread: filters x its square of pixels."""
MIN_PLANE_THREADS = 64
"""Fewest threads (two warps) a block of a narrow convolution's plane rule
takes: smaller planes (14 x 14 outputs) take segments of rows."""


def narrow_convolution_options(
    layer: A.Stmt, image: A.Access, out: list[int], extents: dict[str, int]
) -> MappingOptions | None:
    """A convolution whose output rows are too narrow for the register
    template: a block computes a few filters on an image's whole output
    plane, a thread those filters on a 2x2 (or 3x3) square of pixels
    (`PLANE_ACCUMULATORS` or a little more), `CONVOLUTION_K` channels (all
    taps) a step: the filters staged in shared memory, the next step's
    copied by `cp.async` into a second buffer while this one computes (the
    image too where its buffers fit; a strided convolution's plane, whose
    rows it reads every other element of, does not, and its reads go
    through L1). Where no such square divides the
    plane or the plane gives fewer than `MIN_PLANE_THREADS` threads, segments of rows
    (`_row_segment_options`); None for 1x1 filters, or where the plane
    needs more threads than a block has."""
    shifts = taps(layer, image)
    side = next((p for p in PLANE_POINTS if out[-1] % p == 0 and out[-2] % p == 0), None)
    if not shifts:
        return None
    if side is None or (out[-1] // side) * (out[-2] // side) < MIN_PLANE_THREADS:
        return _row_segment_options(layer, shifts, out, extents)
    if (out[-1] // side) * (out[-2] // side) > MAX_THREADS_PER_BLOCK:
        return None
    filters = min(out[-3], -(-PLANE_ACCUMULATORS // (side * side * 8)) * 8)
    steps = _channel_steps(layer, shifts, extents, CONVOLUTION_K)
    return MappingOptions(
        tile=[*[1] * (len(out) - 3), filters, out[-2], out[-1], *steps],
        threads=[out[-1] // side, out[-2] // side],
        max_private_elements=filters * side * side,
        num_stages=3,
        async_copies=True,
    )


SEGMENT_POINTS = (8, 7, 6, 5, 4)
"""Pixels of a row a thread computes on a small plane (the first that divides the rows)."""
SEGMENT_FILTER_GROUPS = 8
"""Threads along the filters of a small plane's block."""
FEW_SEGMENTS = 16
"""Row segments of a plane under which a thread takes 8 filters, not 4."""


def _row_segment_options(
    layer: A.Stmt, shifts: set[str], out: list[int], extents: dict[str, int]
) -> MappingOptions | None:
    """A convolution's plane too small for squares of pixels (14 x 14, 7 x
    7 outputs): a block computes the whole plane for 8 groups of filters, a
    thread a segment of a row (`SEGMENT_POINTS`) for 4 filters, 8 where the
    plane has fewer than `FEW_SEGMENTS` segments; the image and the filters
    staged in shared memory `CONVOLUTION_K` channels (all taps) at a time.
    None where no segment length divides the rows, or the segments and
    groups of filters are more threads than a block has."""
    points = next((p for p in SEGMENT_POINTS if out[-1] % p == 0), None)
    if points is None:
        return None
    segments = out[-1] // points * out[-2]
    per_thread = 8 if segments < FEW_SEGMENTS else 4
    filters = min(out[-3], per_thread * SEGMENT_FILTER_GROUPS)
    if segments * -(-filters // per_thread) > MAX_THREADS_PER_BLOCK:
        return None
    steps = _channel_steps(layer, shifts, extents, CONVOLUTION_K)
    return MappingOptions(
        tile=[*[1] * (len(out) - 3), filters, out[-2], out[-1], *steps],
        threads=[out[-1] // points, out[-2], -(-filters // per_thread)],
        max_private_elements=max(MappingOptions().max_private_elements, per_thread * points),
    )


def takes_plane(layer: A.Stmt, convolution: Convolution, out: list[int], sizes: list[str]) -> bool:
    """Whether an NCHW convolution computes whole output planes a block
    (`narrow_convolution_options`): rows narrower than
    `CONVOLUTION_MIN_COLUMNS`, or a strided image (its column index scaled
    in the subscript) and a plane of at most `STRIDED_PLANE_THREADS` threads
    on 2x2 squares (whose rows the row rule's tiles would read every other
    element of)."""
    if convolution.filters_last:
        return False
    if out[-1] < CONVOLUTION_MIN_COLUMNS:
        return True
    pair = {layer.lhs_indices[-2]: 1, layer.lhs_indices[-1]: 2, **{t: 1 for t in taps(layer, convolution.image)}}
    strided = (_image_points(convolution.image, pair, sizes) or 2) > 2
    return strided and out[-1] % 2 == 0 and out[-2] % 2 == 0 and out[-1] * out[-2] // 4 <= STRIDED_PLANE_THREADS


def _image_points(image: A.Access, tile: dict[str, int], sizes: list[str]) -> int | None:
    """The points of one channel of `image` that a block reads for `tile`
    values of each of its indices: the product over the subscripts that use
    them of `sum |coefficient| * (values - 1) + 1` (`sizes`: the def's size
    parameters); None where such a subscript is not affine in them."""
    span = 1
    for subscript in image.subscripts:
        names = index_names(subscript)
        if not names & set(tile):
            continue
        lin = expr_to_lin(subscript, sizes)
        terms = {} if lin is None else dict(lin.terms)
        if any(terms.get((name,)) is None or name not in tile for name in names):
            return None
        span *= sum(abs(terms[(name,)]) * (tile[name] - 1) for name in names) + 1
    return span


def taps(layer: A.Stmt, image: A.Access) -> set[str]:
    """The reduction indices that shift an output index in a subscript of
    `image` (a convolution's `kh`, `kw` in `I(n, c, h + kh, w + kw)`)."""
    return beside(image, set(layer.lhs_indices), set(layer.reduction_indices))


def _shifted_by_sums(layer: A.Stmt, image: A.Access) -> set[str]:
    """The output indices that summed indices shift in a subscript of
    `image` (a filter gradient's `kh`, `kw` in `I(n, c, h + kh, w + kw)`)."""
    return beside(image, set(layer.reduction_indices), set(layer.lhs_indices))


FILTER_GRADIENT_FILTERS, FILTER_GRADIENT_CHANNELS = 32, 32
"""A filter gradient's block tile: filters x channels (x every tap; fewer
channels where a thread for each would pass 1024)."""
FILTER_GRADIENT_ROWS = (3, 2)
"""The output gradient's rows of an image a step stages in shared memory
(the first whose float32 tile fits the default shared-memory budget)."""


def filter_gradient_options(layer: A.Stmt, out: list[int], extents: dict[str, int]) -> MappingOptions | None:
    """A convolution's filter gradient, `dW(f, c, kh, kw) +=! dO(n, f, h, w)
    * I(n, c, h + kh, w + kw)`: a block sums one image (split-K over the
    images, partial sums added atomically) for 32 filters x 32 channels x
    every tap, a thread one channel at one tap for the 32 filters; the
    output gradient's rows staged in shared memory a few at a time, read
    two pixels at once. None for other statements: a 4-D output whose last
    two indices shift the image's subscripts (taps) by summed indices,
    whose first only the output gradient reads and whose second only the
    image reads, summed over three indices (images, rows, pixels)."""
    reads = operand_reads(layer)
    if len(layer.lhs_indices) != 4 or len(layer.reduction_indices) != 3 or len(reads) != 2:
        return None
    filters, channels, *shifted = layer.lhs_indices
    for image, gradient in (reads, reads[::-1]):
        if (
            set(shifted) <= _shifted_by_sums(layer, image)
            and channels in index_names(image) and filters not in index_names(image)
            and filters in index_names(gradient) and not {channels, *shifted} & index_names(gradient)
        ):
            break
    else:
        return None
    images, _, columns = (extents[i] for i in layer.reduction_indices)
    shifts = out[2] * out[3]
    if shifts > MAX_THREADS_PER_BLOCK:
        return None
    fitting = _power_of_two_at_most(MAX_THREADS_PER_BLOCK // shifts)  # channels, a thread each tap
    block = [min(out[0], FILTER_GRADIENT_FILTERS), min(out[1], FILTER_GRADIENT_CHANNELS, fitting)]
    budget = MappingOptions().max_shared_memory
    rows = [r for r in FILTER_GRADIENT_ROWS if block[0] * r * columns * FLOAT_BYTES <= budget]
    if not rows:
        return None
    return MappingOptions(
        tile=[*block, out[2], out[3], 1, rows[0], columns],
        threads=[out[3], out[2], block[1]],
        split_k=images,
        max_private_elements=block[0],
        vector_width=2 if columns % 2 == 0 else 1,
    )
