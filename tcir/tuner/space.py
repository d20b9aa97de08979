"""The tuning space: which values each mapping option may take for one problem.

Built from the problem's loop extents as the paper prescribes: tile, block
and thread sizes are powers of two and integer ceil-divisors of the extents
(`ceil(E / k)`: a slightly off size that avoids launching a nearly empty
extra block or tile), unrolling takes powers of two up to 4096, and fusion,
schedule restrictions and memory promotion take their discrete choices.

A candidate is a dict of genes, one per tuning parameter: `tile_0`, `tile_1`,
... (and `blocks_k`, `threads_k`, `warps_k`, `size_per_thread_k` for CUDA) are one gene per dimension, where
`None` ends the list (`tile_0 = None` means no tiling, `blocks_0 = None` lets
the mapping pass choose). The CPU space leaves the GPU-only options at their
defaults.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tcir.frontend.ast import CheckedDef
from tcir.frontend.dtypes import HALF_TYPES
from tcir.runtime.signature import evaluate
from tcir.compiler.defaults import atomic_reduction
from tcir.compiler.options import (
    FUSION_STRATEGIES,
    GPU_BACKENDS,
    MAX_STAGES,
    MAX_THREADS_PER_BLOCK,
    MappingOptions,
)
from tcir.ir.vectors import VECTOR_WIDTHS

Genes = dict[str, Any]

MAX_UNROLL = 4096
CPU_MAX_UNROLL = 64
"""The CPU space unrolls less: LLVM's O3 unrolls the loops it keeps, and every
unrolled statement instance costs milliseconds in xDSL's lowering (4096
instances of tmm take seconds to compile and gain nothing)."""
MAX_GRID_DIM = 65535
"""Largest grid size in y and z (and the one used for every dimension)."""
MAX_BLOCK_DIMS = (1024, 1024, 64)
"""Largest block size in x, y and z."""
MAX_GRID_DIMS = (2**31 - 1, MAX_GRID_DIM, MAX_GRID_DIM)
SHARED_MEMORY_CHOICES = (12288, 24576, 49152)
"""Per-block shared memory budgets: a smaller one trades reuse for occupancy."""
SPLIT_K_CHOICES = (1, 2, 4, 8, 16)
"""Slices of blocks that the k tiles of an atomic sum are dealt to (1: none)."""
PRIVATE_ELEMENT_CHOICES = (16, 32, 64)
"""Per-thread register tiles: 64 holds an 8x8 micro-tile (about 100 registers
with its operands); 128 would spill."""
WARP_CHOICES = (None, 1, 2, 4)
"""Sub-tiles of a block along a thread-mapped member (`warps`): None ends the list."""
SIZE_PER_THREAD_CHOICES = (None, 2, 4)
"""Consecutive points a thread takes along a thread-mapped member
(`size_per_thread`): None ends the list."""
LIST_GENES = ("tile", "blocks", "threads", "warps", "size_per_thread")


@dataclass(frozen=True)
class Gene:
    """One tuning parameter and its admissible values (in a fixed order)."""

    name: str
    values: tuple[Any, ...]


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to `limit` inclusive."""
    return [1 << k for k in range(max(limit, 1).bit_length()) if 1 << k <= limit]


