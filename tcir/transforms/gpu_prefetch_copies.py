"""`gpu-prefetch-copies{max-values=32 double-buffer=false max-shared-bytes=49152 async-copies=false buffers=2}`:
load the next shared-memory tile into registers while the current one is
used (software pipelining, one stage; with `double-buffer`, two).

In every `gpu.func`, an `scf.for` whose body starts with a barrier, a copy
region and a second barrier (what `poly-promote` and `convert-poly-to-gpu`
make of a shared tile inside a sequential loop, the k loop of a matmul)

    scf.for %k { barrier; shared[..] = global[.. %k ..]; barrier; compute }

becomes

    prefetch = global[.. lb ..]                       (if lb < ub)
    scf.for %k {
      barrier; shared[..] = prefetch; barrier
      prefetch = global[.. %k + step ..]              (if %k + step < ub)
      compute
    }

so the global loads of the next step are in flight during the math of
this one. `prefetch` is a private array (registers: the copy loops are
unrolled, so every index is a constant) of at most `max-values` elements
a thread. The copy region may hold index arithmetic, copy loops of
constant trip counts (or cut by a ragged edge, `ub = min(edge, lb + C)`:
staged for their C iterations, each under a guard of the bound), and
guards (`scf.if` without else), around loads of
a global memref that the kernel never writes and stores of those values to
shared memory; a loop whose copies are anything else is left as it is.

With `double-buffer`, each shared tile that the copies fill and only the
loop uses gets a leading dimension of 2 (while the kernel's shared memory
stays within `max-shared-bytes`; the same tile's loops in the other
versions of a kernel split by `poly-separate-full-tiles`, in other
branches of an `scf.if`, then use the same buffers), and the loop becomes

    prefetch = global[.. lb ..]; shared[0][..] = prefetch     (if lb < ub)
    prefetch = global[.. lb + step ..]                 (if lb + step < ub)
    barrier
    scf.for %k {                                    (s = (%k - lb) / step)
      shared[1 - s % 2][..] = prefetch                (if %k + step < ub)
      prefetch = global[.. %k + 2 * step ..]      (if %k + 2 * step < ub)
      compute on shared[s % 2]
      barrier
    }

one barrier a step, and the global loads of a tile have a whole step to
land before they are stored: a thread writes the buffer that step k + 1
reads only after the barrier of step k - 1, which every read of it in
step k - 1 precedes.

With `async-copies` as well, where every copy moves 4, 8 or 16 bytes (a
float, float2, float4; 16 where a `wgmma` reads the tiles), the copies go
straight to the second buffer by `nvgpu.device_async_copy` (`cp.async` on
sm_80 and later), without registers (`max-values` does not apply):

    barrier
    async_copy global[.. lb ..] -> shared[0][..]; create_group   (if lb < ub)
    scf.for %k {
      wait(0); barrier
      async_copy global[.. %k + step ..] -> shared[1 - s % 2][..]
                                                 (if %k + step < ub)
      create_group
      compute on shared[s % 2]
    }

one barrier a step: the wait makes a thread's copies of this step's tile
complete, the barrier everyone's; the next tile goes to the buffer that
the previous step read, which every thread finished before the barrier.
The barrier before the first copies waits for the reads of the loop's
last steps where an enclosing loop runs it again. With `buffers` B above 2
(as many as fit in `max-shared-bytes`), the copies run B - 1 steps ahead,
more of them in flight while a step computes (what a loop bound by the
latency of global memory needs):

    barrier
    for j in 0 .. B - 2: async_copy global[.. lb + j * step ..] -> shared[j][..]
                         (if lb + j * step < ub); create_group
    scf.for %k {
      wait(B - 2); barrier
      async_copy global[.. %k + (B - 1) * step ..] -> shared[(s + B - 1) % B][..]
                                                 (if %k + (B - 1) * step < ub)
      create_group
      compute on shared[s % B]
    }

a group a step, empty or not, so that waiting for all but the last B - 2
groups completes this step's.

A loop whose steps end in a warpgroup's `nvgpu.warpgroup.mma`s of half
operands (all in its own body) with B of 3 or more lets them run on into
the next step (`waitGroup = 1`: each waits only for the group before it),
so the tensor cores work through the barrier and the next step's copies. The
copies then run B - 2 steps ahead, to the buffer that the step before the
running one read; stores of constants to private memory at the first step
(`scf.if (iv == lb)`: the accumulators' initial values) move before the
loop; and what reads the accumulators after them in a step (the last
step's epilogue) or after the loop first waits for every group
(`nvgpu.warpgroup.mma.wait`):

    acc = 0
    scf.for %k {
      wait(B - 3); barrier
      async_copy global[.. %k + (B - 2) * step ..] -> shared[(s + B - 2) % B][..]
      create_group
      acc = warpgroup.mma(shared[s % B], acc) {waitGroup = 1}
      scf.if (last step) { warpgroup.mma.wait(0); epilogue(acc) }
    }
    warpgroup.mma.wait(0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, VectorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.traits import is_side_effect_free

from tcir.backends.cuda.scalar_types import written_memrefs
from tcir.backends.cuda.shared_memory import buffer_bytes, shared_buffers
from tcir.dialects.nvgpu import (
    COPY_BYTES,
    DeviceAsyncCopyOp,
    DeviceAsyncCreateGroupOp,
    DeviceAsyncWaitOp,
    WarpgroupGenerateDescriptorOp,
    WarpgroupMmaOp,
    WarpgroupMmaWaitOp,
)
from tcir.errors import TCError
from tcir.polyhedral.promotion.promote import PRIVATE_SPACE, SHARED_SPACE
from tcir.ir.integer_forms import constant_of, max_trip_count, trip_count


MAX_BUFFERS = 4
"""Buffers a tile may have with `async-copies`."""


def _space(value: SSAValue) -> int:
    space = value.type.memory_space if isinstance(value.type, MemRefType) else None
    return space.value.data if isinstance(space, IntegerAttr) else 0


Load = memref.LoadOp | vector.LoadOp
Store = memref.StoreOp | vector.StoreOp
"""The copies' accesses: scalar, or vectors of `gpu-vectorize-copies`."""


