"""The layer zoo: common layers at common shapes, tcir's default mapping against PyTorch eager.

    python tools/bench_zoo.py [--only matmul,conv2d 32x] [--max-cases N] [--tf32] [--options JSON] [--json zoo.json]
    python tools/bench_zoo.py --dtype float16 [--only ...]  # every case in a half type, eager in that type
    python tools/bench_zoo.py --list                      # the cases, no GPU
    python tools/bench_zoo.py --compile-only [--only ...]  # CUDA C at the real sizes, no GPU

Each case is a layer written as a researcher writes TC (a def of
`examples/zoo/*.tc`, one file per layer family, or of the paper's and the
reductions' `examples/*.tc`) at one shape, with its PyTorch eager peer.
Matmuls in the four layouts (NN, NT, TN, TT) at square, tall-skinny and
short-wide shapes, and a transposed matrix-vector product; batched matmuls
of few large and many tiny matrices; convolutions (3x3, 1x1, strided,
padded by a guard, grouped, depthwise, channels-last, 1-D); pooling;
row-wise reductions (also over a vocabulary), column, row, batch and
per-channel sums (NCHW and channels-last); elementwise chains with
broadcasts and transposes; embeddings; MLP layers; attention, its
projections and linear attention's state.

On the GPU, each case's inputs are made there (cupy), tcir's result is
checked against eager (relative error, float32 with TF32 off; `--tf32`
allows TF32 to both, `MappingOptions(allow_tf32=True)` and torch's flags),
then both are timed in the same run (p50 device time, as `tools/bench.py`
measures it). tcir runs with its default options (`--options JSON`: these
MappingOptions fields) and an empty compilation cache (`--cache-dir` to keep
one), so "compile s" is a first call's: define to first result, in a
process already warm. The table gives tcir's and eager's device time, their
ratio, whether the results agree and the roofline floor (flops and bytes
against the measured peaks), then the geometric mean of the ratios and the
cases above 1.5x. A case that fails to compile or run is a row of the table.

With `--dtype float16` or `bfloat16`, each def's float tensors take that
type (`Function.astype`), torch makes the half inputs (cupy has no
bfloat16) and eager runs in the same type; a result is right where its
error against eager in float64 is at most twice eager's own, as in
`tools/bench.py --dtype`.

`--compile-only` needs no GPU: it lowers every case to CUDA C at its real
sizes (`Function.ir`, numpy inputs that are never touched) and prints the
seconds each took. `tests/e2e/test_zoo_cuda_sim.py` runs every case at its
`small` sizes on the simulated GPU against numpy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bench import check, device_inputs, device_ms, errors64, in_dtype, machine_peaks, wall_ms

try:
    import torch

    F = torch.nn.functional
except ImportError:  # listing and lowering the cases needs no torch
    torch = F = None

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SLOW = 1.5
"""Ratio to eager above which a case counts as slow (issue 35's bar)."""
COMPILE_BUDGET_S = 2.0
"""A first call's compile time that a case should stay under (issue 35's bar)."""


@dataclass(frozen=True)
class Case:
    """A layer at one shape: a def of an `examples/` file and its PyTorch eager peer."""

    name: str
    file: str
    """The TC file, relative to `examples/`."""
    entry: str
    sizes: dict[str, int]
    small: dict[str, int]
    """Sizes of the correctness run on the simulated GPU (CI)."""
    peer: Callable[..., Any]
    """PyTorch eager on the def's inputs as torch tensors (index tensors int32)."""
    flops: float
    moved: float | None = None
    """Bytes a kernel must move at least, where that is not all of its inputs
    and outputs (an embedding reads only the rows it gathers)."""


def _shape(*sizes: int) -> str:
    return "x".join(map(str, sizes))


def _matmuls() -> list[Case]:
    peers = {
        "nn": lambda a, b: a @ b,
        "nt": lambda a, b: a @ b.T,
        "tn": lambda a, b: a.T @ b,
        "tt": lambda a, b: a.T @ b.T,
    }
    square, tall, wide = (2048, 2048, 2048), (8192, 64, 8192), (64, 1024, 16384)
    shapes = [(square, "nn nt tn tt", (130, 96, 68)), ((4096, 4096, 4096), "nn nt", (160, 64, 160)),
              (tall, "nn nt tn tt", (256, 8, 200)), ((16384, 1024, 64), "nn tn", (512, 96, 8)),
              (wide, "nn nt tn tt", (8, 192, 512)), ((32, 4096, 4096), "nt", (9, 600, 45)),
              ((4096, 16, 4096), "nt", (130, 12, 70)), ((1000, 1000, 1000), "nn", (70, 44, 66))]
    out = []
    for (m, k, n), layouts, (sm, sk, sn) in shapes:
        for layout in layouts.split():
            out.append(Case(f"matmul_{layout} {_shape(m, k, n)}", "zoo/matmul.tc", f"matmul_{layout}",
                            {"M": m, "K": k, "N": n}, {"M": sm, "K": sk, "N": sn}, peers[layout], 2 * m * k * n))
    k, n = 8192, 8192
    out.append(Case(f"matvec_t {_shape(k, n)}", "zoo/matmul.tc", "matvec_t", {"K": k, "N": n}, {"K": 300, "N": 70},
                    lambda a, x: x @ a, 2 * k * n))
    return out


def _batch_matmuls() -> list[Case]:
    out = []
    for b, m, k, n, small in [(8, 1024, 1024, 1024, (2, 72, 40, 64)), (64, 256, 256, 256, (4, 40, 24, 36)),
                              (16384, 8, 8, 8, (300, 8, 8, 8)), (4096, 32, 32, 32, (24, 32, 32, 32))]:
        small_sizes = dict(zip("BMKN", small, strict=True))
        sizes = {"B": b, "M": m, "K": k, "N": n}
        flops = 2 * b * m * k * n
        out.append(Case(f"batch_matmul {_shape(b, m, k, n)}", "zoo/batch_matmul.tc", "batch_matmul",
                        sizes, small_sizes, lambda x, y: torch.bmm(x, y), flops))
        out.append(Case(f"batch_matmul_nt {_shape(b, m, k, n)}", "zoo/batch_matmul.tc", "batch_matmul_nt",
                        sizes, small_sizes, lambda x, y: torch.bmm(x, y.transpose(1, 2)), flops))
    return out


def _grouped_conv(i: Any, w: Any) -> Any:
    n, g, c, h, wd = i.shape
    _, f, _, kh, kw = w.shape
    out = F.conv2d(i.reshape(n, g * c, h, wd), w.reshape(g * f, c, kh, kw), groups=g)
    return out.reshape(n, g, f, *out.shape[2:])


def _convolutions() -> list[Case]:
    def conv(entry: str, n: int, c: int, hw: int, f: int, k: int, small: tuple[int, ...], peer: Callable[..., Any],
             stride: int = 1, pad: int = 0) -> Case:
        out_hw = (hw + 2 * pad - k) // stride + 1
        sizes = {"N": n, "C": c, "H": hw, "W": hw, "F": f, "KH": k, "KW": k}
        small_sizes = dict(zip(("N", "C", "H", "W", "F", "KH", "KW"), small, strict=True))
        if k == 1:  # conv2d_1x1 has no filter sizes
            del sizes["KH"], sizes["KW"], small_sizes["KH"], small_sizes["KW"]
        name = f"{entry} {_shape(n, c, hw, hw)} f{f} {k}x{k}"
        return Case(name, "zoo/conv.tc", entry, sizes, small_sizes, peer, 2 * n * f * out_hw**2 * c * k * k)

    out = [
        conv("conv2d", 32, 64, 56, 64, 3, (2, 8, 10, 12, 8, 3, 3), lambda i, w: F.conv2d(i, w)),
        conv("conv2d", 32, 128, 28, 128, 3, (1, 16, 9, 9, 16, 3, 3), lambda i, w: F.conv2d(i, w)),
        conv("conv2d_1x1", 32, 256, 56, 64, 1, (2, 16, 7, 9, 12, 1, 1), lambda i, w: F.conv2d(i, w[:, :, None, None])),
        conv("conv2d_stride2", 32, 64, 56, 128, 3, (2, 4, 11, 9, 8, 3, 3),
             lambda i, w: F.conv2d(i, w, stride=2), stride=2),
        conv("conv2d_pad1", 32, 64, 56, 64, 3, (2, 4, 7, 9, 8, 3, 3),
             lambda i, w: F.conv2d(i, w, padding=1), pad=1),
        # ResNet's later stages (14 x 14 and 7 x 7 planes) and its downsampling
        conv("conv2d_pad1", 32, 256, 14, 256, 3, (2, 5, 7, 7, 9, 3, 3),
             lambda i, w: F.conv2d(i, w, padding=1), pad=1),
        conv("conv2d_pad1", 32, 512, 7, 512, 3, (2, 5, 5, 6, 9, 3, 3),
             lambda i, w: F.conv2d(i, w, padding=1), pad=1),
        conv("conv2d_stride2_pad1", 32, 128, 56, 256, 3, (2, 4, 9, 8, 6, 3, 3),
             lambda i, w: F.conv2d(i, w, stride=2, padding=1), stride=2, pad=1),
        conv("conv2d_stem", 32, 3, 224, 64, 7, (2, 3, 18, 18, 8, 7, 7),
             lambda i, w: F.conv2d(i, w, stride=2, padding=3), stride=2, pad=3),
    ]
    n, hw, c, f, k = 32, 56, 64, 64, 3
    out.append(Case(f"conv2d_nhwc_pad1 {_shape(n, hw, hw, c)} f{f} {k}x{k}", "zoo/conv.tc", "conv2d_nhwc_pad1",
                    {"N": n, "H": hw, "W": hw, "C": c, "F": f, "KH": k, "KW": k},
                    {"N": 2, "H": 7, "W": 9, "C": 6, "F": 18, "KH": 3, "KW": 3},
                    lambda i, w: F.conv2d(i.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), padding=1).permute(0, 2, 3, 1),
                    2 * n * f * hw * hw * c * k * k))
    b, c, t, f, k = 32, 256, 1024, 256, 3
    out.append(Case(f"conv1d {_shape(b, c, t)} f{f} k{k}", "zoo/conv.tc", "conv1d",
                    {"B": b, "C": c, "T": t, "F": f, "K": k}, {"B": 2, "C": 9, "T": 70, "F": 19, "K": 3},
                    lambda i, w: F.conv1d(i, w), 2 * b * f * (t - k + 1) * c * k))
    n, g, c, hw, f, k = 32, 8, 32, 28, 32, 3
    out.append(Case(f"conv2d_grouped {_shape(n, g * c, hw, hw)} g{g} f{g * f} {k}x{k}", "zoo/conv.tc",
                    "conv2d_grouped", {"N": n, "G": g, "C": c, "H": hw, "W": hw, "F": f, "KH": k, "KW": k},
                    {"N": 2, "G": 3, "C": 4, "H": 8, "W": 9, "F": 5, "KH": 3, "KW": 3}, _grouped_conv,
                    2 * n * g * f * (hw - k + 1) ** 2 * c * k * k))
    n, c, hw, k = 32, 128, 56, 3
    out.append(Case(f"conv2d_depthwise {_shape(n, c, hw, hw)} {k}x{k}", "zoo/conv.tc", "conv2d_depthwise",
                    {"N": n, "C": c, "H": hw, "W": hw, "KH": k, "KW": k},
                    {"N": 2, "C": 6, "H": 12, "W": 36, "KH": 3, "KW": 3},
                    lambda i, w: F.conv2d(i, w[:, None], groups=w.shape[0]), 2 * n * c * (hw - k + 1) ** 2 * k * k))
    n, c, hw, f, k = 32, 64, 56, 64, 3
    out.append(Case(f"conv2d_filter_grad {_shape(n, c, hw, hw)} f{f} {k}x{k}", "zoo/conv.tc", "conv2d_filter_grad",
                    {"N": n, "C": c, "H": hw, "W": hw, "F": f, "OH": hw - k + 1, "OW": hw - k + 1},
                    {"N": 3, "C": 5, "H": 7, "W": 9, "F": 6, "OH": 5, "OW": 6}, _filter_gradient,
                    2 * n * f * (hw - k + 1) ** 2 * c * k * k))
    return out


