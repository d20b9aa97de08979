"""`tcir.MappingOptions`: every knob of the polyhedral pipeline in one object.

An options object is what the autotuner searches over and what the
compilation cache stores; `pipeline()` gives the `tcir-opt` pass pipeline it
stands for, so any kernel can be reproduced on the command line.
"""

from __future__ import annotations

import json
import marshal
import math
from dataclasses import dataclass, field, fields
from typing import Any

from tcir.errors import TCError
from tcir.ir.vectors import VECTOR_WIDTHS

FUSION_STRATEGIES = ("min", "max", "preserve3", "outer")
GPU_BACKENDS = ("cuda", "cuda-sim")
"""Backends that run the GPU pipeline (the simulated GPU runs CUDA's kernels)."""
MAX_THREADS_PER_BLOCK = 1024
MAX_SHARED_MEMORY = 232448
"""Largest dynamic shared memory per block on an H100 (227 KiB)."""
MAX_PRIVATE_ELEMENTS = 255
"""A thread has at most 255 registers: a larger private tile cannot stay in them."""
MAX_STAGES = 5
"""Copies are staged in registers one step ahead, and in a second shared buffer."""
ATOMIC_DTYPES = ("float32", "float64", "int32")
"""Element types whose `+=`, `max=` and `min=` reductions `poly-parallel-reduction` combines by atomics."""


