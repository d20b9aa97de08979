"""`convert-tc-to-loops`: the canonical (reference) lowering of `tc.def`s.

Each `tc.def` becomes a `func.func` taking its inputs then its outputs as
memrefs (scalars as they are, sizes still symbolic as trailing `index`
arguments), with one `scf.for` nest per comprehension, in program order:
left-hand side indices outer, reduction indices inner. An initializing kind
(`+=!`) first fills the left-hand side range with the operator's identity.
When a statement reads the tensor it writes other than pointwise, the tensor
is first copied so that the whole right-hand side sees the old values, as
TC's semantics require. Temporaries become `memref.alloc`/`memref.dealloc`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.tc import AllocOp, ComprehensionOp, DefOp, ReadOp, TensorType
from tcir.lowering.affine_to_arith import as_index, index_constant, materialize
from tcir.lowering.tc_point import PointLowering, identity, reduction_of

NestBody = Callable[[Builder, Sequence[SSAValue]], None]


def memref_type(type: TensorType) -> MemRefType:
    """The memref holding a tc tensor: signless elements, `?` for symbolic sizes."""
    static = type.static_shape()
    shape = static if static is not None else [DYNAMIC_INDEX] * type.rank
    return MemRefType(type.scalar_type, shape)


def tensor_sizes(builder: Builder, type: TensorType, sizes: dict[str, SSAValue]) -> list[SSAValue]:
    """`index` values of the dynamic sizes of `type` (none when static)."""
    if type.static_shape() is not None:
        return []
    symbols = [sizes[name] for name in type.symbol_names]
    return [materialize(builder, d, [], symbols) for d in type.dims]


def build_nest(
    builder: Builder,
    bounds: Sequence[tuple[SSAValue, SSAValue]],
    names: Sequence[str | None],
    body: NestBody,
) -> None:
    """A perfect `scf.for` nest over `bounds`, calling `body` innermost."""
    ivs: list[SSAValue] = []
    for (lo, hi), name in zip(bounds, names):
        step = index_constant(builder, 1)
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = name
        builder.insert(scf.ForOp(lo, hi, step, [], Region(block)))
        builder = Builder(InsertPoint.at_end(block))
        ivs.append(block.args[0])
        block.add_op(scf.YieldOp())
        builder = Builder(InsertPoint.before(block.last_op))  # pyright: ignore
    body(builder, ivs)


def _reads_lhs_non_pointwise(comp: ComprehensionOp) -> bool:
    pointwise = [AffineDimExpr(i) for i in range(comp.lhs_type.rank)]
    for op in comp.body.walk():
        if isinstance(op, ReadOp) and op.tensor is comp.lhs:
            if comp.reduction_indices:
                return True
            operands = list(op.subscript_operands)
            if list(op.subscripts) != pointwise or operands != list(comp.lhs_indices):
                return True
    return False


@dataclass
class DefLowering:
    """Lowers the statements of one `tc.def` into a function body."""

    builder: Builder
    point: PointLowering

    def bounds(self, comp: ComprehensionOp) -> list[tuple[SSAValue, SSAValue]]:
        symbols = [self.point.sizes[n] for n in comp.symbol_names]
        return [
            (materialize(self.builder, lo, [], symbols), materialize(self.builder, hi, [], symbols))
            for lo, hi in comp.ranges
        ]

    def alloc(self, type: TensorType, name: str | None) -> SSAValue:
        dynamic = tensor_sizes(self.builder, type, self.point.sizes)
        op = memref.AllocOp(dynamic, [], memref_type(type))
        op.memref.name_hint = name
        return self.builder.insert(op).memref

    def copy(self, source: SSAValue, type: TensorType) -> SSAValue:
        target = self.alloc(type, None)
        zero = index_constant(self.builder, 0)
        symbols = [self.point.sizes[n] for n in type.symbol_names]
        bounds = [(zero, materialize(self.builder, d, [], symbols)) for d in type.dims]

        def body(b: Builder, ivs: Sequence[SSAValue]) -> None:
            value = b.insert(memref.LoadOp.get(source, ivs)).res
            b.insert(memref.StoreOp.get(value, target, ivs))

        build_nest(self.builder, bounds, [None] * type.rank, body)
        return target

    def comprehension(self, comp: ComprehensionOp) -> list[SSAValue]:
        """Emit the loops of `comp`; returns buffers to free at the end."""
        lhs_type = comp.lhs_type
        buffer = self.point.values[comp.lhs]
        bounds = self.bounds(comp)
        names = [arg.name_hint for arg in comp.indices]
        rank = lhs_type.rank
        reduction = reduction_of(comp.kind.data)
        if comp.kind.data.endswith("!"):
            assert reduction is not None
            neutral = identity(reduction, lhs_type.element_type)

            def init(b: Builder, ivs: Sequence[SSAValue]) -> None:
                value = b.insert(arith.ConstantOp(neutral)).result
                b.insert(memref.StoreOp.get(value, buffer, ivs))

            build_nest(self.builder, bounds[:rank], names[:rank], init)
        freed: list[SSAValue] = []
        point = self.point
        if _reads_lhs_non_pointwise(comp):
            snapshot = self.copy(buffer, lhs_type)
            freed.append(snapshot)
            point = PointLowering({**self.point.values, comp.lhs: snapshot}, self.point.sizes)

        def update(b: Builder, ivs: Sequence[SSAValue]) -> None:
            value = point.clone_point(b, comp.body.block, ivs)
            assert value is not None
            kind = "=" if reduction is None else reduction + "="
            point.store(b, buffer, lhs_type.element_type, kind, value, ivs[:rank])

        build_nest(self.builder, bounds, names, update)
        return freed


def lower_def(definition: DefOp) -> func.FuncOp:
    """The canonical loop nest function of `definition`."""
    args = definition.body.block.args
    arg_types: list[Attribute] = [
        memref_type(a.type) if isinstance(a.type, TensorType) else a.type for a in args
    ]
    scalar_sizes = {
        name: arg
        for arg, name in zip(definition.inputs, definition.names)
        if isinstance(arg.type, IntegerType)
    }
    symbolic = [n for n in definition.size_names() if n not in scalar_sizes]
    block = Block(arg_types=[*arg_types, *[IndexType()] * len(symbolic)])
    for arg, name in zip(block.args, [*definition.names, *symbolic]):
        arg.name_hint = name
    builder = Builder(InsertPoint.at_end(block))
    sizes: dict[str, SSAValue] = dict(zip(symbolic, block.args[len(args) :]))
    for name, scalar in scalar_sizes.items():
        sizes[name] = as_index(builder, block.args[scalar.index])
    lowering = DefLowering(builder, PointLowering(dict(zip(args, block.args)), sizes))
    freed: list[SSAValue] = []
    for op in definition.body.block.ops:
        if isinstance(op, AllocOp):
            assert isinstance(op.result.type, TensorType)
            buffer = lowering.alloc(op.result.type, op.result.name_hint)
            lowering.point.values[op.result] = buffer
            freed.append(buffer)
        elif isinstance(op, ComprehensionOp):
            freed += lowering.comprehension(op)
    for buffer in freed:
        builder.insert(memref.DeallocOp.get(buffer))
    builder.insert(func.ReturnOp())
    return func.FuncOp(
        definition.sym_name.data,
        (block.arg_types, ()),
        Region(block),
    )


@dataclass(frozen=True)
class ConvertTcToLoopsPass(ModulePass):
    """Replace every `tc.def` by its canonical loop nest `func.func`."""

    name = "convert-tc-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for definition in list(op.walk()):
            if isinstance(definition, DefOp):
                Rewriter.replace_op(definition, lower_def(definition))