def _filter_gradient(i: Any, g: Any) -> Any:
    taps = (i.shape[2] - g.shape[2] + 1, i.shape[3] - g.shape[3] + 1)
    return torch.nn.grad.conv2d_weight(i, (g.shape[1], i.shape[1], *taps), g)


def _pooling() -> list[Case]:
    def pool(entry: str, n: int, c: int, hw: int, k: int, small: tuple[int, ...], peer: Callable[..., Any]) -> Case:
        sizes = {"N": n, "C": c, "H": hw, "W": hw}
        out_hw = (hw - k) // 2 + 1
        return Case(f"{entry} {_shape(n, c, hw, hw)}", "zoo/pool.tc", entry, sizes,
                    dict(zip("NCHW", small, strict=True)), peer, n * c * out_hw**2 * k * k)

    n, c, hw = 32, 2048, 7
    return [
        pool("maxpool2d_2x2", 32, 64, 112, 2, (2, 5, 12, 18), lambda i: F.max_pool2d(i, 2)),
        pool("maxpool2d_3x3_stride2", 32, 64, 112, 3, (2, 5, 13, 17), lambda i: F.max_pool2d(i, 3, 2)),
        pool("avgpool2d_2x2", 32, 128, 56, 2, (2, 5, 12, 18), lambda i: F.avg_pool2d(i, 2)),
        Case(f"global_avgpool {_shape(n, c, hw, hw)}", "zoo/pool.tc", "global_avgpool",
             {"N": n, "C": c, "H": hw, "W": hw}, {"N": 4, "C": 40, "H": 7, "W": 7},
             lambda i: i.mean((2, 3)), n * c * hw * hw),
    ]


