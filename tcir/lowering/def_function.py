"""The function a `tc.def` becomes: signature, sizes, temporaries, loop nests.

Shared by the lowerings to loops (canonical or scheduled) and to the GPU host
function: inputs then outputs as memrefs (scalars as they are), symbolic
sizes as trailing `index` arguments, temporaries allocated up front and freed
before returning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tcir.dialects.tc import AllocOp, ComprehensionOp, DefOp, TensorType
from tcir.lowering.affine_to_arith import as_index, index_constant, materialize
from tcir.lowering.tc_point import PointLowering

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

    def tensor_bounds(self, type: TensorType) -> list[tuple[SSAValue, SSAValue]]:
        """`[0, size)` of each dimension of a tensor of `type`."""
        zero = index_constant(self.builder, 0)
        symbols = [self.point.sizes[n] for n in type.symbol_names]
        return [(zero, materialize(self.builder, d, [], symbols)) for d in type.dims]

    def alloc(self, type: TensorType, name: str | None) -> SSAValue:
        dynamic = tensor_sizes(self.builder, type, self.point.sizes)
        op = memref.AllocOp(dynamic, [], memref_type(type))
        op.memref.name_hint = name
        return self.builder.insert(op).memref

    def copy(self, source: SSAValue, type: TensorType) -> SSAValue:
        target = self.alloc(type, None)
        bounds = self.tensor_bounds(type)

        def body(b: Builder, ivs: Sequence[SSAValue]) -> None:
            value = b.insert(memref.LoadOp.get(source, ivs)).res
            b.insert(memref.StoreOp.get(value, target, ivs))

        build_nest(self.builder, bounds, [None] * type.rank, body)
        return target


@dataclass
class DefFunction:
    """A function being built for a `tc.def`; `finish` returns it."""

    definition: DefOp
    block: Block
    lowering: DefLowering
    temporaries: list[SSAValue] = field(default_factory=list[SSAValue])

    @property
    def builder(self) -> Builder:
        return self.lowering.builder

    @classmethod
    def start(cls, definition: DefOp) -> DefFunction:
        """The entry block with the signature, sizes and temporaries in place."""
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
        function = cls(definition, block, lowering)
        for op in definition.body.block.ops:
            if isinstance(op, AllocOp):
                assert isinstance(op.result.type, TensorType)
                buffer = lowering.alloc(op.result.type, op.result.name_hint)
                lowering.point.values[op.result] = buffer
                function.temporaries.append(buffer)
        return function

    def finish(self, freed: Sequence[SSAValue] = ()) -> func.FuncOp:
        """Free the temporaries (and `freed`), return, and wrap up the function."""
        for buffer in [*freed, *self.temporaries]:
            self.builder.insert(memref.DeallocOp.get(buffer))
        self.builder.insert(func.ReturnOp())
        name = self.definition.sym_name.data
        return func.FuncOp(name, (self.block.arg_types, ()), Region(self.block))
