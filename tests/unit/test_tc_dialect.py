"""The tc dialect built from Python: types, accessors, verifier, round trip."""

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, f32
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineExpr
from xdsl.utils.exceptions import VerifyException

import tcir
from tcir.dialects.tc import AllocOp, ComprehensionOp, DefOp, ReadOp, TensorType, YieldOp

M, N = AffineExpr.symbol(0), AffineExpr.symbol(1)


def build_conv1d() -> DefOp:
    I = TensorType(f32, [M], ["M"])
    K = TensorType(f32, [M], ["N"])
    O = TensorType(f32, [M - N + 1], ["M", "N"])
    definition = DefOp("conv1d", [("I", I), ("K", K)], [("O", O)])
    inp, ker, out = definition.body.block.args
    body = Block(arg_types=[IndexType(), IndexType()])
    i, x = body.args
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    rk = ReadOp(ker, [d0], [x])
    ri = ReadOp(inp, [d0 + d1], [i, x])
    prod = arith.MulfOp(rk, ri)
    body.add_ops([rk, ri, prod, YieldOp(prod.result)])
    ranges = [(AffineExpr.constant(0), M - N + 1), (AffineExpr.constant(0), N)]
    definition.body.block.add_op(
        ComprehensionOp(out, "+=!", ranges, ["M", "N"], Region(body))
    )
    return definition


def test_tensor_type_accessors():
    t = TensorType(f32, [M - N + 1, 4], ["M", "N"])
    assert t.rank == 2
    assert t.dim_text(0) == "M - N + 1"
    assert t.static_shape() is None
    assert TensorType(f32, [128, 32]).static_shape() == (128, 32)
    assert TensorType(IntegerType(8, signedness=tcir_unsigned()), []).scalar_type == IntegerType(8)


def tcir_unsigned():
    from xdsl.dialects.builtin import Signedness

    return Signedness.UNSIGNED


def test_built_def_prints_like_the_paper_and_round_trips():
    definition = build_conv1d()
    definition.verify()
    text = tcir.print_ir(definition)
    assert "-> (%O: !tc.tensor<f32, [M - N + 1]>)" in text
    assert 'tc.comprehension %O[%0] "+=!"' in text
    assert "tc.read %I[%0 + %1]" in text
    reparsed = tcir.parse_ir(text)
    assert tcir.print_ir(reparsed.body.block.first_op) == text


def test_def_accessors():
    definition = build_conv1d()
    assert definition.names == ["I", "K", "O"]
    assert definition.size_names() == ["M", "N"]
    (comp,) = definition.comprehensions()
    assert len(comp.lhs_indices) == 1 and len(comp.reduction_indices) == 1
    assert comp.ranges[1] == (AffineExpr.constant(0), N)


def test_integer_scalar_inputs_are_sizes():
    definition = DefOp(
        "f",
        [("sh", IntegerType(32)), ("a", f32), ("I", TensorType(f32, [M], ["H"]))],
        [("O", TensorType(f32, [M], ["H"]))],
    )
    assert definition.size_names() == ["H", "sh"]


def test_assigning_an_input_is_rejected():
    definition = build_conv1d()
    comp = next(definition.comprehensions())
    comp.operands[0] = definition.inputs[0]
    with pytest.raises(VerifyException, match="cannot assign to input 'I'"):
        definition.verify()


def test_alloc_with_unknown_size_is_rejected():
    definition = build_conv1d()
    definition.body.block.insert_op_before(
        AllocOp(TensorType(f32, [M], ["Q"]), "T"), definition.body.block.first_op
    )
    with pytest.raises(VerifyException, match="unknown size 'Q'"):
        definition.verify()
