"""One kernel launch on the simulated GPU: blocks, lanes, barriers, faults.

The blocks of a launch run in a random order (seeded), in waves of up to
`LANE_BUDGET` threads. A wave runs its threads in lockstep: the simulated
kernel (`translate`) executes each op once for all the lanes that reach it,
with numpy arrays of per-lane values. Every barrier interval of every block
is checked, so the outcome does not depend on how threads interleave: two
accesses of one element by different threads, one a write, between the same
two barriers are a race whichever came first, and blocks may not share an
element that one of them writes at all (`memory.Buffer.check_conflicts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcir.backends.cuda_sim.memory import BLOCK_EPOCH, GLOBAL, PRIVATE, SHARED, Buffer
from tcir.errors import KernelFault

_ALL_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
"""The numpy reductions of `gpu.all_reduce`'s operations (`max`/`min` of
floats NaN if any value is, as the CUDA backend's)."""

LANE_BUDGET = 1 << 16
"""Threads simulated at once: a wave holds as many whole blocks as fit."""

KernelFunction = Callable[..., None]
WARP = 32
WARPGROUP = 128
"""Threads of a warpgroup (`wgmma`): 4 consecutive warps."""
WGMMA_ROWS = 64


def _tf32(values: np.ndarray) -> np.ndarray:
    """f32 `values` as the tensor cores read them as TF32: their top 19 bits
    (10 of mantissa, the rest dropped)."""
    bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32)


def coordinates(linear: int, sizes: Sequence[int]) -> tuple[int, int, int]:
    """(x, y, z) of a linear id, x varying fastest."""
    x = linear % sizes[0]
    y = linear // sizes[0] % sizes[1]
    z = linear // (sizes[0] * sizes[1])
    return (int(x), int(y), int(z))


class _AsyncCopy:
    """One `nvgpu.device_async_copy` in flight: per lane, its group and value."""

    def __init__(self, buffer: Buffer, lanes: np.ndarray, group: np.ndarray, index: tuple[Any, ...], value: Any,
                 site: int, width: int):
        self.buffer, self.lanes, self.group, self.index = buffer, lanes, group, index
        self.value, self.site, self.width = value, site, width

    def land(self, done: np.ndarray) -> None:
        """Write the elements of the lanes `done` (a mask over `lanes`); keep the others."""
        self.store(done)
        keep = ~done
        self.lanes, self.group = self.lanes[keep], self.group[keep]
        self.index, self.value = self.select(self.index, self.value, keep)

    def store(self, done: np.ndarray) -> None:
        index, value = self.select(self.index, self.value, done)
        if self.width == 1:
            self.buffer.store(self.lanes[done], index, value, self.site)
        else:
            self.buffer.store_vector(self.lanes[done], index, value, self.site, self.width)

    def select(self, index: tuple[Any, ...], value: Any, mask: np.ndarray) -> tuple[tuple[Any, ...], Any]:
        """The lanes `mask` of per-lane indices and values (uniform ones as they are:
        a value is per lane where it has an axis more than a vector of `width`)."""
        lanes_axis = 1 if self.width == 1 else 2
        return (
            tuple(i[mask] if np.ndim(i) else i for i in index),
            value[mask] if np.ndim(value) == lanes_axis else value,
        )


