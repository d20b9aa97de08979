"""Translate a `gpu.func` kernel into a Python function that runs it SIMT.

    code = translate_kernel(kernel, block=(32, 8, 1), grid=(4, 4, 1))
    code.function(launch, lanes, *buffers_and_scalars)

The function executes every op once for all the lanes (threads of the wave)
that reach it, as numpy code. A value the same for all those lanes (constants,
loop counters of loops with uniform bounds, loads of global memory at uniform
indices) stays a Python number; a value that may differ (thread and block
ids and what depends on them, loads of shared or private memory) is an array
aligned with the active lanes (`varying_values`). Control flow on a uniform
value is Python control flow. A varying `scf.if` runs each branch on the
lanes that take it (arrays gathered to those lanes); a varying `scf.for` runs
while any lane has iterations left, on those lanes.

Why not xDSL's interpreter (`xdsl.interpreters`): it runs one thread at a
time, dispatching each op in Python with scalar values, which is hundreds of
times too slow for whole grids (a 37x45x29 matmul runs ~50k threads); it has
no `gpu` dialect (ids, barriers, launches), no notion of lanes or divergence,
and its memrefs cannot check races or bounds per thread. Translating to
vectorized Python is what carries those.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy)
import numpy as np
from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, MemRefType, VectorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer

from tcir.backends.cuda.scalar_types import (
    ATOMIC_EXTREMUM,
    ATOMIC_KINDS,
    PRIVATE_SPACE,
    SHARED_SPACE,
    int_width,
    is_unsigned,
    memory_space,
    numpy_dtype,
    static_shape,
    written_memrefs,
)
from tcir.backends.cuda_sim import values
from tcir.dialects.check import IndexOp
from tcir.dialects.nvgpu import (
    DeviceAsyncCopyOp,
    DeviceAsyncCreateGroupOp,
    DeviceAsyncWaitOp,
    MmaSyncOp,
    SubgroupBarrierOp,
    SubgroupReduceOp,
    WarpgroupGenerateDescriptorOp,
    WarpgroupMmaOp,
    WarpgroupMmaWaitOp,
)
from tcir.backends.source_text import IndentedLines
from tcir.errors import TCError

_DIMS = {"x": 0, "y": 1, "z": 2}
_BINARY = {
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*",
    arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
    arith.ShLIOp: "<<", arith.ShRSIOp: ">>",
}  # fmt: skip
_BOOL_BINARY = {arith.AddiOp: "^", arith.SubiOp: "^", arith.MuliOp: "&"}
_CALLS = {
    arith.DivSIOp: "V.divsi", arith.RemSIOp: "V.remsi", arith.FloorDivSIOp: "V.floordivsi",
    arith.CeilDivSIOp: "V.ceildivsi", arith.MinSIOp: "V.minimum", arith.MaxSIOp: "V.maximum",
    arith.MaxnumfOp: "np.fmax", arith.MinnumfOp: "np.fmin",
    arith.MaximumfOp: "np.maximum", arith.MinimumfOp: "np.minimum",
}  # fmt: skip
_UNSIGNED_CALLS = {
    arith.DivUIOp: "V.divui", arith.RemUIOp: "V.remui", arith.CeilDivUIOp: "V.ceildivui",
    arith.ShRUIOp: "V.shift_right_unsigned",
}  # fmt: skip
_UNSIGNED_MIN_MAX = {arith.MinUIOp: "np.minimum", arith.MaxUIOp: "np.maximum"}
_CMPI = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_CMPF = {
    "false": "np.zeros(np.shape({a}), bool)[()]", "oeq": "{a} == {b}", "ogt": "{a} > {b}", "oge": "{a} >= {b}",
    "olt": "{a} < {b}", "ole": "{a} <= {b}", "one": "({a} < {b}) | ({a} > {b})",
    "ord": "({a} == {a}) & ({b} == {b})", "ueq": "np.logical_not(({a} < {b}) | ({a} > {b}))",
    "ugt": "np.logical_not({a} <= {b})", "uge": "np.logical_not({a} < {b})",
    "ult": "np.logical_not({a} >= {b})", "ule": "np.logical_not({a} > {b})",
    "une": "{a} != {b}", "uno": "({a} != {a}) | ({b} != {b})",
    "true": "np.ones(np.shape({a}), bool)[()]",
}  # fmt: skip
_CONVERSIONS = (
    arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.FPToSIOp, arith.TruncIOp,
    arith.ExtSIOp, arith.ExtUIOp, arith.UIToFPOp, arith.FPToUIOp, arith.IndexCastOp,
    arith.BitcastOp,
)  # fmt: skip


def _math_name(op: Operation) -> str | None:
    """The `values.MATH` key of a `math` op, or None."""
    if op.name.startswith("math."):
        name = op.name.removeprefix("math.")
        return name if name in values.MATH else None
    return None


def is_global(t: Any) -> bool:
    return isinstance(t, MemRefType) and memory_space(t) in (0, 1)


def varying_values(
    kernel: gpu.FuncOp, block: tuple[int, int, int], grid: tuple[int, int, int]
) -> set[SSAValue]:
    """The values of `kernel` that may differ between the threads of a launch
    with these sizes (the rest are uniform): a fixpoint over the ops."""
    varying: set[SSAValue] = set()

    def mark(values_: Any) -> bool:
        new = [v for v in values_ if v not in varying]
        varying.update(new)
        return bool(new)

    def yields(region: Region) -> list[SSAValue]:
        block_ = region.blocks.first
        last = block_.last_op if block_ is not None else None
        return list(last.operands) if isinstance(last, scf.YieldOp) else []

    changed = True
    while changed:
        changed = False
        for op in kernel.walk():
            if isinstance(op, gpu.ThreadIdOp | gpu.BlockIdOp | gpu.GlobalIdOp):
                dim = _DIMS[op.dimension.data.value]
                sizes = {gpu.ThreadIdOp: (block,), gpu.BlockIdOp: (grid,)}.get(type(op), (block, grid))
                if any(s[dim] > 1 for s in sizes):
                    changed |= mark(op.results)
            elif isinstance(op, memref.AtomicRMWOp | MmaSyncOp | WarpgroupMmaOp | gpu.AllReduceOp):  # one value per lane
                changed |= mark(op.results)
            elif isinstance(op, memref.LoadOp):
                if not is_global(op.memref.type) or any(i in varying for i in op.indices):
                    changed |= mark(op.results)
            elif isinstance(op, scf.IfOp):
                branches = [yields(op.true_region), yields(op.false_region)]
                for k, result in enumerate(op.output):
                    if op.cond in varying or any(len(b) > k and b[k] in varying for b in branches):
                        changed |= mark([result])
            elif isinstance(op, scf.ForOp):
                body = op.body.block
                if any(v in varying for v in (op.lb, op.ub, op.step)):
                    changed |= mark([*body.args, *op.res])
                    continue
                yielded = yields(op.body)
                for k, (init, arg, result) in enumerate(zip(op.iter_args, body.args[1:], op.res)):
                    if init in varying or arg in varying or yielded[k] in varying:
                        changed |= mark([arg, result])
            elif any(v in varying for v in op.operands):
                changed |= mark(op.results)
    return varying


def _site_lines(kernel: gpu.FuncOp) -> list[str]:
    """The printed line of each load, store, atomic, asynchronous copy, mma and barrier of `kernel`, in walk order."""
    stream = StringIO()
    Printer(stream=stream).print_op(kernel)
    pattern = re.compile(
        r"(= memref\.load |^\s*memref\.store |= vector\.load |^\s*vector\.store |\"gpu\.barrier\""
        r"|\"memref\.atomic_rmw\"|\"nvgpu\.device_async_copy\"|\"nvgpu\.mma\.sync\"|\"nvgpu\.warpgroup\.mma\")"
    )
    return [line.strip() for line in stream.getvalue().splitlines() if pattern.search(line)]


@dataclass
class Scope:
    """The lanes active in a region (a Python variable) and the Python
    expression of every value visible there."""

    lanes: str
    names: dict[SSAValue, str]


@dataclass
class KernelCode:
    """A translated kernel: its Python source and function, the description
    of each checked op (`sites`), and per argument its name and whether the
    kernel stores to it."""

    name: str
    source: str
    function: Any
    sites: list[str]
    arg_names: list[str]
    stored: list[bool]


@dataclass
class KernelTranslator(IndentedLines):
    """Emits the Python source of one kernel for one launch configuration."""

    indent = "    "

    kernel: gpu.FuncOp
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    lines: list[str] = field(default_factory=list[str])
    constants: list[str] = field(default_factory=list[str])
    sites: list[str] = field(default_factory=list[str])
    depth: int = 1
    counter: int = 0

    def __post_init__(self) -> None:
        self.varying = varying_values(self.kernel, self.block, self.grid)
        self.yield_targets: list[Any] = []
        self.printed_sites = _site_lines(self.kernel)

    # Output ---------------------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, text: str) -> str:
        """A module-level name for the constant expression `text`."""
        name = f"K{len(self.constants)}"
        self.constants.append(f"{name} = {text}")
        return name

    def site(self, op: Operation) -> int:
        """The number of a checked op, described by its printed IR."""
        k = len(self.sites)
        text = self.printed_sites[k] if k < len(self.printed_sites) else op.name
        self.sites.append(f"`{text}`")
        return k

    # Values ---------------------------------------------------------------------

    def define(self, scope: Scope, value: SSAValue, expression: str) -> None:
        name = self.fresh()
        self.line(f"{name} = {expression}")
        scope.names[value] = name

    def ref(self, scope: Scope, value: SSAValue) -> str:
        return scope.names[value]

    def per_lane(self, scope: Scope, value: SSAValue, target: SSAValue) -> str:
        """`value` as the per-lane array `target` needs where `target` varies."""
        name = self.ref(scope, value)
        if target in self.varying and value not in self.varying:
            return f"V.full({scope.lanes}.size, {name}, {self.dtype(target)})"
        return name

    def dtype(self, value: SSAValue) -> str:
        t = value.type
        if isinstance(t, IndexType):
            return "np.int64"
        name = numpy_dtype(t)
        return f"np.{name}" if hasattr(np, name) else f"np.dtype({name!r}).type"  # bfloat16: ml_dtypes

    # Kernel -----------------------------------------------------------------------

    def translate(self) -> tuple[str, list[str], list[bool]]:
        block = self.kernel.body.block
        stored = written_memrefs(self.kernel)
        args = [f"a{k}" for k in range(len(block.args))]
        scope = Scope("L0", dict(zip(block.args, args)))
        for arg, name in zip(block.args, args):
            if isinstance(arg.type, IndexType):  # the host passes a numpy int64
                self.line(f"{name} = int({name})")
        self.block_ops(block, scope)
        name = self.kernel.sym_name.data
        head = f"def kernel(rt, L0{''.join(', ' + a for a in args)}):"
        body = self.lines or ["    pass"]
        source = "\n".join([f"# {name}", *self.constants, head, *body, ""])
        arg_names = [a.name_hint or f"arg{k}" for k, a in enumerate(block.args)]
        return source, arg_names, [a in stored for a in block.args]

    def block_ops(self, block: Block, scope: Scope) -> None:
        for op in block.ops:
            self.op(op, scope)

    def op(self, op: Operation, scope: Scope) -> None:
        kind = type(op)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            getattr(self, handler)(op, scope)
        elif kind in _BINARY:
            a, b = (self.ref(scope, v) for v in op.operands)
            symbol = _BINARY[kind]
            if kind in _BOOL_BINARY and int_width(op.results[0].type) == 1:
                symbol = _BOOL_BINARY[kind]
            self.define(scope, op.results[0], f"{a} {symbol} {b}")
        elif kind in _CALLS:
            args = ", ".join(self.ref(scope, v) for v in op.operands)
            self.define(scope, op.results[0], f"{_CALLS[kind]}({args})")
        elif kind in _UNSIGNED_CALLS:
            args = ", ".join(self.ref(scope, v) for v in op.operands)
            bits = int_width(op.results[0].type)
            self.define(scope, op.results[0], f"{_UNSIGNED_CALLS[kind]}({args}, {bits})")
        elif kind in _UNSIGNED_MIN_MAX:
            t = op.results[0].type
            a, b = (self.ref(scope, v) for v in op.operands)
            bits = int_width(t)
            picked = f"np.where({_UNSIGNED_MIN_MAX[kind]}(V.unsigned({a}, {bits}), V.unsigned({b}, {bits})) == V.unsigned({a}, {bits}), {a}, {b})[()]"
            self.define(scope, op.results[0], f"V.cast({picked}, {self.dtype(op.results[0])})")
        elif kind in _CONVERSIONS:
            self.conversion(op, scope)
        elif (name := _math_name(op)) is not None:
            args = ", ".join(self.ref(scope, v) for v in op.operands)
            self.define(scope, op.results[0], f"V.MATH[{name!r}]({args})")
        else:
            raise TCError(f"cuda-sim: op '{op.name}' is not supported")

    # arith ----------------------------------------------------------------------

    def op_constant(self, op: arith.ConstantOp, scope: Scope) -> None:
        attr = op.value
        t = op.result.type
        if isinstance(attr, IntegerAttr):
            value = attr.value.data
            bits = int_width(t)
            if bits == 1:
                scope.names[op.result] = "True" if value & 1 else "False"
            elif isinstance(t, IndexType):
                scope.names[op.result] = str(value)
            else:
                scope.names[op.result] = self.constant(f"V.cast({value}, {self.dtype(op.result)})")
        elif isinstance(attr, FloatAttr):
            text = repr(str(float(attr.value.data)))  # 'inf', 'nan' and numbers alike
            scope.names[op.result] = self.constant(f"{self.dtype(op.result)}(float({text}))")
        else:
            raise TCError(f"cuda-sim: op 'arith.constant' with value {attr} is not supported")

    def op_negf(self, op: arith.NegfOp, scope: Scope) -> None:
        self.define(scope, op.result, f"-{self.ref(scope, op.operand)}")

    def op_cmpi(self, op: arith.CmpiOp, scope: Scope) -> None:
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = self.ref(scope, op.lhs), self.ref(scope, op.rhs)
        bits = int_width(op.lhs.type)
        if predicate[0] == "u" and not is_unsigned(op.lhs.type) and bits != 1:
            a, b = f"V.unsigned({a}, {bits})", f"V.unsigned({b}, {bits})"
        self.define(scope, op.result, f"{a} {_CMPI[predicate.lstrip('su')]} {b}")

    def op_cmpf(self, op: arith.CmpfOp, scope: Scope) -> None:
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = self.ref(scope, op.lhs), self.ref(scope, op.rhs)
        self.define(scope, op.result, _CMPF[predicate].format(a=a, b=b))

    def op_select(self, op: arith.SelectOp, scope: Scope) -> None:
        c = self.ref(scope, op.cond)
        a = self.per_lane(scope, op.lhs, op.result)
        b = self.per_lane(scope, op.rhs, op.result)
        if op.cond in self.varying:
            self.define(scope, op.result, f"np.where({c}, {a}, {b})")
        else:
            self.define(scope, op.result, f"({a} if {c} else {b})")

    def conversion(self, op: Operation, scope: Scope) -> None:
        (source,) = op.operands
        (result,) = op.results
        x = self.ref(scope, source)
        src, dst = source.type, result.type
        src_bits, dst_bits = int_width(src), int_width(dst)
        if isinstance(op, arith.BitcastOp):
            expression = f"V.bitcast({x}, {self.dtype(result)})"
        elif isinstance(dst, IndexType):
            expression = f"V.index({x})"
        elif dst_bits == 1:
            expression = x if src_bits == 1 else f"V.to_bool({x})"
        elif isinstance(op, arith.ExtSIOp) and src_bits == 1:
            expression = f"-V.cast({x}, {self.dtype(result)})"
        elif isinstance(op, arith.ExtUIOp | arith.UIToFPOp) and src_bits not in (None, 1):
            expression = f"V.cast(V.unsigned({x}, {src_bits}), {self.dtype(result)})"
        elif isinstance(op, arith.FPToUIOp):
            expression = f"V.cast(V.cast({x}, np.uint{dst_bits}), {self.dtype(result)})"
        else:
            expression = f"V.cast({x}, {self.dtype(result)})"
        self.define(scope, result, expression)

    # func, gpu --------------------------------------------------------------------

    def op_call(self, op: func.CallOp, scope: Scope) -> None:
        name = op.callee.root_reference.data
        t = op.res[0].type if len(op.res) == 1 else None
        base = name.removesuffix("f") if t is not None and numpy_dtype(t) == "float32" else name
        if t is None or base not in values.MATH:
            raise TCError(f"cuda-sim: op 'func.call' of '@{name}' is not supported")
        args = ", ".join(self.ref(scope, v) for v in op.arguments)
        self.define(scope, op.res[0], f"V.MATH[{base!r}]({args})")

    def thread_or_block(self, op: gpu.ThreadIdOp | gpu.BlockIdOp, scope: Scope, ids: str) -> None:
        (result,) = op.results
        dim = _DIMS[op.dimension.data.value]
        if result in self.varying:
            self.define(scope, result, f"rt.{ids}[{dim}][{scope.lanes}]")
        else:
            scope.names[result] = "0"

    def op_thread_id(self, op: gpu.ThreadIdOp, scope: Scope) -> None:
        self.thread_or_block(op, scope, "tid")

    def op_block_id(self, op: gpu.BlockIdOp, scope: Scope) -> None:
        self.thread_or_block(op, scope, "bid")

    def op_global_id(self, op: gpu.GlobalIdOp, scope: Scope) -> None:
        dim = _DIMS[op.dimension.data.value]
        if op.result in self.varying:
            lanes = scope.lanes
            expression = f"rt.bid[{dim}][{lanes}] * {self.block[dim]} + rt.tid[{dim}][{lanes}]"
            self.define(scope, op.result, expression)
        else:
            scope.names[op.result] = "0"

    def op_block_dim(self, op: gpu.BlockDimOp, scope: Scope) -> None:
        scope.names[op.result] = str(self.block[_DIMS[op.dimension.data.value]])

    def op_grid_dim(self, op: gpu.GridDimOp, scope: Scope) -> None:
        scope.names[op.result] = str(self.grid[_DIMS[op.dimension.data.value]])

    def op_barrier(self, op: gpu.BarrierOp, scope: Scope) -> None:
        self.line(f"rt.barrier({scope.lanes}, {self.site(op)})")

    def op_all_reduce(self, op: gpu.AllReduceOp, scope: Scope) -> None:
        if op.op is None:
            raise TCError("cuda-sim: op 'gpu.all_reduce' with a region is not supported")
        value = self.ref(scope, op.operand)
        self.define(scope, op.result, f"rt.all_reduce({scope.lanes}, {value}, {op.op.data.value!r}, {self.site(op)})")

    def op_subgroup_barrier(self, op: SubgroupBarrierOp, scope: Scope) -> None:
        self.line(f"rt.warp_barrier({scope.lanes}, {self.site(op)})")

    def op_subgroup_reduce(self, op: SubgroupReduceOp, scope: Scope) -> None:
        value = self.ref(scope, op.value)
        self.define(scope, op.result, f"rt.subgroup_reduce({scope.lanes}, {value}, {op.op.data.value!r}, {self.site(op)})")

    def op_return(self, op: gpu.ReturnOp, scope: Scope) -> None:
        if op.args:
            raise TCError("cuda-sim: op 'gpu.return' with operands is not supported")

    # memref -----------------------------------------------------------------------

    def index(self, scope: Scope, indices: Any, *extra: str) -> str:
        names = [*(self.ref(scope, i) for i in indices), *extra]
        return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"

    def op_load(self, op: memref.LoadOp, scope: Scope) -> None:
        self.load(op, scope, op.memref, op.indices, op.res)

    def op_store(self, op: memref.StoreOp, scope: Scope) -> None:
        self.store(op, scope, op.memref, op.indices, op.value)

    def op_vector_load(self, op: vector.LoadOp, scope: Scope) -> None:
        self.load(op, scope, op.base, op.indices, op.result)

    def op_vector_store(self, op: vector.StoreOp, scope: Scope) -> None:
        self.store(op, scope, op.base, op.indices, op.vector)

    def load(self, op: Operation, scope: Scope, ref: SSAValue, indices: Any, result: SSAValue) -> None:
        method, index, width = self.access(scope, ref, indices, result.type)
        buffer = self.ref(scope, ref)
        self.define(scope, result, f"{buffer}.load{method}({scope.lanes}, {index}, {self.site(op)}{width})")

    def store(self, op: Operation, scope: Scope, ref: SSAValue, indices: Any, value: SSAValue) -> None:
        method, index, width = self.access(scope, ref, indices, value.type)
        buffer, stored = self.ref(scope, ref), self.ref(scope, value)
        self.line(f"{buffer}.store{method}({scope.lanes}, {index}, {stored}, {self.site(op)}{width})")

    def access(self, scope: Scope, ref: SSAValue, indices: Any, t: Attribute) -> tuple[str, str, str]:
        """The method suffix, index and trailing width argument of an access
        to `ref` of a value of type `t`: a vector's lanes are consecutive
        elements (`load_vector`), the last dimension of a memref of vectors
        (registers: `float4 prefetch[8]`)."""
        if not isinstance(t, VectorType):
            return "", self.index(scope, indices), ""
        lanes = ("0",) if isinstance(ref.type.element_type, VectorType) else ()  # type: ignore[attr-defined]
        return "_vector", self.index(scope, indices, *lanes), f", {t.get_shape()[0]}"

    def op_async_copy(self, op: DeviceAsyncCopyOp, scope: Scope) -> None:
        site, width, lanes = self.site(op), op.elements, scope.lanes
        source, index = self.ref(scope, op.src), self.index(scope, op.src_indices)
        value = f"{source}.load({lanes}, {index}, {site})" if width == 1 else \
            f"{source}.load_vector({lanes}, {index}, {site}, {width})"
        target = self.ref(scope, op.dst)
        self.line(f"rt.async_copy({target}, {lanes}, {self.index(scope, op.dst_indices)}, {value}, {site}, {width})")

    def op_async_create_group(self, op: DeviceAsyncCreateGroupOp, scope: Scope) -> None:
        self.line(f"rt.async_commit({scope.lanes})")

    def op_async_wait(self, op: DeviceAsyncWaitOp, scope: Scope) -> None:
        self.line(f"rt.async_wait({scope.lanes}, {op.groups})")

    def op_mma_sync(self, op: MmaSyncOp, scope: Scope) -> None:
        registers = [f"[{', '.join(self.ref(scope, v) for v in group)}]" for group in (op.matrix_a, op.matrix_b, op.matrix_c)]
        results = [self.fresh() for _ in op.res]
        self.line(f"{', '.join(results)} = rt.mma_sync({scope.lanes}, {', '.join(registers)}, {self.site(op)})")
        scope.names.update(zip(op.res, results))

    def op_generate_descriptor(self, op: WarpgroupGenerateDescriptorOp, scope: Scope) -> None:
        self.define(scope, op.result, f"({self.ref(scope, op.source)}, {self.index(scope, op.subscript_operands)})")

    def op_warpgroup_mma(self, op: WarpgroupMmaOp, scope: Scope) -> None:
        a, b = self.ref(scope, op.descriptor_a), self.ref(scope, op.descriptor_b)
        results = [self.fresh() for _ in op.res]
        accumulators = ", ".join(self.ref(scope, v) for v in op.matrix_c)
        tf32 = op.tf32_enabled is not None
        self.line(f"{', '.join(results)} = rt.warpgroup_mma({scope.lanes}, {a}, {b}, [{accumulators}], {op.k}, {tf32}, "
                  f"{self.site(op)}, {op.transposes})")
        scope.names.update(zip(op.res, results))

    def op_warpgroup_wait(self, op: WarpgroupMmaWaitOp, scope: Scope) -> None:
        """Nothing: the simulated `wgmma` is complete when it returns."""

    def op_atomic_rmw(self, op: memref.AtomicRMWOp, scope: Scope) -> None:
        kind = op.kind.value.data
        if kind not in ATOMIC_KINDS.values():
            raise TCError(f"cuda-sim: op 'memref.atomic_rmw' of kind {kind} is not supported")
        buffer, index = self.ref(scope, op.memref), self.index(scope, op.indices)
        value = self.ref(scope, op.value)
        combine = repr(ATOMIC_EXTREMUM.get(kind, "add"))
        self.define(scope, op.result, f"{buffer}.atomic({scope.lanes}, {index}, {value}, {self.site(op)}, {combine})")

    def op_check_index(self, op: IndexOp, scope: Scope) -> None:
        sub, value = self.ref(scope, op.subscript), self.ref(scope, op.value)
        check, extent = op.check_id.value.data, op.extent.value.data
        self.define(scope, op.result, f"rt.check_index({check}, {sub}, {value}, {extent})")

    def op_alloca(self, op: memref.AllocaOp, scope: Scope) -> None:
        t = op.memref.type
        space = memory_space(t)
        if op.dynamic_sizes or space not in (0, SHARED_SPACE, PRIVATE_SPACE):
            raise TCError(f"cuda-sim: op 'memref.alloca' of '{t}' is not supported")
        kind = "shared" if space == SHARED_SPACE else "private"
        shape = static_shape(t)
        name = op.memref.name_hint or f"{kind}{self.counter}"
        element = t.element_type
        if isinstance(element, VectorType):  # registers of vectors: their lanes a last dimension
            shape, element = (*shape, element.get_shape()[0]), element.element_type
        dtype = numpy_dtype(element)
        self.define(scope, op.memref, f"rt.{kind}({shape!r}, {dtype!r}, {name!r})")

    # scf --------------------------------------------------------------------------

    def enter(self, scope: Scope, region: Region, selection: str) -> Scope:
        """The scope of `region` run on the lanes `selection` (indices into
        `scope`'s lanes): lanes and the varying values the region uses, gathered."""
        full = self.fresh("full")
        lanes = self.fresh("L")
        self.line(f"{full} = {selection}.size == {scope.lanes}.size")
        self.line(f"{lanes} = {scope.lanes} if {full} else {scope.lanes}[{selection}]")
        inner = Scope(lanes, {v: n for v, n in scope.names.items() if v not in self.varying})
        for value in _used_from_outside(region):
            if value in self.varying and value in scope.names:
                name = self.fresh()
                old = scope.names[value]
                self.line(f"{name} = {old} if {full} else {old}[{selection}]")
                inner.names[value] = name
        return inner

    def op_if(self, op: scf.IfOp, scope: Scope) -> None:
        c = self.ref(scope, op.cond)
        results = [self.fresh() for _ in op.output]
        for result, name in zip(op.output, results):
            scope.names[result] = name
        else_block = op.false_region.blocks.first
        has_else = else_block is not None and (
            bool(op.output) or any(not isinstance(o, scf.YieldOp) for o in else_block.ops)
        )
        if op.cond not in self.varying:
            self.line(f"if {c}:")
            with self.indented():
                self.line("pass")
                self.yield_targets.append(("assign", op.output, results))
                self.block_ops(op.true_region.block, scope)
            if has_else:
                assert else_block is not None
                self.line("else:")
                with self.indented():
                    self.line("pass")
                    self.block_ops(else_block, scope)
            self.yield_targets.pop()
            return
        for result, name in zip(op.output, results):
            self.line(f"{name} = np.empty({scope.lanes}.size, {self.dtype(result)})")
        branches = [(op.true_region, c)]
        if has_else:
            branches.append((op.false_region, f"np.logical_not({c})"))
        for region, condition in branches:
            selection = self.fresh("s")
            self.line(f"{selection} = np.flatnonzero({condition})")
            self.line(f"if {selection}.size:")
            with self.indented():
                inner = self.enter(scope, region, selection)
                self.yield_targets.append(("scatter", op.output, results, selection))
                self.block_ops(region.block, inner)
                self.yield_targets.pop()

    def op_for(self, op: scf.ForOp, scope: Scope) -> None:
        body = op.body.block
        iv, args = body.args[0], body.args[1:]
        lb, ub, step = (self.ref(scope, v) for v in (op.lb, op.ub, op.step))
        carried = [self.fresh("c") for _ in args]
        if iv not in self.varying:
            for name, init, arg in zip(carried, op.iter_args, args):
                self.line(f"{name} = {self.per_lane(scope, init, arg)}")
                scope.names[arg] = name
            for result, name in zip(op.res, carried):
                scope.names[result] = name
            counter = self.fresh("i")
            scope.names[iv] = counter
            self.line(f"for {counter} in range({lb}, {ub}, {step}):")
            with self.indented():
                self.line("pass")
                self.yield_targets.append(("assign", args, carried))
                self.block_ops(body, scope)
                self.yield_targets.pop()
            return
        n = f"{scope.lanes}.size"
        counters = self.fresh("ivs")
        self.line(f"{counters} = V.full({n}, {lb}, np.int64)")
        for name, init, arg in zip(carried, op.iter_args, args):
            self.line(f"{name} = V.full({n}, {self.ref(scope, init)}, {self.dtype(arg)})")
        for result, name in zip(op.res, carried):
            scope.names[result] = name
        self.line("while True:")
        with self.indented():
            selection = self.fresh("s")
            self.line(f"{selection} = np.flatnonzero({counters} < {self.ref(scope, op.ub)})")
            self.line(f"if not {selection}.size:")
            self.line("    break")
            inner = self.enter(scope, op.body, selection)
            self.define(inner, iv, f"{counters}[{selection}]")
            for name, arg in zip(carried, args):
                self.define(inner, arg, f"{name}[{selection}]")
            self.yield_targets.append(("scatter", args, carried, selection))
            self.block_ops(body, inner)
            self.yield_targets.pop()
            self.line(f"{counters} = {counters} + {step}")

    def op_yield(self, op: scf.YieldOp, scope: Scope) -> None:
        if not op.operands:
            return
        mode, targets, names, *selection = self.yield_targets[-1]
        if mode == "assign":
            texts = [self.per_lane(scope, v, t) for v, t in zip(op.operands, targets)]
            self.line(f"{', '.join(names)}, = {', '.join(texts)},")
            return
        staged = [self.ref(scope, v) for v in op.operands]
        for name, text in zip(names, staged):
            self.line(f"{name}[{selection[0]}] = {text}")


_HANDLERS: dict[type[Operation], str] = {
    arith.ConstantOp: "op_constant", arith.NegfOp: "op_negf", arith.CmpiOp: "op_cmpi",
    arith.CmpfOp: "op_cmpf", arith.SelectOp: "op_select", func.CallOp: "op_call",
    gpu.ThreadIdOp: "op_thread_id", gpu.BlockIdOp: "op_block_id", gpu.GlobalIdOp: "op_global_id",
    gpu.BlockDimOp: "op_block_dim", gpu.GridDimOp: "op_grid_dim", gpu.BarrierOp: "op_barrier",
    gpu.ReturnOp: "op_return", gpu.AllReduceOp: "op_all_reduce", memref.LoadOp: "op_load", memref.StoreOp: "op_store",
    memref.AtomicRMWOp: "op_atomic_rmw", vector.LoadOp: "op_vector_load", vector.StoreOp: "op_vector_store",
    memref.AllocaOp: "op_alloca", IndexOp: "op_check_index", scf.IfOp: "op_if", scf.ForOp: "op_for", scf.YieldOp: "op_yield",
    DeviceAsyncCopyOp: "op_async_copy", DeviceAsyncCreateGroupOp: "op_async_create_group",
    DeviceAsyncWaitOp: "op_async_wait", MmaSyncOp: "op_mma_sync",
    SubgroupBarrierOp: "op_subgroup_barrier", SubgroupReduceOp: "op_subgroup_reduce",
    WarpgroupGenerateDescriptorOp: "op_generate_descriptor", WarpgroupMmaOp: "op_warpgroup_mma",
    WarpgroupMmaWaitOp: "op_warpgroup_wait",
}  # fmt: skip


def _used_from_outside(region: Region) -> list[SSAValue]:
    """The values that ops of `region` use but that are defined outside it."""
    defined: set[SSAValue] = set()
    used: dict[SSAValue, None] = {}
    for block in region.blocks:
        defined.update(block.args)
        for op in block.walk():
            defined.update(op.results)
            for inner in op.regions:
                for b in inner.blocks:
                    defined.update(b.args)
            used.update(dict.fromkeys(op.operands))
    return [v for v in used if v not in defined]


def translate_kernel(
    kernel: gpu.FuncOp, block: tuple[int, int, int], grid: tuple[int, int, int]
) -> KernelCode:
    """The Python function simulating `kernel` launched with these sizes."""
    translator = KernelTranslator(kernel, block, grid)
    source, arg_names, stored = translator.translate()
    name = kernel.sym_name.data
    filename = f"<cuda-sim {name} block={block} grid={grid}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"np": np, "V": values}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102  (source generated from IR)
    return KernelCode(name, source, namespace["kernel"], translator.sites, arg_names, stored)