def _reductions() -> list[Case]:
    out = []
    row_chains = [
        ("softmax", (4096, 1024), (32768, 4096), lambda x: torch.softmax(x, 1), 5),
        ("log_softmax", (4096, 1024), (8192, 32000), lambda x: F.log_softmax(x, 1), 5),
        ("layernorm", (4096, 1024), (32768, 4096), lambda x, g, b: F.layer_norm(x, (x.shape[1],), g, b, 1e-5), 8),
        ("rmsnorm", (4096, 1024), (16384, 4096), lambda x, w: F.rms_norm(x, (x.shape[1],), w, 1e-6), 4),
    ]
    for entry, *shapes, peer, flops in row_chains:
        # Small sizes of 128 rows and more take the GPU mapping of row-wise chains (a block a row).
        for (b, n), small in zip(shapes, [(160, 40), (130, 67)], strict=True):
            out.append(Case(f"{entry} {_shape(b, n)}", f"{entry}.tc", entry, {"B": b, "N": n},
                            dict(zip("BN", small, strict=True)), peer, flops * b * n))
    b, n = 8192, 8192
    out.append(Case(f"colsum {_shape(b, n)}", "colsum.tc", "colsum", {"B": b, "N": n}, {"B": 300, "N": 70},
                    lambda x: x.sum(0), b * n))
    out.append(Case(f"rowsum {_shape(b, n)}", "rowsum.tc", "rowsum", {"B": b, "K": n}, {"B": 140, "K": 50},
                    lambda x: x.sum(1), b * n))
    out.append(Case(f"colmax {_shape(b, n)}", "zoo/reduction.tc", "colmax", {"B": b, "N": n}, {"B": 300, "N": 70},
                    lambda x: x.amax(0), b * n))
    nhwc = (32, 56, 56, 256)
    out.append(Case(f"channel_mean_nhwc {_shape(*nhwc)}", "zoo/reduction.tc", "channel_mean_nhwc",
                    dict(zip("NHWC", nhwc, strict=True)), {"N": 3, "H": 5, "W": 7, "C": 9},
                    lambda x: x.mean((0, 1, 2)), math.prod(nhwc)))
    b, c, d = 64, 1024, 1024
    out.append(Case(f"batch_mean {_shape(b, c, d)}", "zoo/reduction.tc", "batch_mean", {"B": b, "C": c, "D": d},
                    {"B": 24, "C": 9, "D": 40}, lambda x: x.mean(0), 2 * b * c * d))
    nchw = (32, 128, 56, 56)
    out.append(Case(f"channel_mean {_shape(*nchw)}", "zoo/reduction.tc", "channel_mean",
                    dict(zip("NCHW", nchw, strict=True)), {"N": 5, "C": 3, "H": 7, "W": 9},
                    lambda x: x.mean((0, 2, 3)), math.prod(nchw)))
    nchw = (32, 64, 56, 56)  # 128 planes of the small sizes take the GPU mapping of row-wise chains
    out.append(Case(f"instancenorm {_shape(*nchw)}", "zoo/reduction.tc", "instancenorm",
                    dict(zip("NCHW", nchw, strict=True)), {"N": 2, "C": 64, "H": 5, "W": 9},
                    lambda x: F.instance_norm(x, eps=1e-5), 8 * math.prod(nchw)))
    b, n = 128, 50257
    out.append(Case(f"softmax {_shape(b, n)}", "softmax.tc", "softmax", {"B": b, "N": n}, {"B": 130, "N": 300},
                    lambda x: torch.softmax(x, 1), 5 * b * n))
    return out


