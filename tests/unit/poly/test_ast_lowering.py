"""isl AST expressions lowered to `arith` ops (`tcir.polyhedral.ast_to_loops`)."""

import islpy as isl
from xdsl.builder import Builder
from xdsl.dialects import arith, test
from xdsl.dialects.builtin import IndexType, i1
from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from tcir.polyhedral.ast_to_loops import AstLowering


def _lowered(expr: isl.AstExpr) -> tuple[Block, object]:
    block = Block()
    builder = Builder(InsertPoint.at_end(block))
    i = builder.insert(test.TestOp(result_types=[IndexType()])).results[0]
    lowering = AstLowering(point=None, statements={}, ids={"i": i})  # type: ignore[arg-type]
    return block, lowering.expr(builder, expr)


def test_integer_in_a_condition_is_compared_with_zero():
    # isl writes a disjunct that always holds as the integer 1: `(i == 5 || 1)`.
    ctx = isl.Context()
    i = isl.AstExpr.from_id(isl.Id("i", context=ctx))
    condition = i.eq(isl.AstExpr.from_val(isl.Val(5, ctx))).or_(isl.AstExpr.from_val(isl.Val(1, ctx)))
    block, value = _lowered(condition)
    disjunction = [op for op in block.ops if isinstance(op, arith.OrIOp)]
    assert len(disjunction) == 1 and value is disjunction[0].result
    assert [operand.type for operand in disjunction[0].operands] == [i1, i1]
    (one,) = [op for op in block.ops if isinstance(op, arith.CmpiOp) and op.predicate.value.data == 1]  # ne
    assert disjunction[0].rhs is one.result
    for op in block.ops:
        op.verify()
