"""`convert-tc-to-loops`: the canonical (reference) lowering of `tc.def`s.

Each `tc.def` becomes a `func.func` taking its inputs then its outputs as
memrefs (scalars as they are, sizes still symbolic as trailing `index`
arguments), with one `scf.for` nest per comprehension, in program order:
left-hand side indices outer, reduction indices inner. An initializing kind
(`+=!`) first fills the left-hand side range with the operator's identity
(a scatter, which updates the elements its `tc.yield` names, the whole
tensor).
When a statement reads the tensor it writes other than pointwise, the tensor
is first copied so that the whole right-hand side sees the old values, as
TC's semantics require. Temporaries become `memref.alloc`/`memref.dealloc`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.dialects.tc import ComprehensionOp, DefOp
from tcir.lowering.def_function import DefFunction, DefLowering, build_nest
from tcir.lowering.tc_point import PointLowering, identity, reduction_of


@dataclass
class CanonicalLowering:
    """Emits the canonical loop nests of comprehensions into a function."""

    lowering: DefLowering

    def comprehension(self, comp: ComprehensionOp) -> list[SSAValue]:
        """Emit the loops of `comp`; returns buffers to free at the end."""
        lhs_type = comp.lhs_type
        buffer = self.lowering.point.values[comp.lhs]
        bounds = self.lowering.bounds(comp)
        names = [arg.name_hint for arg in comp.indices]
        rank = lhs_type.rank
        reduction = reduction_of(comp.kind.data)
        scatter = comp.yield_op.subscripts is not None
        if comp.kind.data.endswith("!"):
            assert reduction is not None
            neutral = identity(reduction, lhs_type.element_type)

            def init(b: Builder, ivs: Sequence[SSAValue]) -> None:
                value = b.insert(arith.ConstantOp(neutral)).result
                b.insert(memref.StoreOp.get(value, buffer, ivs))

            whole = self.lowering.tensor_bounds(lhs_type) if scatter else bounds[:rank]
            build_nest(self.lowering.builder, whole, [None] * rank if scatter else names[:rank], init)
        freed: list[SSAValue] = []
        point = self.lowering.point
        if comp.reads_lhs_non_pointwise():
            snapshot = self.lowering.copy(buffer, lhs_type)
            freed.append(snapshot)
            point = PointLowering({**self.lowering.point.values, comp.lhs: snapshot}, self.lowering.point.sizes)

        def update(b: Builder, ivs: Sequence[SSAValue]) -> None:
            value = point.clone_point(b, comp.body.block, ivs)
            assert value is not None
            kind = "=" if reduction is None else reduction + "="
            element = ivs[:rank]
            if scatter:
                end = comp.yield_op
                element = point.subscripts(b, end.map.data.results, end.subscript_operands, end.symbol_names)  # pyright: ignore
            point.store(b, buffer, lhs_type.element_type, kind, value, element)

        build_nest(self.lowering.builder, bounds, names, update)
        return freed


def lower_def(definition: DefOp) -> func.FuncOp:
    """The canonical loop nest function of `definition`."""
    function = DefFunction.start(definition)
    canonical = CanonicalLowering(function.lowering)
    freed: list[SSAValue] = []
    for op in definition.comprehensions():
        freed += canonical.comprehension(op)
    return function.finish(freed)


@dataclass(frozen=True)
class ConvertTcToLoopsPass(ModulePass):
    """Replace every `tc.def` by its canonical loop nest `func.func`."""

    name = "convert-tc-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for definition in list(op.walk()):
            if isinstance(definition, DefOp):
                Rewriter.replace_op(definition, lower_def(definition))