def _elementwise() -> list[Case]:
    b, n = 8192, 4096
    m = 8192
    nchw = (32, 64, 56, 56)
    return [
        Case(f"bias_gelu {_shape(b, n)}", "zoo/elementwise.tc", "bias_gelu", {"B": b, "N": n}, {"B": 130, "N": 37},
             lambda x, bias: F.gelu(x + bias, approximate="tanh"), 10 * b * n),
        Case(f"silu {_shape(b, n)}", "zoo/elementwise.tc", "silu", {"B": b, "N": n}, {"B": 33, "N": 70},
             lambda x: F.silu(x), 4 * b * n),
        Case(f"transpose {_shape(m, m)}", "zoo/elementwise.tc", "transpose", {"M": m, "N": m},
             {"M": 70, "N": 45}, lambda x: x.T.contiguous(), 0),
        Case(f"add_col_row {_shape(m, m)}", "zoo/elementwise.tc", "add_col_row", {"M": m, "N": m},
             {"M": 50, "N": 75}, lambda col, row: col[:, None] + row, m * m),
        Case(f"scale_shift_nhwc {_shape(*nchw)}", "zoo/elementwise.tc", "scale_shift_nhwc",
             dict(zip("NCHW", nchw, strict=True)), {"N": 2, "C": 5, "H": 6, "W": 7},
             lambda x, s, t: (x * s[:, None, None] + t[:, None, None]).permute(0, 2, 3, 1).contiguous(),
             2 * math.prod(nchw)),
    ]