def _target(op: Load | Store) -> SSAValue:
    """The memref an access reads or writes."""
    return op.memref if isinstance(op, memref.LoadOp | memref.StoreOp) else op.base


def _loaded(op: Load) -> SSAValue:
    return op.res if isinstance(op, memref.LoadOp) else op.result


def _stored(op: Store) -> SSAValue:
    return op.value if isinstance(op, memref.StoreOp) else op.vector


def _lanes(t: Attribute) -> int:
    """The registers a value of type `t` takes (a vector's lanes)."""
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


class _NotACopy(Exception):
    """The region between the barriers is not one this pass can stage."""


@dataclass
class _Copies:
    """The copy region of one loop: its ops, and its global loads in the
    order of the unrolled copies (a load in a loop of 4 iterations counts 4 times)."""

    ops: list[Operation]
    loads: list[Load]

    @property
    def types(self) -> dict[Attribute, int]:
        """The types of the loaded values, and how many of each."""
        counts: dict[Attribute, int] = {}
        for load in self.loads:
            t = _loaded(load).type
            counts[t] = counts.get(t, 0) + 1
        return counts

    @property
    def values(self) -> int:
        """The registers the loaded values take."""
        return sum(_lanes(_loaded(load).type) for load in self.loads)

    @staticmethod
    def of(ops: Sequence[Operation], written: set[SSAValue]) -> _Copies:
        loads: list[Load] = []

        def visit(block_ops: Sequence[Operation], repeat: int) -> None:
            for op in block_ops:
                if isinstance(op, scf.ForOp):
                    trips = max_trip_count(op)
                    if trips is None or op.iter_args:
                        raise _NotACopy
                    visit(list(op.body.block.ops)[:-1], repeat * trips)
                elif isinstance(op, scf.IfOp):
                    if op.results or op.false_region.blocks and list(op.false_region.block.ops)[:-1]:
                        raise _NotACopy
                    visit(list(op.true_region.block.ops)[:-1], repeat)
                elif isinstance(op, Load):
                    users = [use.operation for use in _loaded(op).uses]
                    if _space(_target(op)) != 0 or _target(op) in written or not users or not all(
                        isinstance(u, Store) and _stored(u) == _loaded(op) and _space(_target(u)) == SHARED_SPACE
                        for u in users
                    ):
                        raise _NotACopy
                    loads.extend([op] * repeat)
                elif isinstance(op, Store):
                    if _space(_target(op)) != SHARED_SPACE or not isinstance(_stored(op).owner, Load):
                        raise _NotACopy
                elif not isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp
                                    | arith.CmpiOp | arith.AndIOp | arith.OrIOp | arith.FloorDivSIOp
                                    | arith.CeilDivSIOp | arith.RemSIOp | arith.DivSIOp | arith.MinSIOp
                                    | arith.MaxSIOp | arith.SelectOp | arith.IndexCastOp):
                    raise _NotACopy

        visit(ops, 1)
        if not loads:
            raise _NotACopy
        return _Copies(list(ops), loads)

    def emit(
        self,
        builder: Builder,
        mapping: dict[SSAValue, SSAValue],
        buffers: dict[Attribute, SSAValue],
        stage: bool,
        stores: list[Operation] | None = None,
    ) -> None:
        """The copy region at `builder`, values renamed by `mapping`, loops
        unrolled: with `stage`, each global load goes to the next element of
        the buffer of its type in `buffers`; otherwise each shared store takes
        its value from there, or, without `buffers`, each load and store
        become one `nvgpu.device_async_copy` (the stores, or copies, are
        added to `stores`, if given)."""
        slots = {t: iter(range(n)) for t, n in self.types.items()}
        sources: dict[SSAValue, Load] = {}

        def index(at: Builder, k: int) -> SSAValue:
            return at.insert(arith.ConstantOp.from_int_and_width(k, IndexType())).result

        def emit_ops(at: Builder, ops: Sequence[Operation]) -> None:
            for op in ops:
                if isinstance(op, scf.ForOp):
                    step = constant_of(op.step)
                    assert step is not None
                    lb = mapping.get(op.lb, op.lb)
                    ragged = trip_count(op) is None  # cut by an edge: each iteration guarded
                    for k in range(max_trip_count(op) or 0):
                        offset = at.insert(arith.AddiOp(lb, index(at, k * step))).result if k else lb
                        mapping[op.body.block.args[0]] = offset
                        inside = _guarded(at, offset, mapping.get(op.ub, op.ub)) if ragged else at
                        emit_ops(inside, list(op.body.block.ops)[:-1])
                elif isinstance(op, scf.IfOp):
                    guard = at.insert(scf.IfOp(mapping.get(op.cond, op.cond), [], [scf.YieldOp()]))
                    emit_ops(Builder(InsertPoint.at_start(guard.true_region.block)), list(op.true_region.block.ops)[:-1])
                elif isinstance(op, Load) and not buffers:
                    sources[_loaded(op)] = op
                elif isinstance(op, Store) and not buffers:
                    load = sources[_stored(op)]
                    copy = at.insert(DeviceAsyncCopyOp(
                        _target(load), [mapping.get(i, i) for i in load.indices],
                        _target(op), [mapping.get(i, i) for i in op.indices], _lanes(_stored(op).type),
                    ))  # fmt: skip
                    if stores is not None:
                        stores.append(copy)
                elif isinstance(op, Load):
                    t = _loaded(op).type
                    k = index(at, next(slots[t]))
                    if stage:
                        at.insert(memref.StoreOp.get(_loaded(at.insert(op.clone(mapping))), buffers[t], [k]))
                    else:
                        mapping[_loaded(op)] = at.insert(memref.LoadOp.get(buffers[t], [k])).res
                elif not (isinstance(op, Store) and stage):
                    clone = at.insert(op.clone(mapping))  # index arithmetic, or a store to shared memory
                    if stores is not None and isinstance(clone, Store):
                        stores.append(clone)

        emit_ops(builder, self.ops)


