"""isl ASTs as `scf`/`arith` loops: the code generation of a scheduled scop.

isl generates an AST from the scop's schedule tree (honouring band AST build
options such as `unroll`); each `for` node becomes an `scf.for` (its upper
bound the `<`/`<=` bound isl gives, with `min`/`max`/divisions as `arith`
index ops), each `if` an `scf.if`, and each user node `S(e0, e1, ...)` the
body of statement `S` inlined at those index values by `PointLowering`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import islpy as isl
from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tcir.dialects.poly import ScopOp, StmtOp
from tcir.ir.loop_hints import UNROLL_HINT
from tcir.lowering.affine_to_arith import index_constant
from tcir.lowering.tc_point import PointLowering
from tcir.polyhedral.scop import scop_context, scop_schedule

Op = isl.ast_expr_op_type
UNROLL_MARK = "unroll"
"""A schedule-tree mark above a band whose loop has a small, fixed trip
count: the loop gets `UNROLL_HINT`."""

_BINARY: dict[Op, Callable[[SSAValue, SSAValue], Operation]] = {
    Op.add: arith.AddiOp,
    Op.sub: arith.SubiOp,
    Op.mul: arith.MuliOp,
    Op.div: arith.DivSIOp,
    Op.fdiv_q: arith.FloorDivSIOp,
    Op.pdiv_q: arith.DivSIOp,
    Op.pdiv_r: arith.RemSIOp,
    Op.zdiv_r: arith.RemSIOp,
    Op.min: arith.MinSIOp,
    Op.max: arith.MaxSIOp,
    Op.and_: arith.AndIOp,
    Op.and_then: arith.AndIOp,
    Op.or_: arith.OrIOp,
    Op.or_else: arith.OrIOp,
}

_LOGICAL = (Op.and_, Op.and_then, Op.or_, Op.or_else)

_COMPARE: dict[Op, str] = {
    Op.eq: "eq",
    Op.lt: "slt",
    Op.le: "sle",
    Op.gt: "sgt",
    Op.ge: "sge",
}


def scop_ast(scop: ScopOp) -> isl.AstNode:
    """isl's AST for the scop's schedule tree, under its context."""
    build = isl.AstBuild.from_context(scop_context(scop))
    return build.node_from_schedule(scop_schedule(scop))


def _condition(builder: Builder, value: SSAValue) -> SSAValue:
    """`value` as an `i1` condition: isl writes a condition that always
    holds as the integer 1 (`(i == 5 || 1)`), an `index` value here."""
    if isinstance(value.type, IndexType):
        zero = index_constant(builder, 0)
        return builder.insert(arith.CmpiOp(value, zero, "ne")).result
    return value


def _body_builder(block: Block) -> Builder:
    """A builder before the `scf.yield` that ends `block`."""
    block.add_op(scf.YieldOp())
    return Builder(InsertPoint.before(block.last_op))  # pyright: ignore[reportArgumentType]


@dataclass
class AstLowering:
    """Lowers isl AST nodes of one scop; `ids` maps AST identifiers (loop
    iterators, parameters) to `index` values."""

    point: PointLowering
    statements: dict[str, StmtOp]
    ids: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    computed: dict[Block, dict[str, SSAValue]] = field(default_factory=dict[Block, dict[str, SSAValue]])
    """By block, the values of the expressions computed in it so far, by their C text."""

    def node(self, builder: Builder, node: isl.AstNode) -> None:
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            for k in range(children.n_ast_node()):
                self.node(builder, children.get_at(k))
        elif kind == isl.ast_node_type.for_:
            self.for_(builder, node)
        elif kind == isl.ast_node_type.if_:
            self.if_(builder, node)
        elif kind == isl.ast_node_type.mark and node.mark_get_id().get_name() == UNROLL_MARK:
            self.hinted(builder, node.mark_get_node())
        elif kind == isl.ast_node_type.mark:
            self.node(builder, node.mark_get_node())
        elif kind == isl.ast_node_type.user:
            self.user(builder, node.user_get_expr())
        else:
            raise ValueError(f"unexpected isl AST node {kind}")

    def hinted(self, builder: Builder, node: isl.AstNode) -> None:
        """`node`, its loops (it, or those of a block it is) with `UNROLL_HINT`:
        the AST of a marked band (isl may peel a statement's first instances
        into a block before the loop)."""
        kind = node.get_type()
        if kind == isl.ast_node_type.for_:
            self.for_(builder, node).attributes[UNROLL_HINT] = UnitAttr()
        elif kind == isl.ast_node_type.block:
            children = node.block_get_children()
            for k in range(children.n_ast_node()):
                self.hinted(builder, children.get_at(k))
        else:
            self.node(builder, node)

    def for_(self, builder: Builder, node: isl.AstNode) -> scf.ForOp:
        iterator = node.for_get_iterator().get_id().get_name()
        cond = node.for_get_cond()
        kind = cond.get_op_type()
        bound_of = cond.get_op_arg(0)
        if (
            kind not in (Op.lt, Op.le)
            or bound_of.get_type() != isl.ast_expr_type.id
            or bound_of.get_id().get_name() != iterator
        ):
            raise ValueError(f"unsupported loop condition {cond.to_C_str()}")
        lower = self.expr(builder, node.for_get_init())
        upper = self.expr(builder, cond.get_op_arg(1))
        if kind == Op.le:
            one = index_constant(builder, 1)
            upper = builder.insert(arith.AddiOp(upper, one)).result
        step = self.expr(builder, node.for_get_inc())
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = iterator
        loop = builder.insert(scf.ForOp(lower, upper, step, [], Region(block)))
        self.ids[iterator] = block.args[0]
        self.node(_body_builder(block), node.for_get_body())
        del self.ids[iterator]
        return loop

    def if_(self, builder: Builder, node: isl.AstNode) -> None:
        cond = _condition(builder, self.expr(builder, node.if_get_cond()))
        then = Block()
        otherwise = Block()
        self.node(_body_builder(then), node.if_get_then_node())
        if node.if_has_else_node():
            self.node(_body_builder(otherwise), node.if_get_else_node())
        else:
            otherwise.add_op(scf.YieldOp())
        builder.insert(scf.IfOp(cond, [], Region(then), Region(otherwise)))

    def user(self, builder: Builder, call: isl.AstExpr) -> None:
        name = call.get_op_arg(0).get_id().get_name()
        indices = [
            self.expr(builder, call.get_op_arg(k)) for k in range(1, call.get_op_n_arg())
        ]
        self.point.clone_point(builder, self.statements[name].body.block, indices)

    def expr(self, builder: Builder, expr: isl.AstExpr) -> SSAValue:
        """An `index` (or `i1`, for conditions) value computing `expr`."""
        kind = expr.get_type()
        if kind == isl.ast_expr_type.id:
            return self.ids[expr.get_id().get_name()]
        computed = self.computed.setdefault(builder.insertion_point.block, {})
        text = expr.to_C_str()
        if text not in computed:
            computed[text] = self._computed(builder, expr)
        return computed[text]

    def _computed(self, builder: Builder, expr: isl.AstExpr) -> SSAValue:
        if expr.get_type() == isl.ast_expr_type.int:
            return index_constant(builder, expr.get_val().to_python())
        op = expr.get_op_type()
        args = [self.expr(builder, expr.get_op_arg(k)) for k in range(expr.get_op_n_arg())]
        if op == Op.minus:
            zero = index_constant(builder, 0)
            return builder.insert(arith.SubiOp(zero, args[0])).result
        if op in (Op.select, Op.cond):
            return builder.insert(arith.SelectOp(_condition(builder, args[0]), *args[1:])).result
        if op in _COMPARE:
            return builder.insert(arith.CmpiOp(args[0], args[1], _COMPARE[op])).result
        if op not in _BINARY:
            raise ValueError(f"unsupported isl AST expression {expr.to_C_str()}")
        if op in _LOGICAL:
            args = [_condition(builder, arg) for arg in args]
        result = args[0]
        for arg in args[1:]:
            result = builder.insert(_BINARY[op](result, arg)).results[0]
        return result
