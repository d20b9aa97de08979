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

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.dialects.poly import ScopOp
from tcir.dialects.tc import DefOp
from tcir.lowering.def_function import DefFunction
from tcir.polyhedral.ast_to_loops import AstLowering, scop_ast
from tcir.polyhedral.scop import module_scops, require_mapping


def lower_scheduled_def(definition: DefOp, scop: ScopOp) -> func.FuncOp:
    """The function running `scop`'s schedule for `definition`."""
    function = DefFunction.start(definition)
    point = function.lowering.point
    statements = {stmt.sym_name.data: stmt for stmt in scop.statements}
    ids = {name: point.sizes[name] for name in scop.param_names}
    AstLowering(point, statements, ids).node(function.builder, scop_ast(scop))
    return function.finish()


@dataclass(frozen=True)
class ConvertPolyToLoopsPass(ModulePass):
    """Replace every `tc.def` holding a `poly.scop` by the `func.func` that
    runs the scop's schedule as `scf` loops."""

    name = "convert-poly-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            require_mapping(scop, False, "lower it with convert-poly-to-gpu")
            definition = scop.parent_op()
            if isinstance(definition, DefOp):
                Rewriter.replace_op(definition, lower_scheduled_def(definition, scop))