def _prefetch(loop: scf.ForOp, kernel: gpu.FuncOp, buffer_at: Callable[[Attribute, int], SSAValue],
              written: set[SSAValue], max_values: int, shared_budget: int | None, asynchronous: bool,
              buffers: int, buffered: dict[int, int]) -> bool:
    """Pipeline `loop`'s copies if it has the shape of the module docstring;
    with a `shared_budget` (bytes), double-buffer its shared tiles where they
    fit, `asynchronous`ly where every copy moves 4, 8 or 16 bytes (then in
    `buffers` buffers, where they fit). `buffered` maps the shared tiles
    that an earlier loop gave buffers (by `id`) to their count."""
    body = list(loop.body.block.ops)
    barriers = [k for k, op in enumerate(body) if isinstance(op, gpu.BarrierOp)]
    trips = trip_count(loop)
    if loop.iter_args or len(barriers) < 2 or barriers[0] != 0 or trips == 0:
        return False
    region = body[1 : barriers[1]]
    inside = {id(o) for o in region for o in o.walk()}
    for op in region:
        for inner in op.walk():
            if any(id(use.operation) not in inside for r in inner.results for use in r.uses):
                return False  # a value of the copies used after them
            for operand in inner.operands:
                owner = operand.owner
                defined = owner.parent_op() if isinstance(owner, Block) else owner
                if defined is not None and id(defined) not in inside and loop.is_ancestor(defined) \
                        and operand is not loop.body.block.args[0]:
                    return False  # a value of the loop body outside the copies
    try:
        copies = _Copies.of(region, written)
    except _NotACopy:
        return False
    if shared_budget is not None and asynchronous and all(_bytes(t) in _async_sizes(loop) for t in copies.types):
        for count in range(buffers, 1, -1):  # as many as fit
            tiles = _double_buffered_tiles(loop, kernel, region, shared_budget, count, buffered)
            if tiles is not None:
                _async_double_buffer(loop, copies, tiles, [body[0], body[barriers[1]]], trips, count, buffered)
                return True
    tiles = None if shared_budget is None else _double_buffered_tiles(loop, kernel, region, shared_budget, 2, buffered)
    if copies.values > max_values:
        return False
    registers = {t: buffer_at(t, n) for t, n in copies.types.items()}
    iv = loop.body.block.args[0]
    # Before the loop: the first step's tile, if there is a first step.
    before = Builder(InsertPoint.before(loop))
    if trips is None:
        before = _guarded(before, loop.lb, loop.ub)
    copies.emit(before, {iv: loop.lb}, registers, stage=True)
    if tiles is not None:
        _double_buffer(loop, copies, registers, tiles, before, [body[0], body[barriers[1]]], trips, buffered)
        return True
    # Between the barriers: the staged values to shared memory.
    copies.emit(Builder(InsertPoint.before(body[barriers[1]])), {}, registers, stage=False)
    for op in reversed(region):
        op.detach()
        op.erase(safe_erase=False)
    # After the second barrier: the next step's tile.
    after = Builder(InsertPoint.after(body[barriers[1]]))
    following = after.insert(arith.AddiOp(iv, loop.step)).result
    copies.emit(_guarded(after, following, loop.ub), {iv: following}, registers, stage=True)
    return True


