"""`convert-tc-to-loops`: the canonical (reference) lowering of `tc.def`s.

Each `tc.def` becomes a `func.func` taking its inputs then its outputs as
memrefs (scalars as they are, sizes still symbolic as trailing `index`
arguments), with one `scf.for` nest per comprehension, in program order:
left-hand side indices outer, reduction indices inner. An initializing kind
(`+=!`) first fills the left-hand side range with the operator's identity
(a scatter, which updates the elements its `tc.yield` names, the whole
tensor; a scatter of a guarded sum `c ? v : 0` updates its element only
where `c` holds). The comprehensions of a stepped loop (`loop "t" along %t`) share
one `scf.for` over the steps, each nesting its other indices inside it in order.
When a statement reads the tensor it writes other than pointwise, the tensor
is first copied so that the whole right-hand side sees the old values, as
TC's semantics require. Temporaries become `memref.alloc`/`memref.dealloc`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.diagnostics import anchored
from tcir.dialects.tc import ComprehensionOp, DefOp
from tcir.lowering.affine_to_arith import index_constant
from tcir.lowering.def_function import DefFunction, DefLowering, NestBody
from tcir.lowering.def_function import build_nest as _build_nest
from tcir.lowering.tc_point import PointLowering, identity, reduction_of
from tcir.polyhedral.guards import identity_guard


@dataclass
class CanonicalLowering:
    """Emits the canonical loop nests of comprehensions into a function."""

    lowering: DefLowering

    def steps(self, comps: list[ComprehensionOp]) -> None:
        """Emit one loop over the steps of a stepped loop's comprehensions,
        each at its step index's lower bound plus the step inside it."""
        first = comps[0]
        assert first.step_index is not None
        lo, hi = self.lowering.bounds(first)[first.step_index.index]
        outer = self.lowering.builder
        trip = outer.insert(arith.SubiOp(hi, lo)).result

        def step(b: Builder, ivs: Sequence[SSAValue]) -> None:
            self.lowering.builder = b
            for comp in comps:
                freed = self.comprehension(comp, ivs[0])
                assert not freed, "a loop's comprehension reads its tensor pointwise or at an earlier step"

        _build_nest(outer, [(index_constant(outer, 0), trip)], [first.loop.data if first.loop else None], step)
        self.lowering.builder = outer

    def comprehension(self, comp: ComprehensionOp, step: SSAValue | None = None) -> list[SSAValue]:
        """Emit the loops of `comp` (at `step` of its loop, if given); returns
        buffers to free at the end."""
        lhs_type = comp.lhs_type
        buffer = self.lowering.point.values[comp.lhs]
        bounds = self.lowering.bounds(comp)
        names = [arg.name_hint for arg in comp.indices]
        rank = nested = lhs_type.rank  # left-hand side indices, those the nests loop over
        if step is not None:  # the step index is fixed: a nest over the others
            assert comp.step_index is not None
            k = comp.step_index.index
            value = self.lowering.builder.insert(arith.AddiOp(bounds[k][0], step)).result
            bounds, names = bounds[:k] + bounds[k + 1 :], names[:k] + names[k + 1 :]
            nested -= 1
            build_nest = _fixing(k, value)
        else:
            build_nest = _build_nest
        reduction = reduction_of(comp.kind.data)
        scatter = comp.yield_op.subscripts is not None
        if comp.kind.data.endswith("!"):
            assert reduction is not None
            neutral = identity(reduction, lhs_type.element_type)

            def init(b: Builder, ivs: Sequence[SSAValue]) -> None:
                value = b.insert(arith.ConstantOp(neutral)).result
                b.insert(memref.StoreOp.get(value, buffer, ivs))

            if scatter:
                _build_nest(self.lowering.builder, self.lowering.tensor_bounds(lhs_type), [None] * rank, init)
            else:
                build_nest(self.lowering.builder, bounds[:nested], names[:nested], init)
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
                guard = identity_guard(value, reduction) if reduction else None
                if guard is not None:  # where the guard fails it adds nothing: it writes nothing
                    then = Block()
                    b.insert(scf.IfOp(guard, [], Region(then)))
                    b = Builder(InsertPoint.at_end(then))
                    b.insert(scf.YieldOp())
                    b = Builder(InsertPoint.before(then.last_op))  # pyright: ignore[reportArgumentType]
                element = point.subscripts(b, end.map.data.results, end.subscript_operands, end.symbol_names)  # pyright: ignore
            point.store(b, buffer, lhs_type.element_type, kind, value, element)

        build_nest(self.lowering.builder, bounds, names, update)
        return freed


def _fixing(position: int, value: SSAValue) -> Callable[..., None]:
    """`build_nest` over all indices but the one at `position`, which the
    body gets as `value`."""

    def build(builder: Builder, bounds: Sequence[tuple[SSAValue, SSAValue]], names: Sequence[str | None], body: NestBody) -> None:
        def inner(b: Builder, ivs: Sequence[SSAValue]) -> None:
            body(b, [*ivs[:position], value, *ivs[position:]])

        _build_nest(builder, bounds, names, inner)

    return build


def lower_def(definition: DefOp) -> func.FuncOp:
    """The canonical loop nest function of `definition`."""
    function = DefFunction.start(definition)
    canonical = CanonicalLowering(function.lowering)
    freed: list[SSAValue] = []
    for item in definition.statements():
        if isinstance(item, list):
            canonical.steps(item)
        else:
            freed += canonical.comprehension(item)
    return function.finish(freed)


@dataclass(frozen=True)
class ConvertTcToLoopsPass(ModulePass):
    """Replace every `tc.def` by its canonical loop nest `func.func`."""

    name = "convert-tc-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for definition in anchored([d for d in op.walk() if isinstance(d, DefOp)]):
            Rewriter.replace_op(definition, lower_def(definition))