def ceil_divisors(extent: int) -> set[int]:
    """Every distinct `ceil(extent / k)` for k = 1 .. extent."""
    return {-(-extent // k) for k in range(1, extent + 1)} if extent > 0 else set()


def size_candidates(extents: set[int], limit: int) -> tuple[int, ...]:
    """Powers of two and ceil-divisors of `extents`, at most `limit`, ascending."""
    largest = min(max(extents, default=1), limit)
    values = set(powers_of_two(largest))
    for extent in extents:
        values |= {v for v in ceil_divisors(extent) if v <= limit}
    return tuple(sorted(values))


def loop_extents(definition: CheckedDef, sizes: Mapping[str, int]) -> tuple[set[int], int]:
    """The positive extents of every statement's loops (and the sizes), and
    the deepest loop nest."""
    values = [int(sizes[n]) for n in definition.size_params]
    extents = {v for v in values if v > 0}
    depth = 0
    for stmt in definition.stmts:
        depth = max(depth, len(stmt.ranges))
        for lo, hi in stmt.ranges.values():
            extent = evaluate(hi, values) - evaluate(lo, values)
            if extent > 0:
                extents.add(extent)
    return extents, depth


def over_gpu_limits(options: MappingOptions) -> str | None:
    """Why `options` cannot launch on a GPU: a block or grid dimension over
    CUDA's limit (a block's z at most 64); None if it can."""
    for what, sizes, limits in (("threads", options.block, MAX_BLOCK_DIMS), ("blocks", options.blocks, MAX_GRID_DIMS)):
        for axis, size, limit in zip("xyz", sizes, limits):
            if size > limit:
                return f"{what} in {axis} {size} over the limit {limit}"
    return None


@dataclass(frozen=True)
class SearchSpace:
    """The genes of one problem on one backend; candidates are `Genes` dicts."""

    backend: str
    genes: tuple[Gene, ...]

    @staticmethod
    def build(
        definition: CheckedDef,
        sizes: Mapping[str, int],
        backend: str,
        *,
        max_unroll: int | None = None,
    ) -> SearchSpace:
        """The space of `definition` specialized to `sizes` for `backend`
        (`max_unroll`: 4096 on GPUs, `CPU_MAX_UNROLL` on the CPU)."""
        if max_unroll is None:
            max_unroll = MAX_UNROLL if backend in GPU_BACKENDS else CPU_MAX_UNROLL
        extents, depth = loop_extents(definition, sizes)
        tiles = (None, *size_candidates(extents, max(extents, default=1)))
        genes = [
            Gene("fusion", FUSION_STRATEGIES),
            Gene("allow_skewing", (False, True)),
            Gene("positive_coefficients", (True, False)),
            *(Gene(f"tile_{k}", tiles) for k in range(max(depth, 1))),
            Gene("pad_tiles", (False, True)),
            Gene("unroll", tuple(powers_of_two(max_unroll))),
        ]
        if backend in GPU_BACKENDS:
            # Blocks and threads map parallel members: with `parallel_reductions`,
            # an atomic reduction's dimensions are parallel too, and split-K
            # adds a block dimension (the slice) to its output dimensions.
            sums = [atomic_reduction(definition, s) for s in definition.stmts]
            parallel = (
                len(s.ranges) if atomic else len(s.lhs_indices) for s, atomic in zip(definition.stmts, sums)
            )
            mapped = min(3, max(parallel, default=1))
            # 8 elements are 16 bytes only of the 16-bit types.
            half = any(p.dtype in HALF_TYPES for p in (*definition.inputs, *definition.outputs))
            widths = VECTOR_WIDTHS if half else tuple(w for w in VECTOR_WIDTHS if w <= 4)
            blocks = (None, *size_candidates(extents, MAX_GRID_DIM))
            threads = (None, *size_candidates(extents, MAX_THREADS_PER_BLOCK))
            genes += [
                *(Gene(f"blocks_{k}", blocks) for k in range(max(mapped, 1))),
                *(Gene(f"threads_{k}", threads) for k in range(max(mapped, 1))),
                *(Gene(f"warps_{k}", WARP_CHOICES) for k in range(min(max(mapped, 1), 2))),
                *(Gene(f"size_per_thread_{k}", SIZE_PER_THREAD_CHOICES) for k in range(min(max(mapped, 1), 2))),
                Gene("use_shared_memory", (True, False)),
                Gene("use_private_memory", (True, False)),
                Gene("max_shared_memory", SHARED_MEMORY_CHOICES),
                Gene("max_private_elements", PRIVATE_ELEMENT_CHOICES),
                Gene("num_stages", tuple(range(1, MAX_STAGES + 1))),
                Gene("async_copies", (False, True)),
                Gene("transpose_copies", (False, True)),
                Gene("vector_width", widths),
                Gene("copy_vector_width", widths),
            ]
            if any(sums):
                genes += [Gene("parallel_reductions", (False, True)), Gene("split_k", SPLIT_K_CHOICES)]
            if any(s.reduces for s in definition.stmts):
                genes.append(Gene("block_reductions", (False, True)))
        return SearchSpace(backend, tuple(genes))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.genes)

    def random_genes(self, rng: random.Random) -> Genes:
        """A uniformly random candidate."""
        return {g.name: rng.choice(g.values) for g in self.genes}

    def random(self, rng: random.Random) -> MappingOptions:
        return self.decode(self.random_genes(rng))

    def encode(self, options: MappingOptions) -> Genes:
        """The genes of `options` (list options beyond the space's length are dropped)."""
        genes: Genes = {}
        for gene in self.genes:
            list_name, _, position = gene.name.rpartition("_")
            if list_name in LIST_GENES:
                values = getattr(options, list_name)
                k = int(position)
                genes[gene.name] = values[k] if k < len(values) else None
            else:
                genes[gene.name] = getattr(options, gene.name)
        return genes

    def prune(self, options: MappingOptions) -> str | None:
        """Why `options` cannot run on this space's backend, or would only
        waste compile time (None if it can run): a block or grid dimension over
        the hardware's limit, an unroll factor over the space's largest."""
        if self.backend in GPU_BACKENDS and (reason := over_gpu_limits(options)) is not None:
            return reason
        largest = max(next(g for g in self.genes if g.name == "unroll").values)
        if options.unroll > largest:
            return f"unroll {options.unroll} over the space's largest {largest}"
        return None

    def decode(self, genes: Mapping[str, Any]) -> MappingOptions:
        """The options of a candidate: list genes up to the first `None`, no
        more warp counts than thread sizes (none beside three), the thread
        sizes halved (largest first) until a block fits 1024 threads, no
        split-K where parallel reductions are on."""
        values: dict[str, Any] = {}
        lists: dict[str, list[int]] = {name: [] for name in LIST_GENES}
        ended: set[str] = set()
        for gene in self.genes:
            list_name, _, _ = gene.name.rpartition("_")
            if list_name in LIST_GENES:
                value = genes[gene.name]
                if value is None:
                    ended.add(list_name)
                elif list_name not in ended:
                    lists[list_name].append(value)
            else:
                values[gene.name] = genes[gene.name]
        threads = lists["threads"]
        lists["warps"] = lists["warps"][: len(threads)] if len(threads) <= 2 else []
        lists["size_per_thread"] = [] if lists["warps"] else lists["size_per_thread"][: len(threads)]
        while _product(threads) * _product(lists["warps"]) > MAX_THREADS_PER_BLOCK:
            largest = threads.index(max(threads))
            threads[largest] = -(-threads[largest] // 2)
        if values.get("parallel_reductions", False):
            values["split_k"] = 1  # two ways to spread a sum's reduction: parallel reductions win
        return MappingOptions(**values, **lists)


def _product(values: list[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result
