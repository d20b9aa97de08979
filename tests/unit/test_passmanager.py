"""The pass-manager API: parse a pipeline, run it, observe the IR after each pass."""

import pytest

import tcir

SOURCE = """
tc.def @f(%I: !tc.tensor<f32, [M]>) -> (%O: !tc.tensor<f32, [M]>) {
  tc.comprehension %O[%i] "=" (%i in [0, M)) {
    %0 = tc.read %I[%i]
    %1 = arith.addf %0, %0 : f32
    %2 = arith.addf %0, %0 : f32
    %3 = arith.mulf %1, %2 : f32
    tc.yield %3 : f32
  }
}
"""


def test_parse_run_print():
    module = tcir.parse_ir(SOURCE)
    pm = tcir.PassManager.parse("cse,canonicalize", collect_ir=True)
    assert pm.pipeline == "cse,canonicalize"
    pm.run(module)
    text = tcir.print_ir(module)
    assert text.count("arith.addf") == 1
    assert [name for name, _ in pm.ir_after] == ["cse", "canonicalize"]
    assert pm.ir_after[0][1].count("arith.addf") == 1


def test_callback_sees_every_pass():
    seen = []
    pm = tcir.PassManager.parse("cse,dce", callback=lambda name, m: seen.append(name))
    pm.run(tcir.parse_ir(SOURCE))
    assert seen == ["cse", "dce"]


def test_built_from_pass_objects():
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    pm = tcir.PassManager([CommonSubexpressionElimination()])
    module = pm.run(tcir.parse_ir(SOURCE))
    assert tcir.print_ir(module).count("arith.addf") == 1


def test_generic_printing():
    text = tcir.print_ir(tcir.parse_ir(SOURCE), generic=True)
    assert '"tc.def"()' in text


@pytest.mark.parametrize(
    "pipeline, culprit", [("no-such-pass", "no-such-pass"), ("cse{bogus=1}", "bogus")]
)
def test_bad_pipelines_are_tc_errors(pipeline, culprit):
    with pytest.raises(tcir.TCError, match=culprit):
        tcir.PassManager.parse(pipeline)


def test_bad_ir_is_a_tc_error_naming_the_op():
    with pytest.raises(tcir.IRError, match="'tc.read' op expected 1 subscripts"):
        tcir.parse_ir(SOURCE.replace("tc.read %I[%i]", "tc.read %I[%i, %i]"))


def test_syntax_error_has_a_location():
    with pytest.raises(tcir.IRError, match=r"^in.mlir:4:\d+: error: use of undefined value %Z"):
        tcir.parse_ir(SOURCE.replace("tc.read %I", "tc.read %Z"), "in.mlir")


def test_invalid_ir_is_caught_after_its_pass_or_at_the_end():
    """A pass that leaves invalid IR (an `arith.addf` fed an operand of
    another type): with `verify_each` the error names that pass; without, the
    IR is verified once, after the last pass, and the error still comes."""
    from dataclasses import dataclass

    from xdsl.dialects import arith
    from xdsl.dialects.builtin import i32
    from xdsl.passes import ModulePass
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    @dataclass(frozen=True)
    class BreakIR(ModulePass):
        name = "break-ir"

        def apply(self, ctx, op):
            add = next(o for o in op.walk() if isinstance(o, arith.AddfOp))
            constant = arith.ConstantOp.from_int_and_width(1, i32)
            add.parent_block().insert_op_before(constant, add)
            add.operands[1] = constant.result

    for verify_each, culprit in ((True, "break-ir"), (False, "dce")):
        pm = tcir.PassManager([BreakIR(), DeadCodeElimination()], verify_each=verify_each)
        with pytest.raises(tcir.IRError, match=f"^<string>:5:10: error: {culprit}: 'arith.addf' op"):
            pm.run(tcir.parse_ir(SOURCE))
