"""What the host function of a gpu-level module does, as data for the runtime.

The host `func.func` of a module lowered for the GPU only computes launch
sizes, allocates temporaries and launches kernels:

    func.func @tmm(%A: memref<128x32xf32>, ...) {
      gpu.launch_func @kernels::@tmm_kernel blocks in (%c8, %c1, %c1)
          threads in (%c32, %c8, %c1) args(%A : memref<128x32xf32>, ...)
      func.return
    }

`extract_host_program` turns it into a `HostProgram`: the host function's
parameters, the temporaries to allocate per call, and one `KernelLaunch` per
`gpu.launch_func` in order. Grid sizes and scalar kernel arguments are
`HostValue`s: constants, host arguments (`ArgRef`) or integer expressions of
them (`HostExpr`), evaluated per call with `evaluate`. Those data types live
in `tcir.runtime.host_program` (re-exported here), which loads without xDSL.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects import arith, func, gpu, memref, vector
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from tcir.backends.cuda.scalar_types import numpy_dtype, static_shape
from tcir.backends.cuda.shared_memory import dynamic_shared_bytes
from tcir.dialects.check import IndexOp
from tcir.dialects.nvgpu import DeviceAsyncCopyOp
from tcir.errors import TCError
from tcir.runtime.host_program import (
    ArgRef,
    HostAlloc,
    HostExpr,
    HostParam,
    HostProgram,
    HostValue,
    IndexCheck,
    KernelArg,
    KernelLaunch,
    evaluate,
)

__all__ = [
    "ArgRef",
    "HostAlloc",
    "HostExpr",
    "HostParam",
    "HostProgram",
    "HostValue",
    "IndexCheck",
    "KernelArg",
    "KernelLaunch",
    "constant_block_size",
    "evaluate",
    "extract_host_program",
    "extract_launches",
    "host_functions",
    "kernel_symbol",
]

_ARITH_HOST_OPS: dict[type[Operation], str] = {
    arith.AddiOp: "addi",
    arith.SubiOp: "subi",
    arith.MuliOp: "muli",
    arith.DivSIOp: "divsi",
    arith.RemSIOp: "remsi",
    arith.FloorDivSIOp: "floordivsi",
    arith.CeilDivSIOp: "ceildivsi",
    arith.MinSIOp: "minsi",
    arith.MaxSIOp: "maxsi",
    arith.IndexCastOp: "index_cast",
}


def kernels(module: ModuleOp) -> list[gpu.FuncOp]:
    """The `gpu.func ... kernel` ops of all `gpu.module`s of `module`."""
    found = [op for op in module.walk() if isinstance(op, gpu.FuncOp) and op.kernel is not None]
    names = [k.sym_name.data for k in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TCError(f"cuda backend: kernel names must be unique, '{duplicates[0]}' is not")
    return found


def kernel_symbol(launch: gpu.LaunchFuncOp) -> str:
    """The C name of the launched kernel: its `gpu.func` symbol name."""
    ref = launch.kernel
    return (
        ref.nested_references.data[-1].data
        if ref.nested_references.data
        else ref.root_reference.data
    )


def constant_block_size(launch: gpu.LaunchFuncOp) -> tuple[int, int, int] | None:
    """The block size of a launch if all three sizes are `arith.constant`s."""
    sizes = [_constant(v) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)]
    if any(not isinstance(s, int) or isinstance(s, bool) for s in sizes):
        return None
    return (int(sizes[0]), int(sizes[1]), int(sizes[2]))  # type: ignore[arg-type]


def _constant(value: SSAValue) -> int | float | bool | None:
    op = value.owner
    if not isinstance(op, arith.ConstantOp):
        return None
    attr = op.value
    if isinstance(attr, IntegerAttr):
        data = attr.value.data
        return bool(data) if numpy_dtype(attr.type) == "bool" else data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    return None


class _HostReader:
    """Reads one host function into a `HostProgram`."""

    def __init__(self, function: func.FuncOp, shared_bytes: dict[str, int], alignments: dict[str, dict[int, int]]):
        self.function = function
        self.shared_bytes = shared_bytes
        """The dynamic shared memory of each kernel, by name."""
        self.alignments = alignments
        """The bytes each kernel's vector loads need its arguments aligned to, by name and position."""
        self.temporaries: dict[SSAValue, HostAlloc] = {}
        self.launches: list[KernelLaunch] = []

    def read(self) -> HostProgram:
        params = tuple(self._param(arg) for arg in self.function.body.block.args)
        for op in self.function.body.block.ops:
            self._op(op)
        return HostProgram(
            self.function.sym_name.data,
            params,
            tuple(self.temporaries.values()),
            tuple(self.launches),
        )

    def _param(self, arg: BlockArgument) -> HostParam:
        name = arg.name_hint or f"arg{arg.index}"
        t: Attribute = arg.type
        if isinstance(t, MemRefType):
            return HostParam(name, numpy_dtype(t.element_type), static_shape(t))
        return HostParam(name, numpy_dtype(t), None)

    def _op(self, op: Operation) -> None:
        if isinstance(op, gpu.LaunchFuncOp):
            self.launches.append(self._launch(op))
        elif isinstance(op, memref.AllocOp):
            t = op.memref.type
            alloc = HostAlloc(len(self.temporaries), static_shape(t), numpy_dtype(t.element_type))
            self.temporaries[op.memref] = alloc
        elif not isinstance(
            op, (arith.ConstantOp, memref.DeallocOp, memref.CollapseShapeOp, func.ReturnOp, *_ARITH_HOST_OPS)
        ):
            raise TCError(f"cuda backend: op '{op.name}' in host function is not supported")

    def _launch(self, op: gpu.LaunchFuncOp) -> KernelLaunch:
        if op.asyncDependencies or op.asyncToken is not None:
            raise TCError("cuda backend: asynchronous 'gpu.launch_func' is not supported")
        if op.dynamicSharedMemorySize is not None or op.clusterSizeX is not None:
            raise TCError("cuda backend: dynamic shared memory and clusters are not supported")
        block = constant_block_size(op)
        if block is None:
            raise TCError(f"cuda backend: block size of '{kernel_symbol(op)}' must be constant")
        grid = (
            self._value(op.gridSizeX),
            self._value(op.gridSizeY),
            self._value(op.gridSizeZ),
        )
        name = kernel_symbol(op)
        aligned = self.alignments.get(name, {})
        args = tuple(
            replace(arg, alignment=aligned[k]) if k in aligned else arg
            for k, arg in enumerate(self._arg(v) for v in op.kernelOperands)
        )
        return KernelLaunch(name, grid, block, args, self.shared_bytes.get(name, 0))

    def _arg(self, value: SSAValue) -> KernelArg:
        t: Attribute = value.type
        if isinstance(t, MemRefType):
            view = static_shape(t)
            collapsed = isinstance(value.owner, memref.CollapseShapeOp)
            while isinstance(value.owner, memref.CollapseShapeOp):  # a view of the same buffer
                value = value.owner.src
            dtype, shape = numpy_dtype(t.element_type), view if collapsed else None
            if value in self.temporaries:
                return KernelArg(self.temporaries[value], dtype, True, shape=shape)
            if isinstance(value, BlockArgument) and value.owner is self.function.body.block:
                return KernelArg(ArgRef(value.index), dtype, True, shape=shape)
            raise TCError("cuda backend: kernel buffer argument must be a host argument or alloc")
        return KernelArg(self._value(value), numpy_dtype(t), False)

    def _value(self, value: SSAValue) -> HostValue:
        if isinstance(value, BlockArgument) and value.owner is self.function.body.block:
            return ArgRef(value.index)
        constant = _constant(value)
        if constant is not None:
            return constant
        op = value.owner
        if isinstance(op, Operation) and type(op) in _ARITH_HOST_OPS:
            return HostExpr(_ARITH_HOST_OPS[type(op)], tuple(self._value(v) for v in op.operands))
        name = op.name if isinstance(op, Operation) else "block argument"
        raise TCError(f"cuda backend: cannot compute launch value defined by '{name}' on the host")


