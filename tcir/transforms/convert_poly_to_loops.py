"""`convert-poly-to-loops`: generate loops for every scheduled `tc.def`.

A `tc.def` whose statements live in a `poly.scop` becomes a `func.func` with
the signature `convert-tc-to-loops` gives (inputs then outputs as memrefs,
scalars as they are, symbolic sizes as trailing `index` arguments); its body
allocates the temporaries, runs the code isl generates from the scop's
schedule tree (`scf.for`/`scf.if` with `arith` index math, band AST options
such as `unroll` honoured) with the statement bodies inlined, and frees the
temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.poly import ScopOp
from tcir.dialects.tc import AllocOp, DefOp, TensorType
from tcir.lowering.affine_to_arith import as_index
from tcir.lowering.tc_point import PointLowering
from tcir.polyhedral.ast_to_loops import AstLowering, scop_ast
from tcir.transforms.convert_tc_to_loops import DefLowering, memref_type


def lower_scheduled_def(definition: DefOp, scop: ScopOp) -> func.FuncOp:
    """The function running `scop`'s schedule for `definition`."""
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
    temporaries: list[SSAValue] = []
    for op in definition.body.block.ops:
        if isinstance(op, AllocOp):
            assert isinstance(op.result.type, TensorType)
            buffer = lowering.alloc(op.result.type, op.result.name_hint)
            lowering.point.values[op.result] = buffer
            temporaries.append(buffer)
    statements = {stmt.sym_name.data: stmt for stmt in scop.statements}
    ids = {name: sizes[name] for name in scop.param_names}
    AstLowering(lowering.point, statements, ids).node(builder, scop_ast(scop))
    for buffer in temporaries:
        builder.insert(memref.DeallocOp.get(buffer))
    builder.insert(func.ReturnOp())
    return func.FuncOp(definition.sym_name.data, (block.arg_types, ()), Region(block))


@dataclass(frozen=True)
class ConvertPolyToLoopsPass(ModulePass):
    """Replace every `tc.def` holding a `poly.scop` by the `func.func` that
    runs the scop's schedule as `scf` loops."""

    name = "convert-poly-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for definition in [o for o in op.walk() if isinstance(o, DefOp)]:
            scop = next(
                (s for s in definition.body.block.ops if isinstance(s, ScopOp)), None
            )
            if scop is not None:
                Rewriter.replace_op(definition, lower_scheduled_def(definition, scop))
