"""Checked memory of the simulated GPU: global, shared and private buffers.

Every access goes through `Buffer.load`/`Buffer.store` with the lanes (threads)
that perform it and one index per dimension, each a Python number (the same
for all lanes) or an array aligned with the lanes. An access

- out of a buffer's bounds in any dimension raises at once (`bounds`);
- reading shared or private memory, or a global temporary, that no store
  wrote yet raises at once (`uninitialized`);
- is logged, for buffers that a kernel stores to (global) and for shared
  buffers, with its lanes and their barrier epochs, so that `find_conflict`
  can later find two lanes touching one element, at least one writing,
  between the same two barriers of one block, or of one warp for two lanes
  of a warp (`race`), or two blocks of a
  launch doing so at any time (`conflict`). Atomic adds (`Buffer.atomic_add`)
  are exempt among themselves, not against plain loads and stores.

Lanes are numbered in a launch: lane `l` is thread `l % T` of the launch's
block `l // T` (`T` threads per block, blocks in the launch's random order).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Protocol

import numpy as np

GLOBAL, SHARED, PRIVATE = "global", "shared", "private"
BLOCK_EPOCH, WARP_EPOCHS = 1 << 32, (1 << 32) - 1
"""A lane's epoch counts its block's barriers (times `BLOCK_EPOCH`) and its
warp's (`__syncwarp()`, the low bits)."""


class Launch(Protocol):
    """What buffers need of the launch they belong to (`launch.Launch`)."""

    threads: int
    epoch: np.ndarray

    def ordinals(self, lanes: np.ndarray) -> np.ndarray: ...
    def warps(self, lanes: np.ndarray) -> np.ndarray: ...
    def thread(self, ordinal: int) -> str: ...
    def block_coordinates(self, ordinal: int) -> tuple[int, int, int]: ...
    def site(self, k: int) -> str: ...
    def fault(self, kind: str, message: str) -> None: ...


class Access(NamedTuple):
    """One logged load or store: the lanes doing it, the flat offset each
    touches (one number for all), their barrier epochs and the op (`site`)."""

    lanes: np.ndarray
    offsets: np.ndarray | int
    epochs: np.ndarray
    write: bool
    site: int
    atomic: bool = False
    """An atomic read-modify-write: it conflicts with plain accesses of other
    threads (or blocks), not with other atomics."""


