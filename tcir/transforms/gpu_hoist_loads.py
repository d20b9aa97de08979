"""`gpu-hoist-loads`: issue a straight run of code's global loads first.

In every `gpu.func`, each block is cut into runs of ops by the ops that hold
regions (loops, guards), barriers and the `nvgpu` dialect's ops. Within a
run that has math nvcc may compile to a branch (a float division, a
`math` function, a call), each `memref.load` or `vector.load`
of a global memref that the kernel only reads moves, with the
side-effect-free ops that compute its subscripts, before the rest of the
run, the loads in their order:

    %x0 = memref.load %X[%i]            %x0 = memref.load %X[%i]
    %y0 = <math of %x0>                 %j = arith.addi %i, %c32
    memref.store %y0, %private[%c0]     %x1 = memref.load %X[%j]
    %j = arith.addi %i, %c32      ->    %y0 = <math of %x0>
    %x1 = memref.load %X[%j]            memref.store %y0, %private[%c0]
    %y1 = <math of %x1>                 %y1 = <math of %x1>

so that every load of a thread's points is in flight before the first
point's math, where a branch (a precise division's slow path) would
otherwise keep nvcc from issuing the later loads early. Runs of plain
arithmetic are left to nvcc's own scheduling (the defaults guide,
"Elementwise layers", has both measured). A load whose
subscripts need anything else in its run (a shared or private load, a
checked index) stays where it is. The loads read memory that nothing in
the kernel writes, and the ops they cross stay in their blocks, so every
value is what it was. Loads never cross a region: a value loaded before a
loop would hold a register through it. The pass has no options.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from tcir.backends.cuda.scalar_types import memory_space
from tcir.dialects.nvgpu import NVGPU
from tcir.ir.integer_forms import LAUNCH_IDS

Load = memref.LoadOp | vector.LoadOp


def _fence(op: Operation) -> bool:
    """Whether loads may not cross `op`."""
    return bool(op.regions) or isinstance(op, gpu.BarrierOp) or op.dialect_name() == NVGPU.name


def _slice(load: Operation, run: dict[int, int], moved: set[int], sources: set[SSAValue]) -> list[Operation] | None:
    """`load` and the ops of its run (`run`: id -> position) that compute its
    operands and are not `moved` yet, or None if one of them may not move."""
    found: dict[int, Operation] = {}
    stack = [load]
    while stack:
        op = stack.pop()
        if id(op) in found or id(op) in moved:
            continue
        if op is not load and not (is_side_effect_free(op) or isinstance(op, LAUNCH_IDS) or _hoistable(op, sources)):
            return None
        found[id(op)] = op
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and id(owner) in run:
                stack.append(owner)
    return sorted(found.values(), key=lambda o: run[id(o)])


def _hoistable(op: Operation, sources: set[SSAValue]) -> bool:
    """Whether `op` loads from one of `sources`."""
    return isinstance(op, Load) and op.operands[0] in sources


def _branches(op: Operation) -> bool:
    """Whether nvcc may compile `op` to code with a branch (a slow path, a
    call): a float division, a math function."""
    return isinstance(op, arith.DivfOp | func.CallOp) or op.dialect_name() == "math"


def _hoist_run(run: list[Operation], sources: set[SSAValue]) -> None:
    """Reorder `run` (consecutive ops of one block, no fence among them but
    perhaps the last), if it has math that may branch: its hoistable loads
    and their slices first."""
    if not any(_branches(op) for op in run):
        return
    positions = {id(op): k for k, op in enumerate(run)}
    first: list[Operation] = []
    moved: set[int] = set()
    for op in run:
        if _hoistable(op, sources) and id(op) not in moved:
            ops = _slice(op, positions, moved, sources)
            if ops is not None:
                first += ops
                moved.update(id(o) for o in ops)
    order = first + [op for op in run if id(op) not in moved]
    if [id(o) for o in order] == [id(o) for o in run]:
        return
    block = run[0].parent_block()
    assert block is not None
    anchor = run[-1].next_op
    for op in run:
        op.detach()
    for op in order:
        if anchor is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, anchor)


def _hoist_block(block: Block, sources: set[SSAValue]) -> None:
    run: list[Operation] = []
    for op in list(block.ops):
        if _fence(op):
            if run:
                _hoist_run(run, sources)
            run = []
            for region in op.regions:
                for inner in region.blocks:
                    _hoist_block(inner, sources)
        else:
            run.append(op)
    if run:
        _hoist_run(run, sources)


@dataclass(frozen=True)
class GpuHoistLoadsPass(ModulePass):
    """Move each run's loads of read-only global memory before its other ops."""

    name = "gpu-hoist-loads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, gpu.FuncOp)]:
            sources = {
                arg
                for arg in kernel.body.block.args
                if isinstance(arg.type, MemRefType) and memory_space(arg.type) == 0
                and all(isinstance(use.operation, Load) and use.index == 0 for use in arg.uses)
            }
            if sources:
                _hoist_block(kernel.body.block, sources)
