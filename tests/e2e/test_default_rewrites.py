"""The default GPU mapping's rewrites at random sizes, on the simulated GPU.

A call without options lowers some defs as something other than their
text: a convolution with its channels summed before its taps
(`tcir.frontend.reduction_order`), a sum whose indices go in runs as its
collapsed form over views (`tcir.frontend.collapse`), a temporary that a
contraction writes laid out as its tiles need (`tcir.frontend.temporary_layout`),
and convolutions (3-D ones on the generic rule) and
short or long sums on templates picked by size. The options fuzz draws
explicit options, which map the def as written, so it does not reach
these: here each layer runs at sizes drawn by hypothesis (ragged tiles,
narrow planes, a few or many filters) against numpy in float64.
"""

from __future__ import annotations

from cases import assert_matches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcir
from tcir.runtime.inputs import random_inputs
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind

LAYERS = {
    "nhwc": "def f(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h+kh,w+kw,c) * Wt(f,kh,kw,c) }",
    "nhwc_stride2": (
        "def f(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,2*h+kh,2*w+kw,c) * Wt(f,kh,kw,c) }"
    ),
    "nhwc_pad1": """def f(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) {
      Y(n,h,w,f) +=! (h + kh >= 1 && h + kh <= H && w + kw >= 1 && w + kw <= W)
                     ? X(n,h+kh-1,w+kw-1,c) * Wt(f,kh,kw,c) : 0.0
        where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW
    }""",
    "nchw_stride2": "def f(float(N,C,H,W) X, float(F,C,KH,KW) Wt) -> (Y) { Y(n,f,h,w) +=! X(n,c,2*h+kh,2*w+kw) * Wt(f,c,kh,kw) }",
    "conv1d": "def f(float(B,C,T) X, float(F,C,K) Wt) -> (Y) { Y(b,f,t) +=! X(b,c,t+k) * Wt(f,c,k) }",
    "conv1d_nwc": "def f(float(B,T,C) X, float(F,K,C) Wt) -> (Y) { Y(b,t,f) +=! X(b,t+k,c) * Wt(f,k,c) }",
    "channel_mean_nhwc": "def f(float(N,H,W,C) X) -> (m) { m(c) +=! X(n,h,w,c) / (N*H*W) }",
    "plane_sums": "def f(float(N,C,H,W) X) -> (Y) { Y(n,c) +=! X(n,c,h,w) / (H*W*2) }",
    "projection": "def f(float(B,T,D) X, float(H,E,D) Wt) -> (Q) { Q(b,t,h,e) +=! X(b,t,d) * Wt(h,e,d) }",
    "linear_attention_state": (
        "def f(float(B,H,T,D) K, float(B,H,T,E) V) -> (S) { S(b,h,d,e) +=! K(b,h,t,d) * V(b,h,t,e) }"
    ),
    "short_sum": "def f(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }",
    "conv3d": (
        "def f(float(N,C,D,H,W) X, float(F,C,KD,KH,KW) Wt) -> (Y) { Y(n,f,d,h,w) +=! X(n,c,d+kd,h+kh,w+kw) * Wt(f,c,kd,kh,kw) }"
    ),
    "merged_heads": """def f(float(B,H,L,S) P, float(B,H,S,D) V, float(B,H,L) Z) -> (O) {
      O(b,l,h,d) +=! P(b,h,l,s) * V(b,h,s,d)
      O(b,l,h,d) = O(b,l,h,d) / (1.0 + Z(b,h,l) * Z(b,h,l))
    }""",
    "seq_first_value": "def f(float(B,L,S) P, float(S,B,D) V) -> (O) { O(i,b,d) +=! P(b,i,s) * V(s,b,d) }",
    "attention_merged_heads": """def f(float(B,H,L,D) Q, float(B,H,L,D) K, float(B,H,L,D) V) -> (O) {
      S(b,h,i,j) +=! Q(b,h,i,d) * K(b,h,j,d)
      M(b,h,i) max=! S(b,h,i,j)
      P(b,h,i,j) = exp(S(b,h,i,j) - M(b,h,i))
      Z(b,h,i) +=! P(b,h,i,j)
      O(b,i,h,d) +=! P(b,h,i,j) * V(b,h,j,d)
      O(b,i,h,d) = O(b,i,h,d) / Z(b,h,i)
    }""",
    "bilinear": """def f(float(B,I) X1, float(O,I,J) W, float(B,J) X2) -> (Y) {
      T(b,o,j) +=! X1(b,i) * W(o,i,j)
      Y(b,o) +=! T(b,o,j) * X2(b,j)
    }""",
}