def _async_sizes(loop: scf.ForOp) -> tuple[int, ...]:
    """The bytes a `cp.async` of `loop` may move: 16 only where a `wgmma`
    reads the tiles (copies of 8 bytes into a swizzled tile that wgmma read
    gave wrong sums on an H200, where copies of 16 bytes and ordinary
    stores of 8 did not: found by the options fuzz), else any of
    `COPY_BYTES`. Ordinary stores of 4 bytes into an 8-column B tile were
    found wrong too, so the cause is not known to be the copy instruction
    (docs/guide/mapping.md, "Known wrong mappings")."""
    return (16,) if any(isinstance(op, WarpgroupMmaOp) for op in loop.walk()) else COPY_BYTES


def _guarded(at: Builder, value: SSAValue, bound: SSAValue) -> Builder:
    """A builder inside `if (value < bound)`, inserted at `at`."""
    condition = at.insert(arith.CmpiOp(value, bound, "slt")).result
    guard = at.insert(scf.IfOp(condition, [], [scf.YieldOp()]))
    return Builder(InsertPoint.at_start(guard.true_region.block))


def _double_buffer(loop: scf.ForOp, copies: _Copies, buffers: dict[Attribute, SSAValue], tiles: Sequence[memref.AllocaOp],
                   before: Builder, barriers: Sequence[Operation], trips: int | None, buffered: dict[int, int]) -> None:
    """The loop of the module docstring's `double-buffer`, once `before`
    holds the first step's loads into `buffers` (one a type; `trips`: the loop's trip
    count, if known)."""
    iv, step = loop.body.block.args[0], loop.step
    first: list[Store] = []
    copies.emit(before, {iv: loop.lb}, buffers, stage=False, stores=first)
    if trips is None or trips > 1:
        second = before.insert(arith.AddiOp(loop.lb, step)).result
        copies.emit(before if trips else _guarded(before, second, loop.ub), {iv: second}, buffers, stage=True)
    Builder(InsertPoint.before(loop)).insert(gpu.BarrierOp())
    body = list(loop.body.block.ops)
    for op in reversed(body[body.index(barriers[0]) : body.index(barriers[1]) + 1]):
        op.detach()
        op.erase(safe_erase=False)
    top = Builder(InsertPoint.at_start(loop.body.block))
    following = top.insert(arith.AddiOp(iv, step)).result
    stores: list[Store] = []
    copies.emit(_guarded(top, following, loop.ub), {iv: following}, buffers, stage=False, stores=stores)
    later = top.insert(arith.AddiOp(following, step)).result
    copies.emit(_guarded(top, later, loop.ub), {iv: later}, buffers, stage=True)
    Builder(InsertPoint.before(loop.body.block.last_op)).insert(gpu.BarrierOp())
    _index_buffers(loop, tiles, [first], stores, buffered)


