"""No tracebacks: every case of issue "Tracebacks and silent acceptance" is
a TCError (an IRError at the op, for IR) with one line naming the pass or op.

The same messages reach `tcir-opt` users (tests/filecheck/poly/*-invalid.mlir,
tests/filecheck/tools/tcir-opt-driver.mlir)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.passes import ModulePass

import tcir
from tcir.diagnostics import OpError, anchored

COPY = """
tc.def @copy(%A: !tc.tensor<f32, [N]>) -> (%B: !tc.tensor<f32, [N]>) {
  tc.comprehension %B[%i] "=" (%i in [0, N)) {
    %0 = tc.read %A[%i]
    tc.yield %0 : f32
  }
}
"""
MAPPED = 'tc-specialize{sizes="N=8"},convert-tc-to-poly,poly-schedule,poly-map-to-gpu{blocks=2 threads=4}'


def run(pipeline: str, text: str = COPY):
    return tcir.PassManager.parse(pipeline).run(tcir.parse_ir(text, "copy.mlir"))


def one_line_error(excinfo: pytest.ExceptionInfo) -> str:
    message = excinfo.value.message
    assert "\n" not in message and "Traceback" not in str(excinfo.value)
    return message


@pytest.mark.parametrize(
    "after, message",
    [
        ("convert-poly-to-loops", "convert-poly-to-loops: the schedule of @copy is already mapped to the GPU"),
        ("poly-map-to-gpu", "poly-map-to-gpu: the schedule of @copy is already mapped to the GPU"),
    ],
)
def test_mapped_ir_is_refused_not_an_isl_traceback(after, message):
    with pytest.raises(tcir.IRError) as excinfo:
        run(f"{MAPPED},{after}")
    assert one_line_error(excinfo).startswith(message)
    assert isinstance(excinfo.value, OpError) and excinfo.value.op.name == "poly.scop"
    assert str(excinfo.value.loc) == "copy.mlir:2:1"  # the scop a pass created is at its def


@pytest.mark.parametrize(
    "pipeline, message",
    [
        (
            "tc-specialize{sizes=M=128}",
            "tc-specialize: malformed pass arguments, expected either a space or `}` here at column 22 "
            "of pipeline 'tc-specialize{sizes=M=128}' (quote a value that holds '=': sizes=\"...\")",
        ),
        ("poly-tile{sizes=a}", "poly-tile: option 'sizes' expects a list of integers (tuple[int, ...]), got 'a'"),
        ("poly-tile{sizs=32}", "poly-tile: unknown option 'sizs' (did you mean 'sizes'?)"),
        ("poly-tile{sizes=0}", "poly-tile: sizes must be positive (1 leaves a member untiled), got [0]"),
        ("poly-tile{}", "poly-tile: option 'sizes' (a list of integers) is required"),
        ("poly-unroll{factor=true}", "poly-unroll: option 'factor' expects an integer (int), got 'true'"),
        ("poly-schedule{allow-skewing=2}", "poly-schedule: option 'allow-skewing' expects true or false (bool), got '2'"),
        ("poly-map-to-gpu{threads=64,32}", "poly-map-to-gpu: 2048 threads per block exceeds 1024"),
        ("no-such-pass", "unknown pass 'no-such-pass'"),
        ("poly-tiles", "unknown pass 'poly-tiles' (did you mean 'poly-tile'?)"),
    ],
)
def test_pipeline_and_option_errors_name_pass_option_and_type(pipeline, message):
    with pytest.raises(tcir.TCError) as excinfo:
        tcir.PassManager.parse(pipeline)
    assert one_line_error(excinfo) == message


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ('tc-specialize{sizes="Q=4"}', "tc-specialize: no tc.def has a size named 'Q' (sizes: N)"),
        ("poly-tile{sizes=4}", "poly-tile: no poly.scop in the module: run convert-tc-to-poly first"),
        ("poly-schedule", "poly-schedule: no poly.scop in the module: run convert-tc-to-poly first"),
        ("convert-poly-to-loops", "convert-poly-to-loops: no poly.scop in the module: run convert-tc-to-poly first"),
    ],
)
def test_passes_that_would_do_nothing_say_why(pipeline, message):
    with pytest.raises(tcir.IRError) as excinfo:
        run(pipeline)
    assert one_line_error(excinfo) == message
    assert str(excinfo.value.loc) == "copy.mlir:2:1"


SCOP = """
poly.scop @s params [] context "{ : }" {
  poly.stmt @S0 domain "{ S0[i] : 0 <= i <= 3 }" reads "{ }" writes "{ }" {
  ^bb0(%i: index):
  }
  TREE
}
"""


@pytest.mark.parametrize(
    "tree, message",
    [
        (
            'poly.domain "{ S0[i] : 0 <= i <= 99 }"',
            "'poly.domain' op domain \"{ S0[i] : 0 <= i <= 99 }\" differs from the union of the statements' domains",
        ),
        (
            'poly.domain "{ S0[i] : 0 <= i <= 3 }" {\n poly.filter "{ S9[i] }"\n }',
            "'poly.filter' op filter \"{ S9[i] }\" names S9",
        ),
    ],
)
def test_schedules_that_lose_or_invent_instances_do_not_verify(tree, message):
    with pytest.raises(tcir.IRError, match=r"^s.mlir:\d+:\d+: error: " + message.replace("(", r"\(").replace("[", r"\[")):
        tcir.parse_ir(SCOP.replace("TREE", tree), "s.mlir")


def test_an_exception_escaping_a_pass_is_one_line_at_the_op_it_worked_on():
    """isl's errors and a pass's bugs alike: `<pass>: <what>` at the op the
    pass was working on, isl's source file left out, the cause chained."""
    import islpy as isl

    from tcir.dialects.tc import DefOp

    @dataclass(frozen=True)
    class Fails(ModulePass):
        name = "fails"

        def apply(self, ctx, op):
            for _ in anchored(o for o in op.walk() if isinstance(o, DefOp)):
                isl.Set("{ S[i] : 0 <= i }").intersect(isl.Set("{ T[i, j] }"))

    with pytest.raises(tcir.IRError) as excinfo:
        tcir.PassManager([Fails()]).run(tcir.parse_ir(COPY, "copy.mlir"))
    assert one_line_error(excinfo) == "fails: call to isl_set_intersect failed: spaces don't match"
    assert str(excinfo.value.loc) == "copy.mlir:2:1"
    assert isinstance(excinfo.value.__cause__, isl.Error)


def test_the_cuda_target_wants_kernels():
    from io import StringIO

    from tcir.backends.cuda.target import CudaTarget
    from tcir.passmanager import make_context

    with pytest.raises(tcir.TCError, match="target cuda: the module has no gpu.func kernel"):
        CudaTarget().emit(make_context(), tcir.parse_ir(COPY), StringIO())
