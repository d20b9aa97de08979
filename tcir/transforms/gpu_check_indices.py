"""`gpu-check-indices`: guard every subscript that a kernel computes from data.

In every `gpu.func`, a `memref.load` whose subscript depends on a value the
kernel loaded (an indirect access, `LUT1(I1(i, k), j)`)

    %v = memref.load %I1[%i, %k] : memref<128x30xi32>
    %s = arith.index_cast %v : i32 to index
    %x = memref.load %LUT1[%s, %j] : memref<50x64xf32>

gets its subscript through a `check.index` of that dimension's extent:

    %c = check.index %s, %v {id = 0 : i64, extent = 50 : i64, dim = 0 : i64,
                             tensor = "LUT1", source = "I1"} : i32
    %x = memref.load %LUT1[%c, %j] : memref<50x64xf32>

so that an out-of-range value in an index tensor is reported (naming the
indexed array, the dimension, the index tensor and its value) instead of
reading out of bounds. `%v` is the first loaded value the subscript depends
on; `source` is the kernel argument it came from, through a shared or
private copy if the index tensor was promoted. A scatter's update
(`gE(I(b), d) += ...`: a `memref.store` or `memref.atomic_rmw` at a
subscript computed from data) is checked the same way: out of range, it
updates element 0 and the error is reported. Checks are numbered across
the module (`id`). The pass has no options: it changes nothing in a kernel
without indirect accesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import gpu, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.check import IndexOp


def _loaded_sources(kernel: gpu.FuncOp) -> dict[SSAValue, memref.LoadOp]:
    """Each value of `kernel` that depends on loaded data -> the first load it depends on."""
    found: dict[SSAValue, memref.LoadOp] = {}
    for op in kernel.walk():
        if isinstance(op, memref.LoadOp):
            found[op.res] = op
            continue
        source = next((found[v] for v in op.operands if v in found), None)
        if source is None:
            continue
        for result in op.results:
            found[result] = source
        if isinstance(op, scf.ForOp):  # loop-carried values start from the inits
            for arg, init in zip(op.body.block.args[1:], op.iter_args):
                if init in found:
                    found[arg] = found[init]
    return found


def _stored_from(buffer: SSAValue) -> SSAValue | None:
    """The global memref whose loads are stored into the local array `buffer`."""
    for use in buffer.uses:
        store = use.operation
        if isinstance(store, memref.StoreOp) and store.memref is buffer:
            value = store.value.owner
            if isinstance(value, memref.LoadOp) and isinstance(value.memref, BlockArgument):
                return value.memref
    return None


def _name(buffer: SSAValue) -> str:
    return buffer.name_hint or "?"


@dataclass(frozen=True)
class GpuCheckIndices(ModulePass):
    """Guard data-dependent subscripts of kernel loads with `check.index`."""

    name = "gpu-check-indices"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        count = 0
        for kernel in [k for k in op.walk() if isinstance(k, gpu.FuncOp)]:
            sources = _loaded_sources(kernel)
            accesses = (memref.LoadOp, memref.StoreOp, memref.AtomicRMWOp)
            for access in [a for a in kernel.walk() if isinstance(a, accesses)]:
                buffer = access.memref
                t = buffer.type
                assert isinstance(t, MemRefType)
                first = len(access.operands) - len(access.indices)  # operands before the subscripts
                for dim, index in enumerate(access.indices):
                    load = sources.get(index)
                    if load is None:
                        continue
                    extent = t.get_shape()[dim]
                    if extent < 0:
                        continue  # a dynamic extent: not produced for kernels (sizes are specialized)
                    origin = load.memref if isinstance(load.memref, BlockArgument) else _stored_from(load.memref)
                    check = IndexOp(
                        index, load.res, count, extent, dim, _name(buffer), _name(origin or load.memref)
                    )
                    Rewriter.insert_op(check, InsertPoint.before(access))
                    access.operands[first + dim] = check.result
                    count += 1