def _async_double_buffer(loop: scf.ForOp, copies: _Copies, tiles: Sequence[memref.AllocaOp],
                         barriers: Sequence[Operation], trips: int | None, buffers: int,
                         buffered: dict[int, int]) -> None:
    """The loop of the module docstring's `async-copies`, with `buffers` buffers a tile
    (its `wgmma`s left running into the next step where there are 3 or more)."""
    iv, step = loop.body.block.args[0], loop.step
    running = _running_wgmmas(loop) if buffers >= 3 and trips else []
    if running:
        _hoist_first_step_stores(loop, running[0])
    ahead_steps = buffers - 1 - bool(running)
    before = Builder(InsertPoint.before(loop))
    before.insert(gpu.BarrierOp())  # an enclosing loop's last step may still read the buffers
    first: list[list[Operation]] = []
    for k in range(ahead_steps):  # the first steps' tiles, one group each (empty past the last step)
        first.append([])
        if trips is None or k < trips:
            start = before.insert(arith.AddiOp(loop.lb, _scaled(before, step, k))).result if k else loop.lb
            at = before if trips is not None else _guarded(before, start, loop.ub)
            copies.emit(at, {iv: start}, {}, stage=False, stores=first[-1])
        before.insert(DeviceAsyncCreateGroupOp())
    body = list(loop.body.block.ops)
    for op in reversed(body[body.index(barriers[0]) + 1 : body.index(barriers[1]) + 1]):
        op.detach()
        op.erase(safe_erase=False)
    Builder(InsertPoint.before(barriers[0])).insert(DeviceAsyncWaitOp(ahead_steps - 1))
    after = Builder(InsertPoint.after(barriers[0]))
    ahead = after.insert(arith.AddiOp(iv, _scaled(after, step, ahead_steps))).result
    stores: list[Operation] = []
    copies.emit(_guarded(after, ahead, loop.ub), {iv: ahead}, {}, stage=False, stores=stores)
    after.insert(DeviceAsyncCreateGroupOp())
    _index_buffers(loop, tiles, first, stores, buffered, buffers)
    for mma in running:
        mma.properties["waitGroup"] = IntegerAttr(1, 64)
    if running:
        _wait_before_reads(loop, running)
        Builder(InsertPoint.after(loop)).insert(WarpgroupMmaWaitOp(0))


def _hoist_first_step_stores(loop: scf.ForOp, first_mma: Operation) -> None:
    """Move the `scf.if (iv == lb)` blocks before `first_mma` in `loop`'s
    body that only store constants to private memory (the accumulators'
    initial values) before the loop, which runs its first step: inside, a
    running `wgmma` of the step before would wait for them (ptxas waits
    before any other access of its registers)."""
    iv, lb = loop.body.block.args[0], constant_of(loop.lb)
    body = list(loop.body.block.ops)
    for op in body[: body.index(first_mma)]:
        if not isinstance(op, scf.IfOp) or lb is None:
            continue
        if any(not isinstance(o, scf.YieldOp) for block in op.false_region.blocks for o in block.ops):
            continue
        test = op.cond.owner
        if not isinstance(test, arith.CmpiOp) or test.predicate.value.data != 0:  # eq
            continue
        sides = [test.lhs, test.rhs]
        if iv not in sides or constant_of(sides[1 - sides.index(iv)]) != lb:
            continue
        inner = [o for o in op.true_region.block.ops if not isinstance(o, scf.YieldOp)]
        # Loops over the accumulators, with their index arithmetic, count
        # as their stores (a large register tile's, `thread_loops`).
        nested = {w for o in inner for w in o.walk()}
        stores = all(
            isinstance(w, scf.ForOp | scf.YieldOp)
            or is_side_effect_free(w)
            or (isinstance(w, memref.StoreOp) and _space(w.memref) == PRIVATE_SPACE)
            for w in nested
        )
        outside = all(
            v.owner in nested
            or (isinstance(v.owner, Operation) and not loop.is_ancestor(v.owner))
            or (isinstance(v.owner, Block) and v.owner.parent_op() in nested)
            for w in nested
            for v in w.operands
        )
        if not stores or not outside:
            continue
        for o in inner:
            o.detach()
            Builder(InsertPoint.before(loop)).insert(o)
        op.detach()
        op.erase()