class Launch:
    """The state of one launch that simulated kernels and buffers use: the
    current wave's thread and block ids per lane, each lane's barrier epoch
    (how many barriers its block passed), and the ops' descriptions (`sites`)."""

    def __init__(
        self,
        kernel: str,
        sites: Sequence[str],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        rng: np.random.Generator,
    ):
        self.kernel = kernel
        self.sites = sites
        self.grid = grid
        self.block = block
        self.threads = math.prod(block)
        self.warps_a_block = -(-self.threads // WARP)
        self.order = rng.permutation(math.prod(grid))
        """Block ordinal (the order blocks run in) -> linear block id."""
        self.lane_base = 0
        self.wave_blocks = 0
        self.epoch = np.zeros(0, np.int64)
        self.tid: tuple[np.ndarray, ...] = ()
        self.bid: tuple[np.ndarray, ...] = ()
        self.shared_buffers: list[Buffer] = []
        self.index_error: tuple[int, int, int] | None = None
        """The first `check.index` that failed: (check id, subscript, index value)."""
        self.groups = np.zeros(0, np.int64)
        """Each lane's groups of asynchronous copies so far (`async_commit`)."""
        self.in_flight: list[_AsyncCopy] = []

    # What kernels call ------------------------------------------------------

    def shared(self, shape: tuple[int, ...], dtype: str, name: str) -> Buffer:
        """A `__shared__` array: one uninitialized copy per block of the wave."""
        size = math.prod(shape) * self.wave_blocks
        buffer = Buffer(
            self, name, SHARED, shape, np.zeros(size, dtype),
            initialized=np.zeros(size, bool), logged=True,
        )  # fmt: skip
        self.shared_buffers.append(buffer)
        return buffer

    def private(self, shape: tuple[int, ...], dtype: str, name: str) -> Buffer:
        """A per-thread array: one uninitialized copy per lane of the wave."""
        size = math.prod(shape) * self.epoch.size
        return Buffer(
            self, name, PRIVATE, shape, np.zeros(size, dtype),
            initialized=np.zeros(size, bool), logged=False,
        )  # fmt: skip

    def check_index(self, check: int, subscript: Any, value: Any, extent: int) -> Any:
        """`check.index`: the subscripts, 0 where out of [0, extent), the first
        such recorded (reported when the launch ends, as the GPU does)."""
        ok = (subscript >= 0) & (subscript < extent)
        if np.all(ok):
            return subscript
        if self.index_error is None:
            bad = int(np.flatnonzero(np.broadcast_to(~ok, np.shape(ok) or (1,)))[0])
            pick = lambda x: int(np.ravel(x)[bad] if np.ndim(x) else x)  # noqa: E731
            self.index_error = (check, pick(subscript), pick(value))
        return np.where(ok, subscript, 0) if np.ndim(ok) else 0

    def async_copy(self, buffer: Buffer, lanes: np.ndarray, index: tuple[Any, ...], value: Any, site: int,
                   width: int) -> None:
        """`nvgpu.device_async_copy`: `value` (read now) lands in `buffer` at
        `index` when a wait of each lane covers the lane's current group."""
        self.in_flight.append(_AsyncCopy(buffer, lanes, self.groups[lanes], index, value, site, width))

    def async_commit(self, lanes: np.ndarray) -> None:
        """`nvgpu.device_async_create_group`: the lanes' copies so far form a group."""
        self.groups[lanes] += 1

    def async_wait(self, lanes: np.ndarray, pending: int) -> None:
        """`nvgpu.device_async_wait`: the copies of all but the lanes' last
        `pending` groups land (in shared memory, between this barrier
        interval's accesses: a read by another thread before a barrier races)."""
        waiting = np.zeros(self.groups.size, bool)
        waiting[lanes] = True
        for copy in list(self.in_flight):
            done = waiting[copy.lanes] & (copy.group < self.groups[copy.lanes] - pending)
            if done.any():
                copy.land(done)
                if done.all():
                    self.in_flight.remove(copy)

    def mma_sync(self, lanes: np.ndarray, a: Sequence[Any], b: Sequence[Any], c: Sequence[Any],
                 site: int) -> tuple[np.ndarray, ...]:
        """`nvgpu.mma.sync` by `lanes` (m16n8k8 TF32 for 4 registers of A,
        m16n8k16 f16/bf16 for 8): all 32 threads of each of their warps must
        be there; D = A B + C per warp (A and B as TF32, or exactly), from
        and to the threads' registers (see `tcir.dialects.nvgpu`)."""
        self._whole(lanes, WARP, "mma.sync", "warp", site)
        lane = lanes % WARP
        order = np.argsort(lanes, kind="stable")
        g, t = lane[order] // 4, lane[order] % 4
        w = np.repeat(np.arange(order.size // WARP), WARP)
        per_lane = lambda v: np.broadcast_to(np.asarray(v, np.float32), lanes.shape)[order]  # noqa: E731
        k = 4 * len(b)  # 8 (TF32), 16 (half)
        A, B, C = (np.zeros((order.size // WARP, *shape), np.float64) for shape in ((16, k), (k, 8), (16, 8)))
        if len(a) == 4:
            for value, row, column in zip(a, (g, g + 8, g, g + 8), (t, t, t + 4, t + 4)):
                A[w, row, column] = _tf32(per_lane(value))
            for value, row in zip(b, (t, t + 4)):
                B[w, row, g] = _tf32(per_lane(value))
        else:
            half_rows, half_columns = (g, g, g + 8, g + 8) * 2, (2 * t, 2 * t + 1) * 2 + (2 * t + 8, 2 * t + 9) * 2
            for value, row, column in zip(a, half_rows, half_columns):
                A[w, row, column] = per_lane(value)
            for value, row in zip(b, (2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9)):
                B[w, row, g] = per_lane(value)
        places = list(zip((g, g, g + 8, g + 8), (2 * t, 2 * t + 1, 2 * t, 2 * t + 1)))
        for value, (row, column) in zip(c, places):
            C[w, row, column] = per_lane(value)
        D = (A @ B + C).astype(np.float32)
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return tuple(D[w, row, column][back] for row, column in places)

    def _whole(self, lanes: np.ndarray, size: int, op: str, group: str, site: int) -> None:
        """Fault unless `lanes` are whole groups of `size` threads (warps, warpgroups)."""
        if self.threads % size:
            self.fault("mma", f"{op} ({self.site(site)}) in a block of {self.threads} threads, not whole {group}s")
        groups = lanes // size
        counts = np.bincount(groups)
        partial = np.flatnonzero((counts > 0) & (counts < size))
        if partial.size:
            first = self.ordinals(lanes[groups == partial[0]][:1])[0]
            self.fault("mma", f"divergent {op} ({self.site(site)}): {self.thread(int(first))} reaches it "
                       f"without all the threads of its {group}")

    def warpgroup_mma(self, lanes: np.ndarray, a: tuple[Buffer, tuple[Any, ...]], b: tuple[Buffer, tuple[Any, ...]],
                      c: Sequence[Any], k: int, tf32: bool, site: int,
                      transposes: tuple[bool, bool] = (False, False)) -> tuple[np.ndarray, ...]:
        """`nvgpu.warpgroup.mma` (m64nNkK) by `lanes`: all 128 threads of each
        of their warpgroups must be there with the same descriptors; D = A
        B^T + C per warpgroup (A and B read as TF32 where `tf32`, else as
        they are: f16, bf16), A the 64 x K and B the N x K
        elements of shared memory from the descriptors' elements on (K x 64
        and K x N where `transposes` says it, MN-major; each thread loads its
        share, so that the reads are checked like its own), C and D in the
        threads' registers (see `tcir.dialects.nvgpu`)."""
        self._whole(lanes, WARPGROUP, "wgmma", "warpgroup", site)
        order = np.argsort(lanes, kind="stable")
        ordered = lanes[order]
        n = 2 * len(c)
        count = order.size // WARPGROUP
        lane, group = ordered % WARPGROUP, np.arange(count).repeat(WARPGROUP)
        per_lane = lambda v: np.broadcast_to(np.asarray(v), lanes.shape)[order]  # noqa: E731

        def operand(descriptor: tuple[Buffer, tuple[Any, ...]], rows: int, transposed: bool) -> np.ndarray:
            buffer, index = descriptor
            starts = [per_lane(i).reshape(count, WARPGROUP) for i in index]
            if any(np.any(s != s[:, :1]) for s in starts):
                self.fault("mma", f"wgmma ({self.site(site)}) with different descriptors in one warpgroup")
            values = np.zeros((count, rows * k), np.float64)
            *outer, row, column = (s.reshape(-1) for s in starts)
            for share in range(-(-rows * k // WARPGROUP)):  # lane l loads elements l, l + 128, ...
                element = lane + WARPGROUP * share
                mine = element < rows * k
                r, kk = element[mine] // k, element[mine] % k
                at = (*(o[mine] for o in outer), *((row[mine] + kk, column[mine] + r) if transposed else (row[mine] + r, column[mine] + kk)))
                loaded = np.asarray(buffer.load(ordered[mine], at, site), np.float32)
                values[group[mine], element[mine]] = _tf32(loaded) if tf32 else loaded
            return values.reshape(count, rows, k)

        A, B = operand(a, WGMMA_ROWS, transposes[0]), operand(b, n, transposes[1])
        w, g, t = lane // WARP, (lane % WARP) // 4, lane % 4
        places = [(16 * w + g + 8 * h, 8 * q + 2 * t + e) for q in range(n // 8) for h in (0, 1) for e in (0, 1)]
        C = np.zeros((count, WGMMA_ROWS, n), np.float64)
        for value, (row, column) in zip(c, places):
            C[group, row, column] = per_lane(value).astype(np.float32)
        D = (A @ B.transpose(0, 2, 1) + C).astype(np.float32)
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return tuple(D[group, row, column][back] for row, column in places)

    def barrier(self, lanes: np.ndarray, site: int) -> None:
        """`__syncthreads()` by `lanes`: all threads of each of their blocks must be there."""
        self._converged(lanes, site, "barrier")
        self.epoch[lanes] += BLOCK_EPOCH

    def warp_barrier(self, lanes: np.ndarray, site: int) -> None:
        """`__syncwarp()` by `lanes`: all threads of each of their warps must be there."""
        self._warps_converged(lanes, site, "nvgpu.subgroup_barrier")
        self.epoch[lanes] += 1

    def _converged(self, lanes: np.ndarray, site: int, what: str) -> None:
        """Fault unless `lanes` are whole blocks."""
        if lanes.size != self.epoch.size:
            blocks = lanes // self.threads
            counts = np.bincount(blocks, minlength=self.wave_blocks)
            partial = np.flatnonzero((counts > 0) & (counts < self.threads))
            if partial.size:
                self.divergent(lanes, int(partial[0]), site, what)

    def warps(self, lanes: np.ndarray) -> np.ndarray:
        """The number of each lane's warp (wave-wide for the wave's lanes,
        launch-wide for ordinals): `warps_a_block` a block, x fastest."""
        return lanes // self.threads * self.warps_a_block + lanes % self.threads // WARP

    def _warps_converged(self, lanes: np.ndarray, site: int, what: str) -> None:
        """Fault unless `lanes` are whole warps (a block's last one may be short)."""
        if lanes.size != self.epoch.size:
            warps = self.warps(lanes)
            counts = np.bincount(warps)
            present = np.bincount(self.warps(np.arange(self.epoch.size)), minlength=counts.size)[: counts.size]
            partial = np.flatnonzero((counts > 0) & (counts < present))
            if partial.size:
                self.divergent(lanes, int(partial[0]) // self.warps_a_block, site, what)

    def all_reduce(self, lanes: np.ndarray, value: Any, kind: str, site: int) -> np.ndarray:
        """`gpu.all_reduce` by `lanes`: all threads of each of their blocks
        must be there, and each gets the combination of its block's values.
        It orders no memory accesses (the kernel's barriers must)."""
        self._converged(lanes, site, "gpu.all_reduce")
        order = np.argsort(lanes, kind="stable")
        values = np.broadcast_to(np.asarray(value), lanes.shape)[order].reshape(-1, self.threads)
        totals = np.repeat(_ALL_REDUCE[kind].reduce(values, axis=1, dtype=values.dtype), self.threads)
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return totals[back]

    def subgroup_reduce(self, lanes: np.ndarray, value: Any, kind: str, site: int) -> np.ndarray:
        """`nvgpu.subgroup_reduce` by `lanes`: all threads of each of their
        warps must be there, and each gets the combination of its warp's values."""
        self._warps_converged(lanes, site, "nvgpu.subgroup_reduce")
        warps = self.warps(lanes)
        values = np.broadcast_to(np.asarray(value), lanes.shape)
        order = np.argsort(warps, kind="stable")
        starts = np.flatnonzero(np.r_[True, warps[order][1:] != warps[order][:-1]])
        totals = _ALL_REDUCE[kind].reduceat(values[order], starts)
        return totals[np.searchsorted(warps[order][starts], warps)]

    def ordinals(self, lanes: np.ndarray) -> np.ndarray:
        """Launch-wide ordinals of the wave's `lanes`."""
        return lanes + self.lane_base if self.lane_base else lanes

    # Running ------------------------------------------------------------------

    def run(self, kernel: KernelFunction, args: Sequence[Any]) -> None:
        """Run every block of the grid through `kernel`, wave by wave, then
        check the global buffers among `args` for races and conflicts."""
        per_wave = max(1, LANE_BUDGET // self.threads)
        blocks = len(self.order)
        thread = np.arange(min(per_wave, blocks) * self.threads) % self.threads
        tid = self.split(thread, self.block)
        with np.errstate(all="ignore"):
            for first in range(0, blocks, per_wave):
                ids = self.order[first : first + per_wave]
                lanes = np.arange(ids.size * self.threads)
                self.wave_blocks = ids.size
                self.lane_base = first * self.threads
                self.epoch = np.zeros(lanes.size, np.int64)
                self.tid = tuple(t[: lanes.size] for t in tid)
                self.bid = self.split(np.repeat(ids, self.threads), self.grid)
                self.shared_buffers = []
                self.groups = np.zeros(lanes.size, np.int64)
                self.in_flight = []  # copies no wait covered never land: reads of them fault
                try:
                    kernel(self, lanes, *args)
                except ZeroDivisionError:
                    self.fault("arithmetic", "integer division by zero")
                for buffer in self.shared_buffers:
                    buffer.check_conflicts()
        for arg in args:
            if isinstance(arg, Buffer) and arg.kind == GLOBAL:
                arg.check_conflicts()

    @staticmethod
    def split(linear: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
        """(x, y, z) per lane of linear ids, x fastest."""
        return (
            linear % sizes[0],
            linear // sizes[0] % sizes[1],
            linear // (sizes[0] * sizes[1]),
        )

    # Reporting ----------------------------------------------------------------

    def block_coordinates(self, ordinal: int) -> tuple[int, int, int]:
        return coordinates(int(self.order[ordinal // self.threads]), self.grid)

    def thread(self, ordinal: int) -> str:
        """`thread (x, y, z) of block (x, y, z)` for a launch-wide lane ordinal."""
        t = coordinates(int(ordinal) % self.threads, self.block)
        return f"thread {t} of block {self.block_coordinates(int(ordinal))}"

    def site(self, k: int) -> str:
        return self.sites[k]

    def fault(self, kind: str, message: str) -> None:
        raise KernelFault(f"cuda-sim: kernel '{self.kernel}': {message}", kind)

    def divergent(self, lanes: np.ndarray, block: int, site: int, what: str) -> None:
        present = lanes[lanes // self.threads == block] % self.threads
        absent = np.setdiff1d(np.arange(self.threads), present)
        base = self.lane_base + block * self.threads
        self.fault(
            "barrier",
            f"divergent {what} ({self.site(site)}): {self.thread(base + int(present[0]))} "
            f"reaches it but {self.thread(base + int(absent[0]))} does not",
        )