def _sizes(layer: str, draw: st.DrawFn) -> dict[str, int]:
    """Sizes for `layer` whose outputs are not empty; 16 filters or more for
    the convolutions, so that they take the convolution templates."""
    i = lambda lo, hi: draw(st.integers(lo, hi))  # noqa: E731
    if layer.startswith("nhwc"):
        k = i(1, 3)
        return {"N": i(1, 2), "H": i(k, 9), "W": i(k, 40), "C": i(1, 9), "F": i(16, 40), "KH": k, "KW": k}
    if layer == "nchw_stride2":  # planes (under or over 32 columns) and rows of 8-filter threads
        k = i(1, 3)
        return {"N": 1, "C": i(1, 8), "H": i(k, 70), "W": i(k, 90), "F": i(16, 24), "KH": k, "KW": k}
    if layer.startswith("conv1d"):
        k = i(1, 5)
        return {"B": i(1, 2), "C": i(1, 9), "T": i(k, 150), "F": i(16, 40), "K": k}
    if layer == "channel_mean_nhwc":
        return {"N": i(1, 3), "H": i(1, 7), "W": i(1, 9), "C": i(1, 40)}
    if layer == "plane_sums":
        return {"N": i(1, 3), "C": i(1, 9), "H": i(1, 9), "W": i(1, 9)}
    if layer == "projection":
        return {"B": i(1, 3), "T": i(1, 9), "D": i(1, 20), "H": i(1, 4), "E": i(1, 9)}
    if layer == "conv3d":  # the generic rule, 2 filters a block (odd filter counts: a ragged tile)
        k = i(1, 3)
        return {"N": i(1, 2), "C": i(1, 5), "D": i(k, 5), "H": i(k, 12), "W": i(k, 20), "F": i(1, 5), "KD": k, "KH": k, "KW": k}
    if layer == "bilinear":  # the temporary laid out as o, b, j (`tcir.frontend.temporary_layout`)
        return {"B": i(1, 140), "I": i(1, 40), "J": i(1, 70), "O": i(1, 9)}
    if layer == "merged_heads":  # summed through a temporary laid out as b, h, l, d
        return {"B": i(1, 2), "H": i(1, 3), "L": i(1, 140), "S": i(1, 40), "D": i(1, 70)}
    if layer == "attention_merged_heads":  # attention's parts, then the copy into the merged heads
        return {"B": i(1, 2), "H": i(1, 3), "L": i(1, 80), "D": i(1, 40)}
    if layer == "seq_first_value":  # summed through a temporary laid out as b, i, d
        return {"B": i(1, 3), "L": i(1, 140), "S": i(1, 40), "D": i(1, 70)}
    if layer == "linear_attention_state":
        return {"B": i(1, 2), "H": i(1, 2), "T": i(1, 1100), "D": i(1, 70), "E": i(1, 70)}
    return {"M": i(1, 140), "N": i(1, 140), "K": i(1, 40)}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layer=st.sampled_from(sorted(LAYERS)), data=st.data())
def test_default_mapping_at_random_sizes_on_cuda_sim(layer: str, data: st.DataObject):
    fn = tcir.define(LAYERS[layer]).f
    sizes = data.draw(st.composite(lambda draw: _sizes(layer, draw))())
    inputs = random_inputs(fn.definition, sizes, 0)
    expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
    assert_matches(fn(*inputs, backend="cuda-sim"), tuple(expected))