def host_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The `func.func`s of `module` that launch kernels."""
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and any(isinstance(o, gpu.LaunchFuncOp) for o in op.walk())
    ]


def extract_host_program(module: ModuleOp, func_name: str | None = None) -> HostProgram:
    """The `HostProgram` of host function `func_name` (default: the only one)."""
    hosts = host_functions(module)
    if func_name is not None:
        hosts = [f for f in hosts if f.sym_name.data == func_name]
    if len(hosts) != 1:
        which = f"'{func_name}'" if func_name is not None else "exactly one"
        raise TCError(
            f"cuda backend: expected {which} host function launching kernels, found {len(hosts)}"
        )
    checks = sorted((op for op in module.walk() if isinstance(op, IndexOp)), key=lambda op: op.check_id.value.data)
    if [op.check_id.value.data for op in checks] != list(range(len(checks))):
        raise TCError("cuda backend: the check.index ops must be numbered 0, 1, ... across the module")
    index_checks = tuple(
        IndexCheck(op.tensor.data, op.dim.value.data, op.extent.value.data, op.source.data) for op in checks
    )
    kernels = [op for op in module.walk() if isinstance(op, gpu.FuncOp)]
    shared = {op.sym_name.data: dynamic_shared_bytes(op) for op in kernels}
    alignments = {op.sym_name.data: _vector_alignments(op) for op in kernels}
    return replace(_HostReader(hosts[0], shared, alignments).read(), index_checks=index_checks)


def _vector_alignments(kernel: gpu.FuncOp) -> dict[int, int]:
    """The arguments of `kernel` that vector loads or asynchronous copies
    read, by position: the bytes of their widest access (their address must
    be a multiple of it)."""
    found: dict[int, int] = {}
    for op in kernel.walk():
        if isinstance(op, vector.LoadOp):
            t = op.result.type
            base, size = op.base, t.element_type.bitwidth * t.get_shape()[0] // 8  # type: ignore[attr-defined]
        elif isinstance(op, DeviceAsyncCopyOp):
            base, size = op.src, op.bytes
        else:
            continue
        if isinstance(base, BlockArgument) and base.owner is kernel.body.block:
            found[base.index] = max(found.get(base.index, 0), size)
    return found


def extract_launches(module: ModuleOp, func_name: str | None = None) -> list[KernelLaunch]:
    """The launches of host function `func_name` (default: the only one), in order."""
    return list(extract_host_program(module, func_name).launches)
