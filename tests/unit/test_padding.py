"""Guarded reads in sums as reads of zero-padded copies (`tcir.frontend.padding`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcir
from tcir.frontend.padding import padded_reads
from tcir.frontend.linear import from_affine
from tcir.frontend.unparse import expr_text, lin_text

EXAMPLES = Path(__file__).parents[2] / "examples"
CONV = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text())


def _statements(definition) -> list[str]:
    return [f"{s.lhs} {s.op} {expr_text(s.rhs, definition.size_params)}" for s in definition.stmts]


def test_a_padded_convolution_reads_a_zero_padded_image():
    """The guard of a "same" convolution moves into a copy of the image,
    padded by one pixel on every side; the sum reads the copy unguarded."""
    padded = padded_reads(CONV.conv2d_pad1.definition)
    assert _statements(padded) == [
        "I_pad = i3 >= 1 && i3 < W + 1 && i2 >= 1 && i2 < H + 1 ? I(i0, i1, i2 - 1, i3 - 1) : 0.0",
        "O +=! I_pad(n, c, h + kh, kw + w) * Wt(f, c, kh, kw)",
    ]
    copy = padded.tensor("I_pad")
    assert [lin_text(from_affine(d, (), padded.size_params)) for d in copy.dims] == ["N", "C", "H + KH - 1", "KW + W - 1"]
    assert [p.name for p in padded.inputs] == ["I", "Wt"] and [p.name for p in padded.outputs] == ["O"]


STRIDED = """
def conv_s2p1(float(N,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {
  O(n,f,h,w) +=! (2*h + kh >= 1 && 2*h + kh <= H && 2*w + kw >= 1 && 2*w + kw <= W)
                 ? I(n,c,2*h + kh - 1,2*w + kw - 1) * Wt(f,c,kh,kw) : 0.0
    where h in 0:(H + 1) / 2, w in 0:(W + 1) / 2, kh in 0:KH, kw in 0:KW
}
"""


def test_a_strided_padded_convolution_reads_a_zero_padded_image():
    """Stride 2 and padding 1 (ResNet's downsampling): the copy's extent is
    a quotient times 2 (`2 * ((H + 1) / 2)`, written back with its
    parentheses), and the default mapping's parts compute what torch does
    on the simulated GPU at odd sizes."""
    torch = pytest.importorskip("torch")
    fn = tcir.define(STRIDED).conv_s2p1
    padded = padded_reads(fn.definition)
    assert _statements(padded)[1] == "O +=! I_pad(n, c, 2 * h + kh, kw + 2 * w) * Wt(f, c, kh, kw)"
    copy = padded.tensor("I_pad")
    assert lin_text(from_affine(copy.dims[2], (), padded.size_params)) == "KH + 2 * ((H + 1) / 2) - 2"
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 3, 9, 8), np.float32), rng.random((4, 3, 3, 3), np.float32)
    expected = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), stride=2, padding=1).numpy()
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_copies_keep_their_type(dtype: str):
    """A half-precision padded convolution (its products summed in f32)
    copies its image in its own type, and computes torch's numbers on
    cuda-sim (to the type's rounding)."""
    torch = pytest.importorskip("torch")
    fn = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text().replace("float(", f"{dtype}(")).conv2d_pad1
    padded = padded_reads(fn.definition)
    assert padded.tensor("I_pad").dtype == dtype and padded.tensor("O").dtype == fn.definition.tensor("O").dtype
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((2, 3, 6, 7)), dtype=getattr(torch, dtype))
    w = torch.tensor(rng.standard_normal((4, 3, 3, 3)), dtype=getattr(torch, dtype))
    expected = torch.nn.functional.conv2d(x.float(), w.float(), padding=1).numpy()
    got = fn(x, w, backend="cuda-sim")
    np.testing.assert_allclose(np.asarray(torch.as_tensor(got).float()), expected, rtol=2e-2, atol=2e-2)


def test_a_copy_of_a_temporary_comes_after_it():
    """A padded convolution of a temporary (the ReLU of the image): its
    copy goes right after the temporary, and the default mapping's parts
    (the ReLU, the copy, the convolution) give torch's numbers on cuda-sim."""
    torch = pytest.importorskip("torch")
    from tcir.compiler.lowering import default_parts
    from tcir.runtime.signature import Binding

    fn = tcir.define(
        "def relu_conv(float(N,C,H,W) I, float(F,C,KH,KW) Wt) -> (O) {\n"
        "  T(n,c,h,w) = fmaxf(I(n,c,h,w), 0.0)\n"
        "  O(n,f,h,w) +=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)\n"
        "                 ? T(n,c,h + kh - 1,w + kw - 1) * Wt(f,c,kh,kw) : 0.0\n"
        "    where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW\n}"
    ).relu_conv
    assert [s.lhs for s in padded_reads(fn.definition).stmts] == ["T", "T_pad", "O"]
    binding = Binding({"N": 32, "C": 64, "H": 56, "W": 56, "F": 64, "KH": 3, "KW": 3}, ())
    _, parts = default_parts(fn.definition, binding, None, "cuda")
    assert [[s.lhs for s in part.stmts] for part in parts] == [["T"], ["T_pad"], ["O"]]
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 6, 7), np.float32), rng.standard_normal((4, 3, 3, 3), np.float32)
    expected = torch.nn.functional.conv2d(torch.relu(torch.tensor(x)), torch.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "source",
    [
        # the image is read once per point of the sum: a copy gains nothing
        "def depthwise(float(N,C,H,W) I, float(C,KH,KW) Wt) -> (O) {\n"
        "  O(n,c,h,w) +=! (h + kh >= 1 && h + kh <= H) ? I(n,c,h + kh - 1,w + kw) * Wt(c,kh,kw) : 0.0\n"
        "    where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW\n}",
        # the guard bounds no subscript that a summed index shifts
        "def masked(float(N,K) I, float(M,K) Wt) -> (O) {\n  O(n,m) +=! n > 2 ? I(n,k) * Wt(m,k) : 0.0\n}",
        # a guard that holds at every point of the sum: no copy
        "def valid(float(N,K) I, float(M,K) Wt) -> (O) {\n"
        "  O(n,m) +=! (k + 1 >= 1 && k < K) ? I(n,k) * Wt(m,k) : 0.0\n}",
        # a guard outside a sum
        "def shift(float(N) I, float(M) V) -> (O) { O(i,j) = i >= 1 ? I(i - 1) * V(j) : 0.0 where i in 0:N }",
        # not zero where the guard fails
        "def other(float(N) I, float(K) Wt) -> (O) {\n"
        "  O(i,j) +=! i + k >= 1 ? I(i + k - 1) * Wt(k) : 1.0 where i in 0:N, k in 0:K, j in 0:4\n}",
    ],
)
def test_reads_that_stay_guarded(source: str):
    (definition,) = tcir.define(source).definitions
    assert padded_reads(definition) is None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pad=st.integers(0, 3),
    stride=st.integers(1, 3),
    taps=st.integers(1, 5),
    length=st.integers(4, 13),
    channels=st.integers(1, 3),
    filters=st.integers(1, 4),
)
def test_padded_strided_convolutions_compute_what_torch_does(pad, stride, taps, length, channels, filters):
    """1-D convolutions of any padding, stride and width, written with a
    guard as a user would: the default mapping on the simulated GPU (a
    zero-padded copy where the guard qualifies) gives torch's numbers."""
    torch = pytest.importorskip("torch")
    out = (length + 2 * pad - taps) // stride + 1
    if out < 1:
        return
    source = (
        "def c1(float(N,C,L) I, float(F,C,K) Wt) -> (O) {\n"
        f"  O(n,f,l) +=! ({stride} * l + k >= {pad} && {stride} * l + k < L + {pad})"
        f" ? I(n,c,{stride} * l + k - {pad}) * Wt(f,c,k) : 0.0 where l in 0:{out}, k in 0:K\n}}"
    )
    fn = tcir.define(source).c1
    rng = np.random.default_rng(pad + 4 * stride + 16 * taps)
    x = rng.standard_normal((2, channels, length)).astype(np.float32)
    w = rng.standard_normal((filters, channels, taps)).astype(np.float32)
    expected = torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w), stride=stride, padding=pad).numpy()
    np.testing.assert_allclose(fn(x, w, backend="cuda-sim"), expected, rtol=1e-4, atol=1e-4)
