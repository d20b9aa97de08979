"""Derived gradients (reverse-mode differentiation of TC, `Function.gradient`).

`torch.autograd.gradcheck` in float64 through each operator's derived
backward def, none written by hand: every `examples/*.tc` def with
floating-point inputs (softmax, layernorm and attention among them), and
conv2d padded by guards (strided too: its input gradient is a scatter
under the guard), overlapping max pooling and an embedding bag. Then the backward's TC source, the tie rule of max/min, and the
`TCError`s of what cannot be differentiated.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcir  # noqa: E402
import tcir.torch  # noqa: E402
from tcir.runtime.inputs import random_inputs  # noqa: E402
from tcir.runtime.signature import bind  # noqa: E402

EXAMPLES = Path(__file__).parents[2] / "examples"

LAYERS = """
def conv2d_pad(float(B,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {
  O(b,f,h,w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W)
                 ? I(b,c,h + kh - 1,w + kw - 1) * Wt(f,c,kh,kw) : 0.0
    where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW
}
def conv2d_stride2_pad(float(B,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {
  O(b,f,h,w) +=! (2 * h + kh >= 1 && 2 * h + kh <= H && 2 * w + kw >= 1 && 2 * w + kw <= W)
                 ? I(b,c,2 * h + kh - 1,2 * w + kw - 1) * Wt(f,c,kh,kw) : 0.0
    where h in 0:(H + 1) / 2, w in 0:(W + 1) / 2, kh in 0:KH, kw in 0:KW
}
def maxpool3x3(float(B,C,H,W) I) -> (O) {
  O(b,c,h,w) max=! I(b,c,h + kh,w + kw) where kh in 0:3, kw in 0:3
}
def embedding_bag(float(E,D) T, int(B,L) Idx, float(B,L) Wt) -> (O) {
  O(b,d) +=! T(Idx(b,l), d) * Wt(b,l)
}
"""

SIZES = {
    "1LUT": {"E1": 5, "D": 3, "B": 2, "L1": 4},
    "2LUT": {"E1": 5, "D": 3, "B": 2, "L1": 4, "E2": 4, "L2": 3},
    "C3": {"B": 3, "WX": 4, "WY": 2},
    "MLP1": {"B": 3, "M": 4, "N": 2},
    "MLP3": {"B": 2, "N": 3, "O": 4, "P": 3, "Q": 2},
    "conv1d": {"M": 6, "N": 3},
    "conv2d": {"B": 2, "IP": 2, "H": 4, "W": 5, "OP": 2, "KH": 2, "KW": 3},
    "fcrelu": {"B": 3, "I": 4, "O": 2},
    "gather": {"N": 5, "A": 2, "B": 3},
    "gconv": {"N": 1, "G": 2, "C": 2, "H": 4, "W": 4, "F": 2, "KH": 2, "KW": 2},
    "maxpool2x2": {"B": 1, "C": 2, "H": 4, "W": 5},
    "mv": {"M": 3, "K": 4},
    "outerProductMM": {"P": 2, "Q": 2, "R": 3, "S": 2, "T": 2},
    "rowsum": {"B": 3, "K": 4},
    "sconv2d": {"sh": 2, "sw": 1, "N": 1, "C": 2, "H": 5, "W": 4, "F": 2, "KH": 2, "KW": 2},
    "sgemm": {"N": 2, "M": 3, "K": 2},
    "tbmm": {"B": 2, "N": 2, "M": 3, "K": 2},
    "tmm": {"M": 2, "K": 3, "N": 4},
    "softmax": {"B": 3, "N": 4},
    "log_softmax": {"B": 2, "N": 4},
    "layernorm": {"B": 2, "N": 4},
    "rmsnorm": {"B": 2, "N": 3},
    "colsum": {"B": 3, "N": 2},
    "attention": {"B": 1, "L": 3, "D": 2},
    "conv2d_pad": {"B": 1, "C": 2, "H": 3, "W": 4, "F": 2, "KH": 3, "KW": 3},
    "conv2d_stride2_pad": {"B": 1, "C": 2, "H": 5, "W": 4, "F": 2, "KH": 3, "KW": 3},
    "maxpool3x3": {"B": 1, "C": 1, "H": 5, "W": 4},
    "embedding_bag": {"E": 4, "D": 3, "B": 2, "L": 3},
}


def _functions() -> dict[str, tcir.api.Function]:
    functions = {}
    for path in sorted(EXAMPLES.glob("*.tc")):
        module = tcir.define(path.read_text(), path.name)
        functions.update((name, module[name]) for name in module.names)
    layers = tcir.define(LAYERS, "layers.tc")
    functions.update((name, layers[name]) for name in layers.names)
    return functions


FUNCTIONS = _functions()
DIFFERENTIABLE = [
    name
    for name, function in FUNCTIONS.items()
    if any(not p.is_scalar and p.dtype.startswith("float") for p in function.definition.inputs)
]


def test_every_example_with_float_inputs_is_covered():
    assert set(DIFFERENTIABLE) == set(SIZES)


def torch_inputs(function: tcir.api.Function, sizes: dict[str, int]) -> list:
    """Random inputs (valid index tensors), floats as float64 leaves that require grad."""
    inputs = []
    for param, value in zip(function.definition.inputs, random_inputs(function.definition, sizes, seed=1)):
        if param.is_scalar:
            inputs.append(value)
        elif param.dtype.startswith("float"):
            inputs.append(torch.tensor(value, dtype=torch.float64, requires_grad=True))
        else:
            inputs.append(torch.tensor(value))
    return inputs


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradcheck_through_the_derived_backward(name):
    function = FUNCTIONS[name]
    op = tcir.torch.operator(function, name=f"derived_{name}")  # float32 defs serve float64 calls
    inputs = torch_inputs(function, SIZES[name])
    assert torch.autograd.gradcheck(lambda *args: op(*args), tuple(inputs))


def test_tmm_gradient_is_readable_tc():
    assert FUNCTIONS["tmm"].gradient() == (
        "def tmm_grad(float(M, K) A, float(N, K) B, float(M, N) d_C) -> (float(M, K) d_A, float(N, K) d_B) {\n"
        "  d_A(m, kk) +=! d_C(m, n) * B(n, kk)\n"
        "  d_B(n, kk) +=! d_C(m, n) * A(m, kk)\n"
        "}\n"
    )


def test_shifted_reads_in_sums_read_a_padded_adjoint():
    """conv1d's `I(i + x)`: its adjoint sums over the output at `i - x`,
    which runs past the output's range; the sum reads a copy of d_O padded
    with zeros instead of guarding every term (a gather over d_I's
    elements, no scatter, no guard inside the reduction)."""
    source = FUNCTIONS["conv1d"].gradient()
    assert "d_O_pad(i0) = i0 >= N - 1 && i0 < M ? d_O(i0 - N + 1) : 0.0 where i0 in 0:M + N - 1" in source
    assert "d_I(i) +=! d_O_pad(N + i - x - 1) * K(x) where i in 0:M, x in 0:N" in source
    assert "d_K(x) +=! d_O(i) * I(i + x)" in source


def test_guarded_reads_in_sums_read_a_padded_copy():
    """A padded convolution's filters' gradient sums `d_O` times the
    guarded image read: it reads a copy of the image padded with zeros
    instead, so no guard is left in its sum (a convolution's filter
    gradient like the unpadded one's)."""
    source = FUNCTIONS["conv2d_pad"].gradient()
    assert (
        "  I_pad(i0, i1, i2, i3) = i3 >= 1 && i3 < W + 1 && i2 >= 1 && i2 < H + 1 ? I(i0, i1, i2 - 1, i3 - 1) : 0.0"
        " where i2 in 0:H + KH - 1, i3 in 0:KW + W - 1\n"
    ) in source
    assert "d_Wt(f, c, kh, kw) +=! d_O(b, f, h, w) * I_pad(b, c, h + kh, kw + w) where" in source


def test_shifted_reads_outside_sums_are_guarded():
    """A shift with no sum (`O(i) = I(i + 1)`) keeps its guard: a padded
    copy would be one more pass over the tensor for nothing."""
    source = tcir.define("def shift(float(N) I) -> (O) { O(i) = I(i + 1) where i in 0:N - 1 }").shift.gradient()
    assert "d_I(i) = i - 1 >= 0 ? d_O(i - 1) : 0.0 where i in 0:N" in source


GUARDED_SUMS = {
    "either": "def either(float(N) I, float(K) W) -> (O) {\n"
    "  O(i) +=! W(k) * ((i + k >= 1 || i > 2) && i + k <= N ? I(i + k - 1) : 0.0) where i in 0:N, k in 0:K\n}",
    "both_ways": "def both_ways(float(N) I, float(K) W) -> (O) {\n"
    "  O(i) +=! W(k) * (i + k >= 1 && i + k <= N ? I(i + k - 1) : 0.0) + W(k) * (i - k >= 0 ? I(i - k) : 0.0)"
    " where i in 0:N, k in 0:K\n}",
    "one_axis": "def one_axis(float(N,M) I, float(K) W) -> (O) {\n"
    "  O(i,j) +=! W(k) * (i + k >= 1 && i + k <= N && j >= 1 ? I(i + k - 1, j - 1) : 0.0)"
    " where i in 0:N, j in 0:M, k in 0:K\n}",
    "not_zero": "def not_zero(float(N) I, float(K) W) -> (O) {\n"
    "  O(i) +=! W(k) * (i + k < N ? I(i + k) : 1.0) where i in 0:N, k in 0:K\n}",
}
"""Guards in sums that the padded copies must keep, drop or leave alone: a
disjunction (kept), two guarded reads of one tensor (two copies), a guard
on an unshifted index (kept in the input's gradient), an else that is not 0."""


@pytest.mark.parametrize("name", GUARDED_SUMS)
def test_gradcheck_of_guarded_sums(name):
    function = tcir.define(GUARDED_SUMS[name])[name]
    op = tcir.torch.operator(function, name=f"guarded_{name}")
    sizes = {"N": 9, "M": 5, "K": 3} if name == "one_axis" else {"N": 9, "K": 3}
    inputs = torch_inputs(function, sizes)
    assert torch.autograd.gradcheck(lambda *args: op(*args), tuple(inputs))


def test_gathered_and_strided_reads_become_scatters():
    assert "  d_LUT1(I1(i, k), j) +=! d_O1(i, j) where i in 0:B, j in 0:D, k in 0:L1\n" in FUNCTIONS["1LUT"].gradient()
    source = FUNCTIONS["maxpool2x2"].gradient()
    assert "d_in(b, c, 2 * i + kw, 2 * j + kh) +=! " in source
    assert "out_count(b, c, i, j) +=! in(b, c, 2 * i + kw, 2 * j + kh) == out(b, c, i, j) ? 1.0 : 0.0" in source


def test_integer_inputs_get_no_gradient():
    definition = tcir.define(FUNCTIONS["2LUT"].gradient())["2LUT_grad"].definition
    assert [p.name for p in definition.outputs] == ["d_LUT1", "d_LUT2"]


def test_ties_split_the_gradient_evenly():
    """max pooling over equal values: each of a window's 4 points gets a
    quarter; fmaxf(x, 0) at x = 0 passes half."""
    pool = tcir.torch.derived_backward(FUNCTIONS["maxpool2x2"])
    grad = pool(np.ones((1, 1, 4, 4), np.float32), np.full((1, 1, 2, 2), 2.0, np.float32))
    np.testing.assert_array_equal(grad, np.full((1, 1, 4, 4), 0.5, np.float32))
    relu = tcir.define("def relu(float(N) X) -> (Y) { Y(i) = fmaxf(X(i), 0) }").relu
    grad = tcir.torch.derived_backward(relu)(np.array([-1, 0, 2], np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(grad, [0, 0.5, 1])


def test_statements_chain_in_reverse_through_recomputed_values():
    """MLP1's ReLU reads O1 before it: the backward recomputes it (bias,
    then the sum in place) and runs the adjoints from the last statement up."""
    source = FUNCTIONS["MLP1"].gradient()
    lines = source.splitlines()[1:-1]
    assert lines[:2] == ["  O1(b, n) = B1(n) where b in 0:B", "  O1(b, n) += I(b, m) * W1(n, m)"]
    assert lines[-1] == "  d_B1(n) +=! d_O1_1(b, n)"


@pytest.mark.parametrize(
    "source, why",
    [
        ("def f(float(N,M) X) -> (P) { P(i) *=! X(i,j) }", r"reduces with '\*=!'"),
        ("def f(float(N,M) X) -> (O) { O(i) = X(i,0)\n O(i) max= X(i,j) }", "accumulates with 'max='"),
        ("def f(float(N) X) -> (O) { O(i) = X(i)\n O(i) = 0.0 where i in 0:1 }", "writes part of the tensor"),
        ("def f(float(N) X) -> (O) { O(i) = floor(X(i)) }", "'floor' has no derivative"),
    ],
)
def test_what_cannot_be_differentiated_is_named(source, why):
    with pytest.raises(tcir.TCError, match=rf"cannot differentiate 'f': the statement writing 'O|P' at <string>:\d+:\d+ {why}"):
        tcir.define(source).f.gradient()


def test_a_def_without_float_tensor_inputs_has_no_gradient():
    with pytest.raises(tcir.TCError, match="it has no floating-point tensor input"):
        tcir.define("def f(int(N) X) -> (O) { O(i) = X(i) * 2 }").f.gradient()


def test_the_operator_of_a_def_without_a_gradient_runs_forward_and_says_why_in_backward():
    product = tcir.define("def product(float(N,M) X) -> (P) { P(i) *=! X(i,j) }").product
    op = tcir.torch.operator(product, name="derived_product")
    x = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
    result = op(x)
    assert torch.allclose(result, x.prod(1))
    with pytest.raises(tcir.TCError, match=r"reduces with '\*=!'"):
        result.sum().backward()


@pytest.mark.parametrize("name", ["conv2d", "1LUT", "softmax", "maxpool2x2", "attention"])
def test_derived_backward_defs_run_on_the_simulated_gpu(name):
    """The backward's kernels (a gather guarded by the output's range, a
    scatter, recomputed values) on `cuda-sim` against the CPU backend; the
    guarded read of d_out, in bounds only where the guard holds, is read
    only there."""
    backward = tcir.torch.derived_backward(FUNCTIONS[name])
    forward = FUNCTIONS[name].definition
    inputs = random_inputs(forward, SIZES[name], seed=2)
    binding = bind(forward, inputs)
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(binding.shape(forward, p)).astype(np.float32) for p in forward.outputs]
    expected = backward(*inputs, *grads, backend="cpu")
    got = backward(*inputs, *grads, backend="cuda-sim")
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_a_read_in_bounds_only_under_its_guard_and_a_size_check_is_lazy():
    """As the backward's `d_out(h - kh)` under the output's range: the read
    is in bounds where the guard holds once the sizes pass their check, so
    the guard is evaluated first (the simulated GPU faults on a read out of
    bounds)."""
    (definition,) = tcir.frontend.parse("def f(float(N) X, float(M) Y) -> (float(N) O) { O(i) = i < N - 1 ? Y(i) : X(i) where i in 0:N }")
    assert definition.stmts[0].rhs.guarded and definition.size_checks
    f = tcir.define("def f(float(N) X, float(M) Y) -> (float(N) O) { O(i) = i < N - 1 ? Y(i) : X(i) where i in 0:N }").f
    x, y = np.arange(5, dtype=np.float32), -np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(f(x, y, backend="cuda-sim"), [0, -1, -2, -3, 4])
    with pytest.raises(tcir.RangeError, match="subscript 'i' of 'Y' is out of bounds"):
        f(x, y[:3])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients_keep_their_constants(dtype: str):
    """The backward of a half-precision def writes its constants as casts
    (`half(0.5)`: a bare `0.5` is a float, and printing a bfloat16 one as an
    integer made it `0`), and it parses and computes the derivative."""
    import ml_dtypes

    source = tcir.define(f"def root({dtype}(N) I) -> (O) {{ O(i) = sqrt(I(i)) }}").root.gradient()
    assert f"{'half' if dtype == 'float16' else dtype}(0.5)" in source
    backward = tcir.define(source).root_grad
    x = (np.random.default_rng(0).random(16) + 0.5).astype(np.float16 if dtype == "float16" else ml_dtypes.bfloat16)
    got = np.asarray(backward(x, np.ones(16, x.dtype)), np.float64)
    np.testing.assert_allclose(got, 0.5 / np.sqrt(x.astype(np.float64)), rtol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_layernorm_gradient(dtype: str):
    """The derived backward of a half layernorm adds a half temporary's f32
    values onto a half output (`d_X(b, n) += d_mean(b) * ...`):
    `tc-widen-half-precision` rounds what it yields there (it yielded f32
    into the half tensor, an error of the pass before). Within the type's
    precision of the float64 gradient, on the CPU and the simulated GPU."""
    import ml_dtypes

    element = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    forward = FUNCTIONS["layernorm"]
    exact = tcir.define(forward.astype("float64").gradient())["layernorm_grad"]
    half = tcir.define(forward.astype(dtype).gradient())["layernorm_grad"]
    inputs = [x.astype(element) for x in random_inputs(forward.definition, SIZES["layernorm"], seed=2)]
    d_y = np.random.default_rng(3).standard_normal((2, 4)).astype(element)
    expected = exact(*(x.astype(np.float64) for x in inputs), d_y.astype(np.float64), backend="cpu")
    for backend in ("cpu", "cuda-sim"):
        got = half(*inputs, d_y, backend=backend)
        for g, e in zip(got, expected):
            tolerance = 8 * float(ml_dtypes.finfo(element).eps) * max(np.abs(e).max(), 1.0)
            assert np.abs(np.asarray(g, np.float64) - e).max() <= tolerance