def _embeddings() -> list[Case]:
    v, d, b = 1_000_000, 128, 65536
    bag_v, bag_d, bag_b, bag_l = 1_000_000, 64, 4096, 40
    return [
        Case(f"embedding {v}x{d} b{b}", "zoo/embedding.tc", "embedding", {"V": v, "D": d, "B": b},
             {"V": 50, "D": 36, "B": 70}, lambda e, i: F.embedding(i, e), 0, moved=b * (2 * d * 4 + 4)),
        Case(f"embedding_bag_sum {bag_v}x{bag_d} b{bag_b} l{bag_l}", "zoo/embedding.tc", "embedding_bag_sum",
             {"V": bag_v, "D": bag_d, "B": bag_b, "L": bag_l}, {"V": 50, "D": 20, "B": 24, "L": 5},
             lambda e, i: F.embedding_bag(i, e, mode="sum"), bag_b * bag_l * bag_d,
             moved=bag_b * bag_l * (bag_d * 4 + 4) + bag_b * bag_d * 4),
    ]


def _layers() -> list[Case]:
    out = [
        Case(f"linear_relu {_shape(b, i, o)}", "zoo/mlp.tc", "linear_relu", {"B": b, "I": i, "O": o},
             small, lambda x, w, bias: F.relu(F.linear(x, w, bias)), 2 * b * i * o)
        for (b, i, o), small in [((4096, 4096, 4096), {"B": 72, "I": 40, "O": 66}),
                                 ((128, 1024, 4096), {"B": 16, "I": 520, "O": 24})]
    ]
    b, l, d = 64, 512, 64
    out.append(Case(f"attention {_shape(b, l, d)}", "attention.tc", "attention", {"B": b, "L": l, "D": d},
                    {"B": 3, "L": 24, "D": 16}, lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                    4 * b * l * l * d))
    b, h = 16, 4
    out.append(Case(f"multihead_attention {_shape(b, h, l, d)}", "zoo/attention.tc", "multihead_attention",
                    {"B": b, "H": h, "L": l, "D": d}, {"B": 2, "H": 2, "L": 20, "D": 8},
                    lambda q, k, v: F.scaled_dot_product_attention(q, k, v), 4 * b * h * l * l * d))
    b, t, h, e, d = 8, 512, 16, 64, 1024
    out.append(Case(f"qkv_projection {_shape(b, t, d)} h{h}e{e}", "zoo/attention.tc", "qkv_projection",
                    {"B": b, "T": t, "D": d, "H": h, "E": e}, {"B": 2, "T": 9, "D": 20, "H": 3, "E": 7},
                    lambda x, w: torch.einsum("btd,hed->bthe", x, w), 2 * b * t * h * e * d))
    out.append(Case(f"output_projection {_shape(b, t, h, e)} d{d}", "zoo/attention.tc", "output_projection",
                    {"B": b, "T": t, "D": d, "H": h, "E": e}, {"B": 2, "T": 9, "D": 20, "H": 3, "E": 7},
                    lambda o, w: torch.einsum("bthe,dhe->btd", o, w), 2 * b * t * h * e * d))
    b, h, t, d = 8, 16, 1024, 64
    out.append(Case(f"linear_attention_state {_shape(b, h, t, d)}", "zoo/attention.tc", "linear_attention_state",
                    {"B": b, "H": h, "T": t, "D": d, "E": d}, {"B": 2, "H": 2, "T": 70, "D": 9, "E": 11},
                    lambda k, v: k.transpose(-1, -2) @ v, 2 * b * h * t * d * d))
    b, h, t = 32, 12, 197
    out.append(Case(f"attention_softmax {_shape(b, h, t, t)}", "zoo/attention.tc", "attention_softmax",
                    {"B": b, "H": h, "I": t, "J": t}, {"B": 2, "H": 3, "I": 5, "J": 37},
                    lambda s: torch.softmax(s, -1), 5 * b * h * t * t))
    return out