class Buffer:
    """A memref of the simulated GPU: flat data and its checks.

    A shared buffer holds one copy per block of the current wave and a
    private buffer one per lane; `base` gives the offset of a lane's copy.
    """

    def __init__(
        self,
        launch: Launch,
        name: str,
        kind: str,
        shape: tuple[int, ...],
        data: np.ndarray,
        *,
        initialized: np.ndarray | None = None,
        logged: bool,
    ):
        self.launch = launch
        self.name = name
        self.kind = kind
        self.shape = shape
        self.size = math.prod(shape)
        self.strides = tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))
        self.data = data
        self.initialized = initialized
        """Which elements were written (None: not tracked, all are valid)."""
        self.log: list[Access] | None = [] if logged else None

    def base(self, lanes: np.ndarray) -> np.ndarray | int:
        """The offset of each lane's copy of the buffer."""
        if self.kind == SHARED:
            return lanes // self.launch.threads * self.size
        if self.kind == PRIVATE:
            return lanes * self.size
        return 0

    def offset(self, lanes: np.ndarray, index: tuple[Any, ...], site: int) -> Any:
        """The flat offset of `index` for each lane; out of bounds raises."""
        offset: Any = 0
        for i, extent, stride in zip(index, self.shape, self.strides):
            if type(i) is np.ndarray:
                if i.min() < 0 or i.max() >= extent:
                    self.out_of_bounds(lanes, index, site)
            elif not 0 <= i < extent:
                self.out_of_bounds(lanes, index, site)
            offset = offset + (i if stride == 1 else i * stride)
        if self.kind == GLOBAL:
            return offset
        return self.base(lanes) + offset

    def load(self, lanes: np.ndarray, index: tuple[Any, ...], site: int) -> Any:
        offset = self.offset(lanes, index, site)
        if self.initialized is not None and not self.initialized[offset].all():
            self.uninitialized(lanes, offset, site)
        if self.log is not None:
            self.log.append(Access(self.launch.ordinals(lanes), offset, self.launch.epoch[lanes], False, site))
        return self.data[offset]

    def store(self, lanes: np.ndarray, index: tuple[Any, ...], value: Any, site: int) -> None:
        offset = self.offset(lanes, index, site)
        if self.initialized is not None:
            self.initialized[offset] = True
        if self.log is not None:
            self.log.append(Access(self.launch.ordinals(lanes), offset, self.launch.epoch[lanes], True, site))
        if type(value) is np.ndarray and type(offset) is not np.ndarray:
            offset = np.broadcast_to(offset, value.shape)  # lanes write one element: a race if several
        self.data[offset] = value

    def load_vector(self, lanes: np.ndarray, index: tuple[Any, ...], site: int, width: int) -> Any:
        """A vector load (`float4`): the `width` elements from `index` on along
        the last dimension, as the last axis of the result; the first must be
        aligned to `width` elements, as the GPU's vector accesses require."""
        self.aligned(lanes, index, width, site)
        *outer, last = index
        return np.stack([self.load(lanes, (*outer, last + k), site) for k in range(width)], axis=-1)

    def store_vector(self, lanes: np.ndarray, index: tuple[Any, ...], value: Any, site: int, width: int) -> None:
        """A vector store: `value`'s last axis to the `width` elements from `index` on."""
        self.aligned(lanes, index, width, site)
        *outer, last = index
        for k in range(width):
            self.store(lanes, (*outer, last + k), value[..., k], site)

    def aligned(self, lanes: np.ndarray, index: tuple[Any, ...], width: int, site: int) -> None:
        """Fault where a lane's vector access at `index` is not aligned."""
        offsets = np.broadcast_to(self.offset(lanes, index, site), lanes.shape)
        bad = np.flatnonzero(offsets % width)
        if bad.size:
            lane = int(bad[0])
            self.launch.fault(
                "misaligned",
                f"misaligned vector access of {width} elements to {self.describe()} at "
                f"{self.element(offsets[lane])}: {self.launch.thread(self.launch.ordinals(lanes)[lane])} "
                f"({self.launch.site(site)})",
            )

    def atomic(self, lanes: np.ndarray, index: tuple[Any, ...], value: Any, site: int, combine: str) -> Any:
        """`memref.atomic_rmw`: each lane combines `value` into its element
        (`combine`: `add`, `max` or `min`, NaN winning as in `max=`); the
        values before the launch's updates of this op (lanes updating one
        element all see the same one, where the GPU would give each the value
        after the updates that came first: no kernel of tcir uses them)."""
        offset = self.offset(lanes, index, site)
        if self.initialized is not None and not self.initialized[offset].all():
            self.uninitialized(lanes, offset, site)
        if self.log is not None:
            self.log.append(Access(self.launch.ordinals(lanes), offset, self.launch.epoch[lanes], True, site, True))
        offsets = np.broadcast_to(offset, lanes.shape)
        old = self.data[offsets]
        ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum}[combine]
        ufunc.at(self.data, offsets, np.broadcast_to(value, lanes.shape).astype(self.data.dtype))
        return old

    # Faults -----------------------------------------------------------------

    def describe(self) -> str:
        return f"{self.kind} memory '{self.name}'"

    def element(self, offset: int) -> str:
        """`[i, j]`: the index of flat `offset` within one copy of the buffer."""
        index = np.unravel_index(int(offset) % max(self.size, 1), self.shape) if self.shape else ()
        return "[" + ", ".join(str(int(i)) for i in index) + "]"

    def out_of_bounds(self, lanes: np.ndarray, index: tuple[Any, ...], site: int) -> None:
        bad = np.zeros(lanes.shape, bool)
        for i, extent in zip(index, self.shape):
            bad |= (np.asarray(i) < 0) | (np.asarray(i) >= extent)
        lane = int(np.flatnonzero(bad)[0])
        shown = ", ".join(str(int(np.broadcast_to(i, lanes.shape)[lane])) for i in index)
        self.launch.fault(
            "bounds",
            f"out-of-bounds access to {self.describe()} of shape {list(self.shape)}: "
            f"{self.launch.thread(self.launch.ordinals(lanes)[lane])} accesses [{shown}] "
            f"({self.launch.site(site)})",
        )

    def uninitialized(self, lanes: np.ndarray, offset: Any, site: int) -> None:
        offsets = np.broadcast_to(offset, lanes.shape)
        lane = int(np.flatnonzero(~self.initialized[offsets])[0])  # type: ignore[index]
        self.launch.fault(
            "uninitialized",
            f"read of uninitialized {self.describe()} at {self.element(offsets[lane])}: "
            f"{self.launch.thread(self.launch.ordinals(lanes)[lane])} reads it before any "
            f"thread wrote it ({self.launch.site(site)})",
        )

    def check_conflicts(self) -> None:
        """Raise for the first race (or, for global memory, conflict between
        blocks) in the log, then clear it."""
        if not self.log:
            return
        # Accesses at one offset for all their lanes (uniform indices) first,
        # then the others: each group in a few numpy calls however long the log.
        log = sorted(self.log, key=lambda a: type(a.offsets) is np.ndarray)
        self.log = []
        sizes = np.array([a.lanes.size for a in log])
        uniform = sum(type(a.offsets) is not np.ndarray for a in log)
        lanes = np.concatenate([a.lanes for a in log])
        offsets = np.concatenate(
            [np.repeat(np.array([a.offsets for a in log[:uniform]], np.int64), sizes[:uniform])]
            + [a.offsets for a in log[uniform:]]
        )
        epochs = np.concatenate([a.epochs for a in log])
        writes = np.repeat(np.array([a.write for a in log]), sizes)
        atomics = np.repeat(np.array([a.atomic for a in log]), sizes)
        entries = np.repeat(np.arange(len(log)), sizes)
        blocks = lanes // self.launch.threads
        sites = lambda pair: [log[k].site for k in entries[list(pair)]]  # noqa: E731
        checks = [((offsets,), blocks, True)] if self.kind == GLOBAL else []
        if (epochs & WARP_EPOCHS).any():
            # Lanes of different warps meet at block barriers only; lanes of
            # one warp at its own barriers too.
            warps = self.launch.warps(lanes)
            checks += [((offsets, blocks, epochs >> 32), warps, False), ((offsets, warps, epochs), lanes, False)]
        else:
            checks.append(((offsets, blocks, epochs), lanes, False))
        plain = np.flatnonzero(~atomics) if atomics.any() else None
        for keys, who, across_blocks in checks:
            if plain is None:
                pair = find_conflict(keys, who, writes)
            else:  # plain accesses among themselves, then against the atomics
                pair = find_conflict(tuple(k[plain] for k in keys), who[plain], writes[plain])
                if pair is not None:
                    pair = (int(plain[pair[0]]), int(plain[pair[1]]))
                else:
                    pair = _atomic_conflict(keys, who, atomics)
            if pair is not None:
                self.report(pair, lanes, offsets, writes, sites(pair), across_blocks)

    def report(
        self,
        pair: tuple[int, int],
        lanes: np.ndarray,
        offsets: np.ndarray,
        writes: np.ndarray,
        sites: list[int],
        across_blocks: bool,
    ) -> None:
        first, second = pair
        launch = self.launch
        a, b = int(lanes[first]), int(lanes[second])
        other = "writes" if writes[second] else "reads"
        where = f"{self.describe()} at {self.element(offsets[first])}"
        if across_blocks:
            message = (
                f"blocks {launch.block_coordinates(a)} and {launch.block_coordinates(b)} "
                f"conflict on {where}: {launch.thread(a)} writes it ({launch.site(sites[0])}) "
                f"and {launch.thread(b)} {other} it ({launch.site(sites[1])}) in the same launch"
            )
            launch.fault("conflict", message)
        message = (
            f"data race on {where}: {launch.thread(a)} writes it ({launch.site(sites[0])}) "
            f"and {launch.thread(b)} {other} it ({launch.site(sites[1])}) "
            f"between the same two barriers"
        )
        launch.fault("race", message)


