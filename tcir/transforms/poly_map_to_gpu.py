"""`poly-map-to-gpu{blocks=64,16 threads=32,8}`: map schedule trees to CUDA.

Rewrites the schedule tree of every `poly.scop` (see
`tcir.polyhedral.gpu_mapping`): a `poly.context` giving the block and thread
parameters their ranges, a `poly.mark "kernel"` per kernel, and mapping
`poly.filter`s above the outermost band (its leading parallel members to
blocks, round-robin over the grid) and above the innermost parallel band of
every branch (to threads; branches with fewer parallel members run on thread
0 of the missing dimensions). Sizes are in CUDA order, x first; the
innermost mapped member goes to x; a grid size of 0 gives one block per tile,
`threads=0` lets the pass choose (32x8, or 256 for one parallel member). A kernel band with no parallel band below
is first strip-mined by the thread sizes. Reduction members are never mapped.
`warps=4,2` (Triton's `warpsPerCTA`, x first) cuts the thread-mapped
members' tile into 4x2 sub-tiles, numbered by one more thread dimension:
`threads=4,8 warps=4,2` launches 4x8x8 threads, a warp per sub-tile.
`size-per-thread=4,4` (Triton's `sizePerThread`, x first) strip-mines each
thread-mapped band by 4 along its mapped members first: the threads take
groups of 4 consecutive points round-robin (a thread's rows of a 128-row
tile on 16 threads are `4t..4t+3` and `64+4t..64+4t+3`), and a group's
points are an inner band (not in kernels with block reductions).
Barriers (`sync_<k>()` statements) separate the parts of block-level
sequences only where threads of a block exchange data (from the scop's
accesses). The combines of `poly-block-reduction` get no thread filter:
every thread of the block runs them. `threads=32,Y` over statements that
map only x gives the band of the rows above them thread y, a warp a row:
barriers are then `syncwarp_<k>()` statements and the combines reduce
over the warp (their `gpu.all_reduce` becomes `nvgpu.subgroup_reduce`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects import gpu
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.dialects.nvgpu import SubgroupReduceOp
from tcir.dialects.poly import StmtOp
from tcir.errors import TCError
from tcir.polyhedral.block_reduction import combine_statements
from tcir.polyhedral.gpu_mapping import GpuMapping, row_statements
from tcir.polyhedral.scop import module_scops, require_mapping, scop_reads, scop_schedule, scop_writes, set_scop_schedule


@dataclass(frozen=True)
class PolyMapToGpuPass(ModulePass):
    """Map the outer parallel band to blocks and inner parallel bands to threads."""

    name = "poly-map-to-gpu"

    blocks: tuple[int, ...] = (0, 0)
    threads: tuple[int, ...] = (0,)
    warps: tuple[int, ...] = ()
    size_per_thread: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        blocks, threads, warps = tuple(self.blocks), tuple(self.threads), tuple(self.warps)
        for sizes, what in ((blocks, "blocks"), (threads, "threads")):
            if not 1 <= len(sizes) <= 3 or any(s < 0 for s in sizes):
                raise TCError(f"poly-map-to-gpu: {what} must be 1 to 3 positive sizes, got {list(sizes)}")
        if warps and (len(warps) > len(threads) or len(threads) > 2 or 0 in threads or any(w < 1 for w in warps)):
            raise TCError(
                f"poly-map-to-gpu: warps must be positive counts for 1 or 2 given thread sizes, "
                f"got warps={list(warps)} threads={list(threads)}"
            )
        size = tuple(self.size_per_thread)
        if size and (len(size) > len(threads) or 0 in threads or any(s < 1 for s in size) or warps):
            raise TCError(
                f"poly-map-to-gpu: size-per-thread must be positive sizes for at most as many given thread "
                f"sizes, without warps, got size-per-thread={list(size)} threads={list(threads)} warps={list(warps)}"
            )
        total = math.prod(GpuMapping(blocks, threads, warps).block)
        if total > 1024:
            raise TCError(f"poly-map-to-gpu: {total} threads per block exceeds 1024")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mapping = GpuMapping(tuple(self.blocks), tuple(self.threads), tuple(self.warps), tuple(self.size_per_thread))
        for scop in module_scops(op):
            require_mapping(scop, False, "poly-map-to-gpu maps a schedule once")
            accesses = (scop_reads(scop), scop_writes(scop))
            block_wide = frozenset(s.sym_name.data for s in combine_statements(scop))
            mapped = dataclasses.replace(mapping, block_wide=block_wide).map(scop_schedule(scop), accesses)
            set_scop_schedule(scop, mapped)
            rows = row_statements(mapped, block_wide)
            for stmt in scop.statements:
                if stmt.sym_name.data in rows:
                    _combine_in_warp(stmt)


def _combine_in_warp(stmt: StmtOp) -> None:
    """The block-wide `stmt`'s `gpu.all_reduce`s combine over its row's warp
    (`nvgpu.subgroup_reduce`): the statement runs on the threads of a row."""
    for op in list(stmt.body.walk()):
        if isinstance(op, gpu.AllReduceOp):
            assert op.op is not None, "poly-block-reduction's combines name their operation"
            Rewriter.replace_op(op, SubgroupReduceOp(op.op, op.operand))