def cases() -> list[Case]:
    """Every case of the zoo, family by family."""
    return [*_matmuls(), *_batch_matmuls(), *_convolutions(), *_pooling(), *_reductions(), *_elementwise(),
            *_embeddings(), *_layers()]


@cache
def _source(file: str) -> str:
    return (EXAMPLES / file).read_text()


def function(case: Case, dtype: str | None = None) -> Any:
    """The case's def, defined afresh (no compiled code from another case),
    its float tensors of `dtype` where one is given."""
    import tcir

    fn = tcir.define(_source(case.file), str(EXAMPLES / case.file))[case.entry]
    return fn.astype(dtype) if dtype else fn


def select(all_cases: Sequence[Case], only: str, max_cases: int | None) -> list[Case]:
    """The cases whose names contain one of the comma-separated `only` substrings, at most `max_cases`."""
    wanted = [w for w in only.split(",") if w]
    selected = [c for c in all_cases if not wanted or any(w in c.name for w in wanted)]
    return selected[:max_cases] if max_cases is not None else selected


def host_inputs(definition: Any, sizes: dict[str, int]) -> list[Any]:
    """Numpy inputs of the def's shapes for lowering only: never written, so
    the memory of large ones is never touched."""
    import numpy as np

    from tcir.runtime.signature import NUMPY_DTYPES, evaluate

    values = [sizes[n] for n in definition.size_params]
    return [np.empty([evaluate(d, values) for d in p.dims], NUMPY_DTYPES[p.dtype]) for p in definition.inputs]