def _atomic_conflict(
    keys: tuple[np.ndarray, ...], who: np.ndarray, atomics: np.ndarray
) -> tuple[int, int] | None:
    """An atomic entry and a plain one with equal `keys` and different `who`
    (atomics among themselves never conflict); None if there is none."""
    _, group = np.unique(np.stack(keys), axis=1, return_inverse=True)
    group = group.reshape(-1)
    n = int(group.max()) + 1
    big = np.iinfo(np.int64).max
    low = np.full(n, big)
    high = np.full(n, -1)
    np.minimum.at(low, group[atomics], who[atomics])
    np.maximum.at(high, group[atomics], who[atomics])
    plain = np.flatnonzero(~atomics & (high[group] >= 0))
    bad = plain[(low[group[plain]] != who[plain]) | (high[group[plain]] != who[plain])]
    if not bad.size:
        return None
    p = int(bad[0])
    partner = np.flatnonzero(atomics & (group == group[p]) & (who != who[p]))
    return int(partner[0]), p


def find_conflict(
    keys: tuple[np.ndarray, ...], who: np.ndarray, writes: np.ndarray
) -> tuple[int, int] | None:
    """Two entries with equal `keys`, different `who`, the first a write (the
    second a write where possible); None if no such pair exists."""
    if who.size < 2:
        return None
    order = np.lexsort((who, *reversed(keys)))
    sorted_keys = [k[order] for k in keys]
    sorted_who, sorted_writes = who[order], writes[order]
    start = np.zeros(who.size, bool)
    start[0] = True
    for k in sorted_keys:
        start[1:] |= k[1:] != k[:-1]
    group = np.cumsum(start) - 1
    mixed = np.zeros(group[-1] + 1, bool)
    mixed[group[1:][~start[1:] & (sorted_who[1:] != sorted_who[:-1])]] = True
    written = np.zeros(group[-1] + 1, bool)
    written[group[sorted_writes]] = True
    bad = np.flatnonzero(mixed & written)
    if not bad.size:
        return None
    members = np.flatnonzero(group == bad[0])
    writers = members[sorted_writes[members]]
    for writer in writers:
        others = members[sorted_who[members] != sorted_who[writer]]
        if others.size:
            both = others[sorted_writes[others]]
            second = both[0] if both.size else others[0]
            return int(order[writer]), int(order[second])
    raise AssertionError("a mixed group with a write has a pair")  # pragma: no cover