def _wait_before_reads(loop: scf.ForOp, running: Sequence[WarpgroupMmaOp]) -> None:
    """Wait for the running `wgmma`s before what reads their accumulators
    after them in a step but the next `wgmma`s (the last step's epilogue,
    inside its `scf.if`): at the start of each region that reads them, or
    before the op."""
    results = {r for op in running for r in op.res}
    accumulators = {use.operation.memref for r in results for use in r.uses if isinstance(use.operation, memref.StoreOp)}
    body = list(loop.body.block.ops)
    for op in body[body.index(running[-1]) + 1 :]:
        if isinstance(op, memref.StoreOp) and op.value in results:
            continue  # the results kept for the next step's wgmma
        reads = [o for o in op.walk() if isinstance(o, memref.LoadOp) and o.memref in accumulators]
        if not reads and not any(operand in results for inner in op.walk() for operand in inner.operands):
            continue
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                if region.blocks and any(region.is_ancestor(read) for read in reads):
                    Builder(InsertPoint.at_start(region.block)).insert(WarpgroupMmaWaitOp(0))
        else:
            Builder(InsertPoint.before(op)).insert(WarpgroupMmaWaitOp(0))
            return


def _running_wgmmas(loop: scf.ForOp) -> list[WarpgroupMmaOp]:
    """The `wgmma`s of `loop` that may run on into its next step: all of
    them, where each is in the loop's own body (one group or more every
    step), none is nested deeper, none has a `waitGroup` already and all
    take half operands (TF32 ones complete in their step: running on was
    measured for the half types only)."""
    own = [op for op in loop.body.block.ops if isinstance(op, WarpgroupMmaOp)]
    nested = [op for op in loop.walk() if isinstance(op, WarpgroupMmaOp)]
    if not own or len(own) != len(nested) or any(op.pending or op.operand_type is None for op in own):
        return []
    return own


def _scaled(at: Builder, step: SSAValue, k: int) -> SSAValue:
    """`k * step`."""
    if k == 1:
        return step
    factor = at.insert(arith.ConstantOp.from_int_and_width(k, step.type)).result
    return at.insert(arith.MuliOp(step, factor)).result


def _bytes(t: Attribute) -> int:
    """The bytes of a value of type `t` (a scalar, or a vector of them)."""
    element = t.element_type if isinstance(t, VectorType) else t
    return _lanes(t) * getattr(element, "bitwidth", 0) // 8


def _double_buffered_tiles(loop: scf.ForOp, kernel: gpu.FuncOp, region: Sequence[Operation],
                           budget: int, buffers: int, buffered: dict[int, int]) -> list[memref.AllocaOp] | None:
    """The shared buffers that `loop`'s copies fill, if every access to them
    is a load or store inside `loop` (or in the same tile's loop of another
    version of the kernel) and `kernel`'s shared memory stays within
    `budget` bytes with `buffers` of each of them. A tile that the other
    version's loop gave buffers already (in `buffered`) is taken as it is,
    if it has `buffers` of them."""
    tiles: dict[int, memref.AllocaOp] = {}
    for op in region:
        for store in op.walk():
            if isinstance(store, Store):
                alloca = _target(store).owner
                if not isinstance(alloca, memref.AllocaOp):
                    return None
                tiles[id(alloca)] = alloca
    for alloca in tiles.values():
        for use in alloca.memref.uses:
            user = use.operation
            if isinstance(user, WarpgroupGenerateDescriptorOp) and loop.is_ancestor(user):
                continue  # the tensor cores read the tile
            if id(alloca) in buffered and _in_other_branch(user, loop):
                continue  # the other version's accesses, the first steps' copies among them
            if not isinstance(user, memref.LoadOp | Store) or _target(user) is not alloca.memref \
                    or not (loop.is_ancestor(user) or _in_other_loop(user, loop)):
                return None
    if any(buffered.get(key, buffers) != buffers for key in tiles):
        return None
    added = [alloca for key, alloca in tiles.items() if key not in buffered]
    if sum(map(buffer_bytes, shared_buffers(kernel))) + (buffers - 1) * sum(map(buffer_bytes, added)) > budget:
        return None
    return list(tiles.values())