def compile_only(selected: Sequence[Case], options: Any, dtype: str | None = None) -> int:
    """Lower each case to CUDA C at its real sizes (define to CUDA C, NVRTC
    left out); print the wall and CPU seconds (the CPU's are the robust ones
    on a shared machine) and the kernels. Returns the exit status."""
    print(f"{'case':44} {'wall s':>7} {'cpu s':>7} {'kernels':>7}")
    failures = 0
    for case in selected:
        try:
            started, cpu = time.perf_counter(), time.process_time()
            fn = function(case, dtype)
            source = fn.ir(*host_inputs(fn.definition, case.sizes), backend="cuda", options=options)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        except Exception as e:  # keep going: report the failure in the table
            failures += 1
            print(f"{case.name:44} FAILED {type(e).__name__}: {e}"[:400], flush=True)
            continue
        over = f"  over {COMPILE_BUDGET_S:g} s" if cpu > COMPILE_BUDGET_S else ""
        print(f"{case.name:44} {seconds:7.2f} {cpu:7.2f} {source.count('__global__'):7}{over}", flush=True)
    return 1 if failures else 0


def _device_us(call: Callable[[], Any]) -> float:
    """p50 device time of `call` in microseconds, `bench.device_ms` over as
    many launches as take about 200 ms."""
    call()
    torch.cuda.synchronize()
    probe = wall_ms(torch, call, 3)
    return device_ms(torch, call, max(3, min(200, int(200 / max(probe, 0.01))))) * 1e3


def _nbytes(values: Any) -> int:
    return sum(v.nbytes for v in (values if isinstance(values, (tuple, list)) else [values]))


def run(
    case: Case, options: Any, peaks: tuple[float, float], tolerance: float, dtype: str | None = None
) -> dict[str, Any]:
    """Check and time one case on the GPU: a row of the table."""
    import cupy

    row: dict[str, Any] = {"case": case.name, "file": case.file, "entry": case.entry, "sizes": case.sizes}
    started = time.perf_counter()
    fn = function(case, dtype)
    defined = time.perf_counter() - started
    inputs = device_inputs(fn.definition, case.sizes, cupy)
    tensors = [torch.as_tensor(x, device="cuda") for x in inputs]
    if dtype:
        inputs = tensors = in_dtype(tensors, dtype, torch)
    expected = case.peer(*tensors)
    cupy.cuda.runtime.deviceSynchronize()
    started = time.perf_counter()
    result = fn(*inputs, options=options)
    cupy.cuda.runtime.deviceSynchronize()
    row["compile_s"] = defined + time.perf_counter() - started
    row["rel_error"] = check(result, expected, torch)
    row["ok"] = row["rel_error"] <= tolerance
    if dtype:
        row.update(errors64(result, expected, case.peer, tensors, torch))
    moved = case.moved or _nbytes(inputs) + _nbytes(result)
    row["flops"], row["bytes"] = case.flops, moved
    row["roofline_us"] = max(case.flops / peaks[0], moved / peaks[1]) * 1e6
    del result
    row["tcir_us"] = _device_us(lambda: fn(*inputs, options=options))
    row["eager_us"] = _device_us(lambda: case.peer(*tensors))
    row["ratio"] = row["tcir_us"] / row["eager_us"]
    return row


def _free_device_memory() -> None:
    import cupy

    torch.cuda.synchronize()
    cupy.get_default_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()


