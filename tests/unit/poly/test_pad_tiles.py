"""Statement domains padded to whole tiles (`tcir.polyhedral.padding`,
`poly-pad-tiles`, `MappingOptions.pad_tiles`): what is padded, what is
left, and the numbers through every path the padding touches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tcir
from tcir.compiler.defaults import default_options
from tcir.compiler.options import MappingOptions
from tcir.compiler.tile_padding import pads_cheaply
from tcir.passmanager import PassManager, parse_ir
from tcir.polyhedral.padding import padded_domains
from tcir.polyhedral.scop import module_scops
from tcir.runtime.signature import bind

SOURCE = """
def nn(float(M,K) A, float(K,N) B) -> (C) {
  C(m,n) +=! A(m,kk) * B(kk,n)
}
def nt_bias(float(M,K) A, float(N,K) B, float(N) bias) -> (C) {
  C(m,n) = bias(n)
  C(m,n) += A(m,kk) * B(n,kk)
}
def linear_relu(float(M,K) A, float(N,K) W, float(N) bias) -> (C) {
  C(m,n) +=! A(m,kk) * W(n,kk)
  C(m,n) = fmaxf(C(m,n) + bias(n), 0.0)
}
def gather(float(R,D) E, int32(B) I) -> (O) {
  O(b,d) = E(I(b),d)
}
def guarded(float(H) X) -> (Y) {
  Y(h) = h >= 1 ? X(h - 1) : 0.0
}
"""


def _scop(name: str, *args: np.ndarray):
    """`name`'s scheduled scop for arguments of the shapes of `args`."""
    text = tcir.define(SOURCE)[name].ir(*args, backend="cpu", until="poly-schedule", options=MappingOptions(tile=[8]))
    return next(module_scops(parse_ir(text)))


def _zeros(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


def test_output_indices_padded_to_the_next_tile_reduction_left():
    domains = padded_domains(_scop("nn", _zeros(100, 70), _zeros(70, 90)), [32, 32, 16])
    assert set(domains) == {"S0", "S1"}
    assert domains["S1"].to_str() == "{ S1[m, n, kk] : 0 <= m <= 127 and 0 <= n <= 95 and 0 <= kk <= 69 }"


def test_nothing_padded_where_the_tiles_divide_or_access_is_not_affine_or_guarded():
    assert padded_domains(_scop("nn", _zeros(96, 70), _zeros(70, 64)), [32, 32, 16]) == {}
    assert padded_domains(_scop("gather", _zeros(50, 30), _zeros(20, dtype=np.int32)), [16, 16]) == {}
    assert padded_domains(_scop("guarded", _zeros(50)), [16]) == {}


def test_pass_options_are_checked():
    with pytest.raises(tcir.TCError, match="poly-pad-tiles: sizes must be positive"):
        PassManager.parse("poly-pad-tiles{sizes=0}")


def test_pipeline_pads_before_tiling():
    passes = MappingOptions(tile=[64, 64, 32], pad_tiles=True).schedule_passes()
    assert passes[2:4] == ["poly-pad-tiles{sizes=64,64,32}", "poly-tile{sizes=64,64,32}"]
    assert "poly-pad-tiles" not in ",".join(MappingOptions(pad_tiles=True).schedule_passes())  # nothing to pad to


MAPPINGS = [
    dict(tile=[32, 32, 16], threads=[16, 8], max_private_elements=16, vector_width=4, copy_vector_width=4),
    dict(tile=[32, 32, 16], threads=[16, 8], max_private_elements=16, num_stages=3, async_copies=True),
    dict(tile=[32, 32, 16], threads=[16, 8], split_k=2),
    dict(tile=[32, 16, 16], threads=[16, 8], use_shared_memory=False, use_private_memory=False),
]


@pytest.mark.parametrize("backend", ["cuda-sim", "cpu"])
@pytest.mark.parametrize("fields", MAPPINGS)
def test_padded_kernels_compute_the_reference(backend, fields):
    """Copies clamped (vector groups, cp.async, registers), write-backs
    clipped (atomic ones of split-K too), unpromoted reads clamped and
    updates guarded; on the CPU, the same statements in loops."""
    mod = tcir.define(SOURCE)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 40), dtype=np.float32)
    b = rng.standard_normal((40, 45), dtype=np.float32)
    bias = rng.standard_normal(45, dtype=np.float32)
    options = MappingOptions(**fields, pad_tiles=True)
    for columns in (44, 45):  # B's rows whole groups of 4 (clamped a group at a time, float4 copies) or not
        np.testing.assert_allclose(
            mod.nn(a, b[:, :columns].copy(), backend=backend, options=options), a @ b[:, :columns], rtol=1e-4, atol=1e-4
        )
    bt = np.ascontiguousarray(b.T)
    out = mod.nt_bias(a, bt, bias, backend=backend, options=options)
    np.testing.assert_allclose(out, a @ b + bias, rtol=1e-4, atol=1e-4)
    # A ReLU reading what the sum wrote: clipped, not clamped (no race on the simulated GPU).
    out = mod.linear_relu(a, bt, bias, backend=backend, options=options)
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)