def _in_other_loop(op: Operation, loop: scf.ForOp) -> bool:
    """Whether `op` is in an `scf.for` that neither contains nor is inside
    `loop` (the same tile's loop in the other version of a kernel split by
    `poly-separate-full-tiles`): it keeps the first buffer."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.FuncOp):
        if isinstance(parent, scf.ForOp) and not parent.is_ancestor(loop):
            return True
        parent = parent.parent_op()
    return False


def _in_other_branch(op: Operation, loop: scf.ForOp) -> bool:
    """Whether `op` and `loop` are in different regions of one `scf.if`
    (the two versions of a kernel split by `poly-separate-full-tiles`)."""
    child: Operation = loop
    parent = loop.parent_op()
    while parent is not None and not isinstance(parent, gpu.FuncOp):
        if isinstance(parent, scf.IfOp) and parent.is_ancestor(op):
            other: Operation = op
            while other.parent_op() is not parent:
                other = other.parent_op()
            return other.parent_region() is not child.parent_region()
        child, parent = parent, parent.parent_op()
    return False


def _index_buffers(loop: scf.ForOp, tiles: Sequence[memref.AllocaOp], first: Sequence[Sequence[Operation]],
                   following: Sequence[Operation], buffered: dict[int, int], buffers: int = 2) -> None:
    """Give each of `tiles` a leading dimension of `buffers`: the stores
    `first[k]` (before the loop: the first steps' tiles) write buffer k, the
    stores `following` buffer (step + len(first)) % buffers, and every other
    access in `loop` buffer step % buffers, where step = (iv - lb) / step size.
    A tile in `buffered` has its buffers already (from the same tile's loop
    in the other version of the kernel, whose accesses here all read buffer
    0): only the leading index of the accesses above changes. The new tiles
    go into `buffered`."""
    iv = loop.body.block.args[0]
    at = Builder(InsertPoint.at_start(loop.body.block))

    def constant(value: int) -> SSAValue:
        return at.insert(arith.ConstantOp.from_int_and_width(value, iv.type)).result

    step = at.insert(arith.SubiOp(iv, loop.lb)).result
    if constant_of(loop.step) != 1:
        step = at.insert(arith.DivSIOp(step, loop.step)).result
    current = at.insert(arith.RemSIOp(step, constant(buffers))).result
    if buffers == 2:
        other = at.insert(arith.SubiOp(constant(1), current)).result
    else:
        ahead = at.insert(arith.AddiOp(step, constant(len(first)))).result
        other = at.insert(arith.RemSIOp(ahead, constant(buffers))).result
    outside = Builder(InsertPoint.before(loop))
    which = {id(op): other for op in following}
    for k, ops in enumerate(first):
        index = outside.insert(arith.ConstantOp.from_int_and_width(k, iv.type)).result
        which |= {id(op): index for op in ops}
    for alloca in tiles:
        reused = id(alloca) in buffered
        if reused:
            doubled = alloca
        else:
            memref_type = alloca.memref.type
            assert isinstance(memref_type, MemRefType)
            doubled = memref.AllocaOp.get(
                memref_type.element_type,
                shape=[buffers, *memref_type.get_shape()],
                layout=memref_type.layout,
                memory_space=memref_type.memory_space,
                alignment=alloca.alignment,
            )
            doubled.memref.name_hint = alloca.memref.name_hint
            Builder(InsertPoint.before(alloca)).insert(doubled)
            buffered[id(doubled)] = buffers
        for use in list(alloca.memref.uses):
            user = use.operation
            if id(user) in which or loop.is_ancestor(user):
                index = which.get(id(user), current)
            elif reused:
                continue  # the other version's loop keeps its buffers
            else:  # the same tile's loop in another version of the kernel: the first buffer
                index = Builder(InsertPoint.before(user)).insert(arith.ConstantOp.from_int_and_width(0, iv.type)).result
            _with_buffer(user, doubled.memref, index, 1 if reused else 0)
        if not reused:
            alloca.detach()
            alloca.erase()


def _with_buffer(user: Operation, tile: SSAValue, index: SSAValue, drop: int) -> None:
    """Replace `user`, an access to a shared tile, by the same access to
    buffer `index` of `tile` (its subscripts less the first `drop`)."""
    if isinstance(user, memref.StoreOp):
        new: Operation = memref.StoreOp.get(user.value, tile, [index, *user.indices[drop:]])
    elif isinstance(user, vector.StoreOp):
        new = vector.StoreOp(user.vector, tile, [index, *user.indices[drop:]])
    elif isinstance(user, DeviceAsyncCopyOp):
        new = DeviceAsyncCopyOp(user.src, user.src_indices, tile, [index, *user.dst_indices[drop:]], user.elements)
    elif isinstance(user, WarpgroupGenerateDescriptorOp):
        new = WarpgroupGenerateDescriptorOp(tile, [index, *user.subscript_operands[drop:]])
        user.result.replace_all_uses_with(new.results[0])
    else:
        assert isinstance(user, memref.LoadOp)
        new = memref.LoadOp.get(tile, [index, *user.indices[drop:]])
        user.res.replace_all_uses_with(new.results[0])
    Builder(InsertPoint.before(user)).insert(new)
    user.detach()
    user.erase()


@dataclass(frozen=True)
class GpuPrefetchCopiesPass(ModulePass):
    """Stage the next step's shared-memory copies of sequential loops in registers."""

    name = "gpu-prefetch-copies"

    max_values: int = 32
    double_buffer: bool = False
    """Also give the shared tiles a second buffer (while it fits in
    `max-shared-bytes`): the copies of step k + 1 go to one while step k
    reads the other, one barrier a step."""
    max_shared_bytes: int = 49152
    async_copies: bool = False
    """With `double-buffer`, copy by `nvgpu.device_async_copy` (sm_80's
    `cp.async`) straight into the second buffer, without registers."""
    buffers: int = 2
    """With `async-copies`, the buffers of each tile (as many as fit in
    `max-shared-bytes`, at least 2): the copies run `buffers - 1` steps ahead."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_values <= 255:
            raise TCError(f"gpu-prefetch-copies: max-values must be in [1, 255], got {self.max_values}")
        if self.max_shared_bytes < 0:
            raise TCError(f"gpu-prefetch-copies: max-shared-bytes must be >= 0, got {self.max_shared_bytes}")
        if self.async_copies and not self.double_buffer:
            raise TCError("gpu-prefetch-copies: async-copies needs double-buffer=true")
        if not 2 <= self.buffers <= MAX_BUFFERS:
            raise TCError(f"gpu-prefetch-copies: buffers must be in [2, {MAX_BUFFERS}], got {self.buffers}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        budget = self.max_shared_bytes if self.double_buffer else None
        for kernel in [o for o in op.walk() if isinstance(o, gpu.FuncOp)]:
            entry = kernel.body.block
            written = written_memrefs(kernel)
            count = 0
            pipelined = False
            buffered: dict[int, int] = {}

            def buffer_at(element: Attribute, size: int) -> SSAValue:
                nonlocal count
                alloca = memref.AllocaOp.get(element, shape=[size], memory_space=IntegerAttr(PRIVATE_SPACE, 64))
                alloca.memref.name_hint = f"prefetch{count}" if count else "prefetch"
                count += 1
                Builder(InsertPoint.at_start(entry)).insert(alloca)
                return alloca.memref

            # Outer loops first; a loop inside a pipelined one keeps its own copies.
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                if loop.parent is not None:
                    pipelined |= _prefetch(
                        loop, kernel, buffer_at, written, self.max_values, budget, self.async_copies, self.buffers,
                        buffered,
                    )
            if pipelined:
                region_dce(kernel.body)  # the index arithmetic the copies no longer use