def _warm_up() -> None:
    """Imports, NVRTC and the first launch, so that no case pays for them."""
    import cupy

    import tcir

    tcir.define("def warm_up(float(N) A) -> (B) { B(i) = A(i) + 1 }").warm_up(cupy.ones(64, cupy.float32))
    cupy.cuda.runtime.deviceSynchronize()


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Geometric mean of the ratios of the timed rows, the slow ones and the wrong or failed ones."""
    timed = [r for r in rows if "ratio" in r]
    geomean = math.exp(sum(math.log(r["ratio"]) for r in timed) / len(timed)) if timed else float("nan")
    return {
        "geomean": geomean,
        "timed": len(timed),
        "slow": [r["case"] for r in timed if r["ratio"] > SLOW],
        "wrong": [r["case"] for r in timed if not r["ok"]],
        "failed": [r["case"] for r in rows if "error" in r],
        "over_compile_budget": [r["case"] for r in rows if r.get("compile_s", 0) > COMPILE_BUDGET_S],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the cases (file, def, sizes) and exit")
    parser.add_argument("--compile-only", action="store_true",
                        help="lower every case to CUDA C at its real sizes and print the seconds (no GPU)")
    parser.add_argument("--only", default="", help="comma-separated substrings of the case names to run")
    parser.add_argument("--max-cases", type=int, help="run at most this many of the selected cases")
    parser.add_argument("--options", metavar="JSON", help="MappingOptions fields for tcir instead of the default")
    parser.add_argument("--tf32", action="store_true",
                        help="allow TF32: tcir with MappingOptions(allow_tf32=True), eager with "
                        "torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32")
    parser.add_argument("--dtype", choices=("float16", "bfloat16"),
                        help="every def's float tensors in this type, eager in it too (default: float32)")
    parser.add_argument("--json", metavar="FILE", help="write the rows and the summary as JSON")
    parser.add_argument("--cache-dir", help="tcir's compilation cache (default: a new empty one)")
    args = parser.parse_args(argv)
    selected = select(cases(), args.only, args.max_cases)
    if args.list:
        for case in selected:
            sizes = ",".join(f"{k}={v}" for k, v in case.sizes.items())
            print(f"{case.name:44} {case.file:24} {case.entry:22} {sizes}")
        print(f"{len(selected)} cases")
        return 0
    import tcir

    fields = json.loads(args.options) if args.options else {}
    if args.tf32:
        fields["allow_tf32"] = True
    options = tcir.MappingOptions(**fields) if fields else None
    if args.compile_only:
        return compile_only(selected, options, args.dtype)
    os.environ["TCIR_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="tcir-zoo-cache-")
    import logging

    logging.getLogger("torch").setLevel(logging.ERROR)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    tolerance = 1e-2 if args.tf32 else 1e-3
    peaks = machine_peaks(torch)
    print(f"measured peaks: {peaks[0] / 1e12:.1f} TFLOP/s fp32{' (TF32)' if args.tf32 else ''}, "
          f"{peaks[1] / 1e12:.2f} TB/s")
    _warm_up()
    print(f"{'case':44} {'tcir us':>9} {'eager us':>9} {'ratio':>6} {'ok':>3} {'compile s':>9} {'roof us':>9}")
    rows = []
    for case in selected:
        try:
            row = run(case, options, peaks, tolerance, args.dtype)
        except Exception as e:  # keep going: report the failure in the table
            row = {"case": case.name, "file": case.file, "entry": case.entry, "sizes": case.sizes,
                   "error": f"{type(e).__name__}: {e}"[:300]}
            print(f"{case.name:44} FAILED {row['error']}", flush=True)
        else:
            print(f"{case.name:44} {row['tcir_us']:9.1f} {row['eager_us']:9.1f} {row['ratio']:6.2f} "
                  f"{'yes' if row['ok'] else 'NO':>3} {row['compile_s']:9.2f} {row['roofline_us']:9.1f}",
                  flush=True)
        rows.append(row)
        _free_device_memory()
    result = summary(rows)
    print(f"geometric mean of tcir/eager over {result['timed']} cases: {result['geomean']:.3f}; "
          f"above {SLOW}x: {len(result['slow'])}; wrong: {len(result['wrong'])}; failed: {len(result['failed'])}; "
          f"compiles over {COMPILE_BUDGET_S:g} s: {len(result['over_compile_budget'])}")
    if args.json:
        Path(args.json).write_text(json.dumps({"peaks": peaks, "tf32": args.tf32, "dtype": args.dtype or "float32",
                                               "options": fields, "rows": rows,
                                               "summary": result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