def test_defaults_pad_where_it_adds_little():
    assert pads_cheaply([1000, 1000], [64, 64])  # 1024^2: 5% more
    assert not pads_cheaply([197, 3072], [64, 64])  # 256 rows: 30% more
    assert not pads_cheaply([112], [64])  # a stem's 112 columns on 64: 14% more
    assert not pads_cheaply([1024, 96], [64, 128])  # whole tiles, or one tile
    mm = tcir.define(SOURCE).nn.definition
    a, b = _zeros(1000, 1000), _zeros(1000, 1000)
    assert default_options(mm, bind(mm, (a, b))).pad_tiles
    assert not default_options(mm, bind(mm, (_zeros(1024, 1000), _zeros(1000, 1024)))).pad_tiles


def test_padded_sums_stay_off_mma_where_their_fragments_would_pass_the_shapes():
    """C's fragments of TF32 `mma.sync` in global memory (no register tile)
    would be loaded past its 32 columns, padded to 48: the sum stays scalar."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 40), dtype=np.float32)
    b = rng.standard_normal((40, 32), dtype=np.float32)
    options = MappingOptions(
        tile=[64, 24, 32], threads=[4, 8], warps=[1, 4], allow_tf32=True, use_private_memory=False, pad_tiles=True
    )
    out = tcir.define(SOURCE).nn(a, b, backend="cuda-sim", options=options)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_tf32_defaults_pad_ragged_outputs_onto_wgmma():
    """With `allow_tf32`, a ragged output whose k tiles are whole takes the
    `wgmma` tiles padded (1000 rows on 128); padded, the warpgroups'
    fragments come from clamped shared copies and their accumulators are
    stored clipped."""
    nt = tcir.define(SOURCE).nt_bias.definition
    options = default_options(nt, bind(nt, (_zeros(1000, 1024), _zeros(1000, 1024), _zeros(1000))), allow_tf32=True)
    assert options.warpgroup_mma and options.pad_tiles and options.tile == [64, 32, 32]
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (200, 64)).astype(np.float32)  # small integers: exact in TF32
    b = rng.integers(-3, 4, (150, 64)).astype(np.float32)
    bias = np.zeros(150, np.float32)
    wgmma = dataclasses.replace(options, tile=[128, 128, 32], warps=[1, 8], max_shared_memory=131072)
    ir = tcir.define(SOURCE).nt_bias.ir(a, b, bias, backend="cuda", options=wgmma)
    assert "wgmma" in ir
    out = tcir.define(SOURCE).nt_bias(a, b, bias, backend="cuda-sim", options=wgmma)
    np.testing.assert_allclose(out, a @ b.T, rtol=0, atol=0)