class _Interned(type):
    """Options made with equal arguments are one object, validated and keyed
    once: a call that makes its options anew (`options=MappingOptions(...)`)
    costs what one reusing them does. Options of equal value made from other
    arguments (every field spelled out, `dataclasses.replace`) are that same
    object too, so that a cache keyed by options finds them by identity,
    without comparing their keys."""

    LIMIT = 4096
    """Kept constructions of a class (its caches are emptied when they grow past them)."""

    def __init__(cls, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cls._made: dict[bytes, Any] = {}
        """The arguments' marshal bytes: the object made of them."""
        cls._values: dict[str, Any] = {}
        """An object's `key`: the first object of that value."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        # The arguments' key is their marshal bytes (a C function: the rest of
        # what a call with new equal options pays). marshal writes builtin
        # values of exact types only, with their types (`True` is no `1`,
        # `[1]` no `(1,)`), so equal bytes are equal arguments; it refuses
        # anything else, which the checks then judge. Version 2 writes no
        # back-references, whose use depends on reference counts.
        try:
            key = marshal.dumps((args, kwargs) if args else kwargs, 2)
        except ValueError:
            return cls._value(super().__call__(*args, **kwargs))
        made = cls._made.get(key)
        if made is None:
            made = cls._value(super().__call__(*args, **kwargs))
            if len(cls._made) >= _Interned.LIMIT:
                cls._made.clear()
            cls._made[key] = made
        return made

    def _value(cls, made: Any) -> Any:
        """The first object of `made`'s value."""
        first = cls._values.setdefault(made.key, made)
        if len(cls._values) > _Interned.LIMIT:
            cls._values.clear()
            cls._values[made.key] = first
        return first


@dataclass(frozen=True)
class MappingOptions(metaclass=_Interned):
    """How to schedule, tile and map a TC def (docs/reference/mapping-options.md
    lists every field with its default, the tuner's values and the pass it drives).

    Equal arguments give the same (immutable) object; equal options compare
    and hash by `key`."""

    fusion: str = "max"
    """The isl scheduler's fusion strategy: `min` (no fusion), `max` (one
    outer band over all statements where legal), `preserve3` (the most
    fusion that keeps three outer parallel members) or `outer` (`preserve3`'s
    bands fused along their outermost member: one kernel for a chain of layers)."""
    allow_skewing: bool = False
    """Let the scheduler keep band members that skew (combine loops with
    non-unit coefficients); otherwise they are cut away."""
    positive_coefficients: bool = True
    """Keep only band members whose coefficients are non-negative."""
    tile: list[int] = field(default_factory=list[int])
    """Tile sizes by schedule depth, outermost first; empty: no tiling (1: a
    member left untiled)."""
    pad_tiles: bool = False
    """Compute every tile whole, as Triton and CUTLASS do: where a tile size
    does not divide an output dimension (1000 on 64), the statements'
    domains are padded to the next multiple (`poly-pad-tiles`), the points
    past the edge read clamped subscripts (zero, of what the def itself
    writes) and store nothing. The blocks at the edge then run the code of
    the others, without a guard at each point of their register tiles."""
    blocks: list[int] = field(default_factory=list[int])
    """The CUDA grid, x first (at most 3 sizes); empty or 0: one block per tile."""
    threads: list[int] = field(default_factory=list[int])
    """The CUDA block, x first (at most 3 sizes, at most 1024 threads); empty:
    the pass chooses (32x8, or 256 for one parallel member)."""
    warps: list[int] = field(default_factory=list[int])
    """Sub-tiles per block along the thread-mapped members, x first, as
    Triton's `warpsPerCTA`: the block's tile is cut into that grid, a
    sub-tile per value of one more thread dimension, and `threads` deal each
    sub-tile's points round-robin. `threads=[4, 8]`, `warps=[4, 2]` on a
    128x128 tile launches 4x8x8 threads, each warp owning a 64x32 sub-tile
    (CUTLASS's warp tile): what `mma.sync` fragments want, and a thread's
    register tile a block of rows and columns near each other. Where
    `threads` do not divide the sub-tiles, the warps beyond the first idle
    (the block's tile is `threads`' alone). Empty: one sub-tile, the block
    is `threads`."""
    size_per_thread: list[int] = field(default_factory=list[int])
    """Consecutive points a thread takes at a time along the thread-mapped
    members, x first, as Triton's `sizePerThread` (`poly-map-to-gpu{size-per-
    thread=...}`): `threads` deal groups of that many points round-robin.
    `threads=[16, 16]`, `size_per_thread=[4, 4]` on a 128x128 tile gives a
    thread rows and columns `4t..4t+3` and `64+4t..64+4t+3` (CUTLASS's SIMT
    thread tile): its register tile keeps just those (`ArrayTile.runs`), and
    it reads a `[k][m]` shared tile's rows four at a time (one 16-byte load).
    Not with `warps`; ignored with `block_reductions`. Empty: 1, each point
    dealt on its own."""
    unroll: int = 1
    """Unroll innermost loops up to this many instances (a sequential loop
    that does not fit partially, by a divisor of its trip count)."""
    use_shared_memory: bool = True
    """Promote array tiles that a block's threads share to shared memory."""
    use_private_memory: bool = True
    """Promote a thread's own accumulators and reused elements to registers."""
    max_shared_memory: int = 49152
    """Bytes of shared memory a block may use (48 KiB statically; up to
    227 KiB on an H100, which kernels then request dynamically)."""
    max_private_elements: int = 32
    """Elements a thread may keep in registers (64: an 8x8 micro-tile)."""
    num_stages: int = 1
    """Stages of the shared-memory copies of a sequential loop, as Triton's
    `num_stages`: 2 loads the next step's tiles into registers while this
    step computes (`gpu-prefetch-copies`); 3 also gives the shared tiles a
    second buffer, which the registers fill after this step's math, one
    barrier a step (`gpu-prefetch-copies{double-buffer=true}`, where twice
    the tiles fit in `max_shared_memory`); 4 and 5 are 3 but, with
    `async_copies`, 3 and 4 buffers."""
    parallel_reductions: bool = False
    """Map the reduction dimensions of sums to blocks and threads too, each
    statement a kernel of its own, partial sums combined by atomic adds
    (`poly-parallel-reduction`): for reductions whose output alone cannot
    fill the GPU (a matrix-vector product, a row sum). The fusion and
    scheduler options then do not apply."""
    block_reductions: bool = False
    """Spread reductions over the threads of a block inside fused kernels
    (`poly-block-reduction`): each thread combines a share of a reduction's
    points, the block combines the threads' partial values (warp shuffles
    and one shared-memory step), and the result is there for the block's
    next statements (a softmax's or a norm's row in one kernel). Reductions
    whose innermost band cannot be spread stay serial in a thread. With
    `tile`, the tiles' points stay above the reductions (`poly-sink{sink=
    false}`); with `threads=[32, Y]` a tile's rows then go to thread y, a
    warp each, combined within the warp."""
    split_k: int = 1
    """Split-K, as Triton's `SPLIT_K`: above 1, each `+=` sum that atomics
    can combine runs as a kernel of its own whose loop over k tiles (the
    reduction member of its tile band) is dealt to `split_k` slices of
    blocks, a leading block dimension (three grid dimensions when `blocks`
    is empty); each block loops over its slice's k tiles with the usual
    shared copies and adds its private partial sums to the output atomically
    (`poly-parallel-reduction{coincident-reductions=false}`, then
    `poly-split-k{slices=split_k}` after tiling). `tile` keeps its meaning:
    `tile=[64, 64, 32]` tiles a matmul's m, n and k. As with
    `parallel_reductions` (which it excludes), every statement is a kernel
    of its own and the fusion and scheduler options do not apply."""
    vector_width: int = 1
    """Elements a thread reads at once from a shared buffer, as CUDA's float2
    and float4 (1, 2 or 4; 8 for 16-bit types, 16 bytes): shared rows padded to aligned, conflict-free
    vectors (`poly-promote{vector-width=...}`) and each kernel's reduction
    point loop unrolled by the width (`poly-vectorize`), so that nvcc loads
    them with one instruction."""
    copy_vector_width: int = 1
    """Elements a thread moves at once from global to shared memory (1, 2
    or 4: float, float2, float4; 8 halves are 16 bytes too): the copies deal aligned groups of that
    many consecutive elements to the threads (`poly-promote{copy-vector-
    width=...}`) and each group moves with one vector load and store
    (`gpu-vectorize-copies`), where the tile's rows are whole groups;
    elsewhere the copies stay scalar. Its global inputs must then be
    16-byte aligned, which the runtime ensures (copying one that is not)."""
    transpose_copies: bool = False
    """Lay out the shared tile of an operand whose innermost reduction index
    is not its last subscript (`B(k, n)` of `A(m, k) * B(k, n)`) with that
    dimension last, `[n][k]`, as the other operand's (`poly-promote{transpose-
    copies=true}`): the copy reads the tensor along its rows (coalesced) and
    writes the tile transposed, and the product then reads both tiles along
    k, `vector_width` elements at once. Such copies move one element at a
    time (no `copy_vector_width` groups, 4-byte `cp.async`). With
    `size_per_thread`, a thread reads its groups along the output's rows
    and columns instead: an operand read by an output index in another
    dimension than its last (`A(m, k)`) is laid out `[k][m]`, its copy
    again an element at a time."""
    async_copies: bool = False
    """With `num_stages` of 3 or more, copy the next steps' tiles straight into
    their shared buffers with sm_80's `cp.async` (`nvgpu.device_async_copy`,
    `gpu-prefetch-copies{async-copies=true buffers=num_stages-1}`: 4 and 5
    give the tiles 3 and 4 buffers, the copies 2 and 3 steps ahead, where
    they fit in `max_shared_memory`), without registers: a wait and
    one barrier a step. Copies of other shapes, and GPUs before sm_80 (a
    plain copy then), keep the synchronous path."""
    allow_tf32: bool = False
    """Let f32 contractions run on the tensor cores with TF32 products (10
    bits of mantissa), as PyTorch's `torch.backends.cuda.matmul.allow_tf32`:
    a contraction whose mapping fits `mma.sync` (`threads=[4, Y]`, Y a
    multiple of 8, whole 16x8x8 groups per warp) becomes warp-level TF32
    `mma.sync` (`poly-map-to-mma`). A choice of precision, so the user's and
    never the tuner's; the defaults then pick such a mapping."""
    warpgroup_mma: bool = False
    """Run a contraction of f16 or bf16 operands (or, with `allow_tf32`, of
    f32 ones) whose mapping fits sm_90's warpgroup-level `wgmma` on it
    (`threads=[4, 8]`, `warps=[1, W]` with W a multiple of 4: warpgroups of
    64 rows of a tile of N <= 256 columns and 128 bytes of k, 32 f32 or 64
    halves, `poly-map-to-mma{warpgroup=true}`): 4 warps issue one m64nNk8
    (TF32) or m64nNk16 (halves) from shared tiles in the 128-byte swizzle,
    without loading fragments into registers. CUDA runs it on sm_90 (H100),
    elsewhere by plain loads."""
    specialize: bool = True
    """Specialize the sizes before the polyhedral passes (`tc-specialize`, as
    the JIT does); false keeps them symbolic where the passes allow."""

    def __post_init__(self) -> None:
        if self.fusion not in FUSION_STRATEGIES:
            raise TCError(
                f"MappingOptions: fusion must be one of {', '.join(FUSION_STRATEGIES)}, "
                f"got '{self.fusion}'"
            )
        for name in ("tile", "blocks", "threads", "warps", "size_per_thread"):
            values = getattr(self, name)
            if not isinstance(values, list | tuple) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in values
            ):
                raise TCError(f"MappingOptions: {name} must be a list of integers, got {values!r}")
            if any(v <= 0 for v in values):
                raise TCError(f"MappingOptions: {name} sizes must be positive, got {list(values)}")
            object.__setattr__(self, name, list(values))
        if len(self.blocks) > 3 or len(self.threads) > 3:
            raise TCError("MappingOptions: at most 3 block and 3 thread dimensions")
        if self.warps and not 1 <= len(self.warps) <= len(self.threads) <= 2:
            raise TCError(
                f"MappingOptions: warps needs 1 or 2 thread sizes and at most as many counts, "
                f"got warps={self.warps} threads={self.threads}"
            )
        if self.size_per_thread and (len(self.size_per_thread) > len(self.threads) or self.warps):
            raise TCError(
                f"MappingOptions: size_per_thread needs at least as many thread sizes and no warps, "
                f"got size_per_thread={self.size_per_thread} threads={self.threads} warps={self.warps}"
            )
        threads = 1
        for t in self.block:
            threads *= t
        if threads > MAX_THREADS_PER_BLOCK:
            raise TCError(
                f"MappingOptions: {threads} threads per block ({self.block}) exceeds "
                f"{MAX_THREADS_PER_BLOCK}"
            )
        if type(self.unroll) is not int or self.unroll < 1:
            raise TCError(f"MappingOptions: unroll must be a positive integer, got {self.unroll!r}")
        if type(self.max_shared_memory) is not int or not 0 <= self.max_shared_memory <= MAX_SHARED_MEMORY:
            raise TCError(
                f"MappingOptions: max_shared_memory must be in [0, {MAX_SHARED_MEMORY}], "
                f"got {self.max_shared_memory}"
            )

        if (
            type(self.max_private_elements) is not int
            or not 0 <= self.max_private_elements <= MAX_PRIVATE_ELEMENTS
        ):
            raise TCError(
                f"MappingOptions: max_private_elements must be in [0, {MAX_PRIVATE_ELEMENTS}], "
                f"got {self.max_private_elements!r}"
            )

        for name in (
            "pad_tiles", "parallel_reductions", "block_reductions", "transpose_copies", "async_copies", "allow_tf32",
            "warpgroup_mma",
        ):
            if type(getattr(self, name)) is not bool:
                raise TCError(f"MappingOptions: {name} must be a bool, got {getattr(self, name)!r}")
        if type(self.split_k) is not int or self.split_k < 1:
            raise TCError(f"MappingOptions: split_k must be an integer >= 1, got {self.split_k!r}")
        if self.split_k > 1 and self.parallel_reductions:
            raise TCError(
                "MappingOptions: split_k > 1 and parallel_reductions both spread a sum's reduction "
                "over blocks: choose one"
            )
        if type(self.num_stages) is not int or not 1 <= self.num_stages <= MAX_STAGES:
            raise TCError(f"MappingOptions: num_stages must be in [1, {MAX_STAGES}], got {self.num_stages!r}")

        for name in ("vector_width", "copy_vector_width"):
            width = getattr(self, name)
            if type(width) is not int or width not in VECTOR_WIDTHS:
                raise TCError(
                    f"MappingOptions: {name} must be one of {', '.join(map(str, VECTOR_WIDTHS))}, got {width!r}"
                )

        object.__setattr__(self, "key", self.to_json())

    @property
    def block(self) -> list[int]:
        """The block's thread sizes: `threads`, then the number of sub-tiles of `warps`."""
        return [*self.threads, math.prod(self.warps)] if self.warps else self.threads

    key: str = field(init=False, repr=False, compare=False)
    """The JSON text, computed once: a hashable identity for caches."""

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, MappingOptions) and self.key == other.key)

    def __hash__(self) -> int:
        return hash(self.key)

    def to_json(self) -> str:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> MappingOptions:
        """Options from `to_json` text; malformed text raises TCError."""
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as e:
            raise TCError(f"MappingOptions: invalid JSON: {e}") from None
        if not isinstance(data, dict):
            raise TCError("MappingOptions: expected a JSON object")
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(data) - known)
        if unknown:
            raise TCError(f"MappingOptions: unknown fields {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as e:
            raise TCError(f"MappingOptions: {e}") from None

    @property
    def scheduler_key(self) -> tuple[str, bool, bool, bool, bool]:
        """The options the schedule depends on: candidates that share them
        share the schedule (split-K's depends on whether it splits, not on
        the number of slices)."""
        return (
            self.fusion,
            self.allow_skewing,
            self.positive_coefficients,
            self.parallel_reductions,
            self.split_k > 1,
        )

    def schedule_pass(self) -> str:
        """The pass that schedules the scop: `poly-schedule` with these
        options, or `poly-parallel-reduction`."""
        if self.split_k > 1:
            return "poly-parallel-reduction{coincident-reductions=false}"
        if self.parallel_reductions:
            return "poly-parallel-reduction"
        return (
            f"poly-schedule{{fusion={self.fusion} "
            f"allow-skewing={str(self.allow_skewing).lower()} "
            f"positive-coefficients={str(self.positive_coefficients).lower()}}}"
        )

    def schedule_passes(self) -> list[str]:
        """The polyhedral passes these options imply, up to scheduling and tiling."""
        return ["convert-tc-to-poly", self.schedule_pass(), *self.tiling_passes()]

    def tiling_passes(self) -> list[str]:
        """Tiling, sinking, split-K and unrolling: what follows the schedule
        on every backend (split-K's slices are outermost loops on the CPU)."""
        passes = []
        if self.tile:
            sizes = ",".join(map(str, self.tile))
            if self.pad_tiles:
                passes.append(f"poly-pad-tiles{{sizes={sizes}}}")
            passes.append(f"poly-tile{{sizes={sizes}}}")
            passes.append("poly-sink{sink=false}" if self.block_reductions else "poly-sink")
        if self.split_k > 1:
            passes.append(f"poly-split-k{{slices={self.split_k}}}")
        if self.unroll > 1:
            passes.append(f"poly-unroll{{factor={self.unroll}}}")
        return passes

    def backend_passes(self, backend: str) -> list[str]:
        """What lowers the tiled scop for `backend`: loops, or GPU kernels."""
        if backend == "cpu":
            return ["convert-poly-to-loops"]
        if backend in GPU_BACKENDS:
            return self.gpu_passes()
        raise TCError(f"MappingOptions: no pipeline for backend '{backend}'")

    def pipeline(self, sizes: dict[str, int] | None = None, backend: str = "cpu") -> str:
        """The `tcir-opt -p` pipeline for these options (sizes specialized if given)."""
        passes: list[str] = []
        if self.specialize and sizes:
            passes.append(specialize_pass(sizes))
        return ",".join([*passes, *self.schedule_passes(), *self.backend_passes(backend)])

    def gpu_passes(self) -> list[str]:
        """Mapping to blocks and threads (empty sizes let the pass choose: one
        block per tile, of three tile members for split-K, else two; 32x8 or
        256 threads), memory promotion, then kernels, their index arithmetic
        simplified; point loops of partial tiles versioned for the full ones."""
        blocks = ",".join(map(str, self.blocks or [0] * (3 if self.split_k > 1 else 2)))
        threads = ",".join(map(str, self.threads or [0]))
        warps = f" warps={','.join(map(str, self.warps))}" if self.warps else ""
        size = f" size-per-thread={','.join(map(str, self.size_per_thread))}" if self.size_per_thread else ""
        passes = ["poly-block-reduction"] if self.block_reductions else []
        passes.append(f"poly-map-to-gpu{{blocks={blocks} threads={threads}{warps}{size}}}")
        if self.use_shared_memory or self.use_private_memory:
            passes.append(
                f"poly-promote{{shared={str(self.use_shared_memory).lower()} "
                f"private={str(self.use_private_memory).lower()} "
                f"max-shared-bytes={self.max_shared_memory} "
                f"max-private-elements={self.max_private_elements}"
                f"{f' vector-width={self.vector_width}' if self.vector_width > 1 else ''}"
                f"{f' copy-vector-width={self.copy_vector_width}' if self.copy_vector_width > 1 else ''}"
                f"{' transpose-copies=true' if self.transpose_copies else ''}}}"
            )
        if self.vector_width > 1:
            passes.append(f"poly-vectorize{{width={self.vector_width}}}")
        mma = [*(["warpgroup=true"] if self.warpgroup_mma else []), *([] if self.allow_tf32 else ["allow-tf32=false"])]
        passes.append(f"poly-map-to-mma{{{' '.join(mma)}}}" if mma else "poly-map-to-mma")
        passes += ["poly-separate-full-tiles", "convert-poly-to-gpu"]
        if self.copy_vector_width > 1 and self.use_shared_memory:
            passes.append(f"gpu-vectorize-copies{{max-width={self.copy_vector_width}}}")
        if self.num_stages == 2:
            passes.append("gpu-prefetch-copies")
        elif self.num_stages >= 3:
            buffers = f" buffers={self.num_stages - 1}" if self.async_copies and self.num_stages > 3 else ""
            passes.append(
                f"gpu-prefetch-copies{{double-buffer=true max-shared-bytes={self.max_shared_memory}"
                f"{' async-copies=true' if self.async_copies else ''}{buffers}}}"
            )
        passes += ["scf-for-loop-specialization", "gpu-check-indices", "gpu-simplify-index", "gpu-hoist-loads"]
        return passes

    def __str__(self) -> str:
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.init and getattr(self, f.name) != getattr(DEFAULT, f.name)
        ]
        return f"MappingOptions({', '.join(changed)})"


DEFAULT = MappingOptions()
TF32_DEFAULT = MappingOptions(allow_tf32=True)
"""What asks for the default mapping with TF32 allowed (`resolved_options`)."""


def specialize_pass(sizes: dict[str, int]) -> str:
    """`tc-specialize` to these sizes."""
    text = ",".join(f"{name}={value}" for name, value in sizes.items())
    return f'tc-specialize{{sizes="{text}"}}'
