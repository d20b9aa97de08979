"""End to end: the polyhedral pipeline against the canonical lowering on the CPU JIT.

Each program is specialized to small sizes, lowered once by
`convert-tc-to-loops` (the reference) and once through
`convert-tc-to-poly,poly-schedule{fusion=X},convert-poly-to-loops`; both run on
the same random inputs with NaN-poisoned outputs and must agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness

import tcir
from tcir.backends.cpu.jit import compile_module, function_signatures
from tcir.compiler.lowering import lower_to_llvm_dialect
from tcir.dialects.tc import DefOp, TensorType

MM = """
tc.def @mm(%A: !tc.tensor<f32, [M, K]>, %B: !tc.tensor<f32, [K, N]>) -> (%C: !tc.tensor<f32, [M, N]>) {
  tc.comprehension %C[%m, %n] "+=!" (%m in [0, M), %n in [0, N), %k in [0, K)) {
    %0 = tc.read %A[%m, %k]
    %1 = tc.read %B[%k, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""

SGEMM = """
tc.def @sgemm(%a: f32, %b: f32, %A: !tc.tensor<f32, [N, M]>, %B: !tc.tensor<f32, [M, K]>) -> (%C: !tc.tensor<f32, [N, K]>) {
  tc.comprehension %C[%i, %j] "=" (%i in [0, N), %j in [0, K)) {
    %0 = tc.read %C[%i, %j]
    %1 = arith.mulf %b, %0 : f32
    tc.yield %1 : f32
  }
  tc.comprehension %C[%i, %j] "+=" (%i in [0, N), %j in [0, K), %k in [0, M)) {
    %2 = tc.read %A[%i, %k]
    %3 = tc.read %B[%k, %j]
    %4 = arith.mulf %a, %2 : f32
    %5 = arith.mulf %4, %3 : f32
    tc.yield %5 : f32
  }
}
"""

CONV1D = """
tc.def @conv1d(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [M - N + 1]>, %L: !tc.tensor<f32, [M - N + 1]>) {
  tc.comprehension %O[%i] "+=!" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %K[%x]
    %1 = tc.read %I[%i + %x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %L[%i] "=" (%i in [0, M - N + 1), %x in [0, N)) {
    %0 = tc.read %K[%x]
    %1 = tc.read %I[%i + %x]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""

MAXPOOL = """
tc.def @maxpool2x2(%in: !tc.tensor<f32, [B, C, H, W]>) -> (%out: !tc.tensor<f32, [B, C, (H - 2) floordiv 2 + 1, (W - 2) floordiv 2 + 1]>) {
  tc.comprehension %out[%b, %c, %i, %j] "max=!" (%b in [0, B), %c in [0, C), %i in [0, (H - 2) floordiv 2 + 1), %j in [0, (W - 2) floordiv 2 + 1), %kw in [0, 2), %kh in [0, 2)) where ["kw in 0:2", "kh in 0:2"] {
    %0 = tc.read %in[%b, %c, 2 * %i + %kw, 2 * %j + %kh]
    tc.yield %0 : f32
  }
}
"""

GATHER = """
tc.def @gather(%X: !tc.tensor<f32, [N]>, %I: !tc.tensor<i32, [A, B]>) -> (%Z: !tc.tensor<f32, [A, B]>) {
  tc.comprehension %Z[%i, %j] "=" (%i in [0, A), %j in [0, B)) {
    %0 = tc.read %I[%i, %j]
    %1 = tc.read %X[%0]
    tc.yield %1 : f32
  }
}
"""

MLP3_LAYER = """
  tc.comprehension %{out}[%b, %o] "+=!" (%b in [0, B), %o in [0, {O}), %n in [0, {N})) {{
    %0 = tc.read %{inp}[%b, %n]
    %1 = tc.read %{w}[%o, %n]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }}
  tc.comprehension %{out}[%b, %o] "=" (%b in [0, B), %o in [0, {O})) {{
    %0 = tc.read %{out}[%b, %o]
    %1 = tc.read %{bias}[%o]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }}
  tc.comprehension %{out}[%b, %o] "=" (%b in [0, B), %o in [0, {O})) {{
    %0 = tc.read %{out}[%b, %o]
    %z = arith.constant 0.0 : f32
    %1 = arith.maximumf %0, %z : f32
    tc.yield %1 : f32
  }}
"""

MLP3 = (
    "tc.def @MLP3(%I: !tc.tensor<f32, [B, M]>, %W2: !tc.tensor<f32, [O, M]>, "
    "%B2: !tc.tensor<f32, [O]>, %W3: !tc.tensor<f32, [P, O]>, %B3: !tc.tensor<f32, [P]>, "
    "%W4: !tc.tensor<f32, [Q, P]>, %B4: !tc.tensor<f32, [Q]>) -> (%O2: !tc.tensor<f32, [B, O]>, "
    "%O3: !tc.tensor<f32, [B, P]>, %O4: !tc.tensor<f32, [B, Q]>) {"
    + MLP3_LAYER.format(out="O2", inp="I", w="W2", bias="B2", O="O", N="M")
    + MLP3_LAYER.format(out="O3", inp="O2", w="W3", bias="B3", O="P", N="O")
    + MLP3_LAYER.format(out="O4", inp="O3", w="W4", bias="B4", O="Q", N="P")
    + "}"
)

GCONV = """
tc.def @gconv(%I: !tc.tensor<f32, [N, G, C, H, W]>, %W1: !tc.tensor<f32, [G, F, C, KH, KW]>, %B: !tc.tensor<f32, [G, F]>) -> (%O: !tc.tensor<f32, [N, G, F, H - KH + 1, W - KW + 1]>) {
  tc.comprehension %O[%n, %g, %o, %h, %w] "+=!" (%n in [0, N), %g in [0, G), %o in [0, F), %h in [0, H - KH + 1), %w in [0, W - KW + 1), %i in [0, C), %kh in [0, KH), %kw in [0, KW)) {
    %0 = tc.read %I[%n, %g, %i, %h + %kh, %w + %kw]
    %1 = tc.read %W1[%g, %o, %i, %kh, %kw]
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.comprehension %O[%n, %g, %o, %h, %w] "=" (%n in [0, N), %g in [0, G), %o in [0, F), %h in [0, H - KH + 1), %w in [0, W - KW + 1)) {
    %0 = tc.read %O[%n, %g, %o, %h, %w]
    %1 = tc.read %B[%g, %o]
    %2 = arith.addf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""

KINDS = """
tc.def @kinds(%X: !tc.tensor<f64, [N, M]>) -> (%S: !tc.tensor<f64, [N]>) {
  tc.comprehension %S[%i] "*=!" (%i in [0, N), %j in [0, M)) {
    %1 = tc.read %X[%i, %j]
    tc.yield %1 : f64
  }
  tc.comprehension %S[%i] "*=" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f64
  }
  tc.comprehension %S[%i] "min=" (%i in [0, N), %j in [0, M)) {
    %2 = tc.read %X[%i, %j]
    tc.yield %2 : f64
  }
  tc.comprehension %S[%i] "max=" (%i in [0, N), %j in [0, M)) {
    %4 = tc.read %X[%i, %j]
    tc.yield %4 : f64
  }
  tc.comprehension %S[%i] "+=" (%i in [0, N), %j in [0, M)) {
    %6 = tc.read %X[%i, %j]
    tc.yield %6 : f64
  }
}
"""

MINMAX = """
tc.def @minmax(%X: !tc.tensor<f32, [N, M]>) -> (%L: !tc.tensor<f32, [N]>, %H: !tc.tensor<f32, [M]>) {
  tc.comprehension %L[%i] "min=!" (%i in [0, N), %j in [0, M)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f32
  }
  tc.comprehension %H[%j] "max=!" (%j in [0, M), %i in [0, N)) {
    %0 = tc.read %X[%i, %j]
    tc.yield %0 : f32
  }
}
"""

TEMPS = """
tc.def @temps(%X: !tc.tensor<ui8, [4, 8]>) -> (%s: !tc.tensor<i32, []>, %Y: !tc.tensor<i32, [4]>) {
  %T = tc.alloc : !tc.tensor<i32, [4, 8]>
  tc.comprehension %T[%i, %j] "=" (%i in [0, 4), %j in [0, 8)) {
    %0 = tc.read %X[%i, %j]
    %1 = arith.extui %0 : i8 to i32
    tc.yield %1 : i32
  }
  tc.comprehension %Y[%i] "max=!" (%i in [0, 4), %j in [0, 8)) {
    %2 = tc.read %T[%i, %j]
    tc.yield %2 : i32
  }
  tc.comprehension %s[] "+=!" (%i in [0, 4), %j in [0, 8)) {
    %3 = tc.read %T[%i, %j]
    tc.yield %3 : i32
  }
}
"""

REVERSE = """
tc.def @reverse(%X: !tc.tensor<f32, [N]>) -> (%O: !tc.tensor<f32, [N]>) {
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %X[%i]
    tc.yield %0 : f32
  }
  tc.comprehension %O[%i] "=" (%i in [0, N)) {
    %0 = tc.read %O[%i]
    %1 = tc.read %O[N - 1 - %i]
    %2 = arith.subf %0, %1 : f32
    tc.yield %2 : f32
  }
}
"""

PROGRAMS = {
    "mm": (MM, "M=5,K=7,N=6"),
    "sgemm": (SGEMM, "N=5,M=6,K=4"),
    "conv1d": (CONV1D, "M=9,N=3"),
    "maxpool2x2": (MAXPOOL, "B=2,C=3,H=7,W=8"),
    "gather": (GATHER, "N=10,A=3,B=4"),
    "MLP3": (MLP3, "B=4,M=5,O=6,P=3,Q=2"),
    "gconv": (GCONV, "N=2,G=2,C=3,F=2,H=5,W=6,KH=3,KW=2"),
    "kinds": (KINDS, "N=4,M=3"),
    "minmax": (MINMAX, "N=4,M=5"),
    "temps": (TEMPS, ""),
    "reverse": (REVERSE, "N=7"),
}


def _dtype(element: object) -> np.dtype:
    if isinstance(element, AnyFloat):
        return np.dtype({16: np.float16, 32: np.float32, 64: np.float64}[element.bitwidth])
    assert isinstance(element, IntegerType)
    unsigned = element.signedness.data == Signedness.UNSIGNED
    return np.dtype(f"{'u' if unsigned else ''}int{element.width.data}")


def _arguments(definition: DefOp, rng: np.random.Generator) -> list[object]:
    """Random inputs (indices of `gather` within range), poisoned outputs."""
    values: list[object] = []
    for k, arg in enumerate(definition.body.block.args):
        if not isinstance(arg.type, TensorType):
            values.append(float(rng.standard_normal()))
            continue
        shape = arg.type.static_shape()
        assert shape is not None
        dtype = _dtype(arg.type.element_type)
        if k >= definition.num_inputs.data:
            poison = np.nan if dtype.kind == "f" else -12345
            values.append(np.full(shape, poison, dtype))
        elif dtype.kind == "f":
            values.append(rng.standard_normal(shape).astype(dtype))
        else:
            high = 10 if definition.sym_name.data == "gather" else 100
            values.append(rng.integers(0, high, shape).astype(dtype))
    return values


def _run(text: str, name: str, pipeline: str, arguments: list[object]) -> list[object]:
    module = tcir.parse_ir(text)
    tcir.PassManager.parse(pipeline).run(module)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    compile_module(lower_to_llvm_dialect(module), function_signatures(module)).function(name)(*copies)
    return copies


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_poly_pipeline_matches_reference(name: str) -> None:
    text, sizes = PROGRAMS[name]
    specialize = f'tc-specialize{{sizes="{sizes}"}}'
    specialized = tcir.parse_ir(text)
    tcir.PassManager.parse(specialize).run(specialized)
    definition = next(op for op in specialized.walk() if isinstance(op, DefOp))
    arguments = _arguments(definition, np.random.default_rng(0))
    expected = _run(text, name, f"{specialize},convert-tc-to-loops", arguments)
    for fusion in ("min", "max", "preserve3", "outer"):
        pipeline = (
            f"{specialize},convert-tc-to-poly,poly-schedule{{fusion={fusion}}},"
            "convert-poly-to-loops"
        )
        actual = _run(text, name, pipeline, arguments)
        for got, want in zip(actual, expected):
            np.testing.assert_allclose(
                got, want, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=fusion
            )


@pytest.mark.parametrize("name", ["MLP3", "sgemm"])
def test_skewing_and_negative_coefficients_allowed(name: str) -> None:
    text, sizes = PROGRAMS[name]
    specialize = f'tc-specialize{{sizes="{sizes}"}}'
    specialized = tcir.parse_ir(text)
    tcir.PassManager.parse(specialize).run(specialized)
    definition = next(op for op in specialized.walk() if isinstance(op, DefOp))
    arguments = _arguments(definition, np.random.default_rng(1))
    expected = _run(text, name, f"{specialize},convert-tc-to-loops", arguments)
    options = "fusion=max allow-skewing=true positive-coefficients=false"
    pipeline = f"{specialize},convert-tc-to-poly,poly-schedule{{{options}}},convert-poly-to-loops"
    for got, want in zip(_run(text, name, pipeline, arguments), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
