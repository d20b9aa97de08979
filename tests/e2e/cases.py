"""The paper's kernels with small inputs and float64 numpy references.

Shared by the CPU and GPU end-to-end tests and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

EXAMPLES = Path(__file__).parents[2] / "examples"
Arrays = list[Any]


@dataclass(frozen=True)
class Case:
    """A def to run: its source, inputs for a size, and the numpy reference."""

    name: str
    source: str
    entry: str
    inputs: Callable[[np.random.Generator], Arrays]
    reference: Callable[..., tuple[np.ndarray, ...]]


def f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def example(name: str, entry: str | None = None, **kw: Any) -> Case:
    source = (EXAMPLES / f"{name}.tc").read_text()
    return Case(name, source, entry or name, **kw)


def _conv2d(x: np.ndarray, w: np.ndarray, sh: int = 1, sw: int = 1) -> np.ndarray:
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    ho, wo = (h - kh) // sh + 1, (wd - kw) // sw + 1
    out = np.zeros((n, f, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + sh * (ho - 1) + 1 : sh, j : j + sw * (wo - 1) + 1 : sw]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


def _gconv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    groups = [_conv2d(x[:, g], w[g]) for g in range(x.shape[1])]
    return np.stack(groups, axis=1) + b[None, :, :, None, None]


def _maxpool(x: np.ndarray) -> np.ndarray:
    b, c, h, w = x.shape
    ho, wo = (h - 2) // 2 + 1, (w - 2) // 2 + 1
    x = x[:, :, : 2 * ho, : 2 * wo].reshape(b, c, ho, 2, wo, 2)
    return x.max(axis=(3, 5))


def _mlp3(o1, w2, b2, w3, b3, w4, b4):  # noqa: ANN001, ANN202
    o2 = relu(o1 @ w2.T + b2)
    o3 = relu(o2 @ w3.T + b3)
    return o2, o3, relu(o3 @ w4.T + b4)


def _lut(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    return table[index].sum(axis=1)


def index_tensor(rng: np.random.Generator, high: int, *shape: int) -> np.ndarray:
    return rng.integers(0, high, shape).astype(np.int32)


PAPER_KERNELS = [
    example("mv", inputs=lambda r: [f32(r, 5, 7), f32(r, 7)], reference=lambda a, x: (a @ x,)),
    example("rowsum", inputs=lambda r: [f32(r, 5, 9)], reference=lambda a: (a.sum(1),)),
    example(
        "sgemm",
        inputs=lambda r: [0.5, -2.0, f32(r, 4, 6), f32(r, 6, 3), f32(r, 4, 3)],
        reference=lambda a, b, A, B, C: (b * C + a * A @ B,),
    ),
    example(
        "fcrelu",
        inputs=lambda r: [f32(r, 4, 6), f32(r, 5, 6), f32(r, 5)],
        reference=lambda x, w, b: (relu(x @ w.T + b),),
    ),
    example(
        "conv2d",
        inputs=lambda r: [f32(r, 2, 3, 7, 6), f32(r, 4, 3, 3, 2)],
        reference=lambda x, w: (_conv2d(x, w),),
    ),
    example("maxpool2x2", inputs=lambda r: [f32(r, 2, 3, 7, 6)], reference=lambda x: (_maxpool(x),)),
    example(
        "gather",
        inputs=lambda r: [f32(r, 9), index_tensor(r, 9, 3, 4)],
        reference=lambda x, i: (x[i],),
    ),
    example(
        "sconv2d",
        inputs=lambda r: [2, 3, f32(r, 2, 3, 9, 11), f32(r, 4, 3, 3, 2), f32(r, 4)],
        reference=lambda sh, sw, x, w, b: (_conv2d(x, w, sh, sw) + b[None, :, None, None],),
    ),
    example(
        "outerProductMM",
        inputs=lambda r: [f32(r, 2, 3, 4), f32(r, 5, 4, 3)],
        reference=lambda a, b: (np.einsum("pqr,srt->psqt", a, b),),
    ),
    example("tmm", inputs=lambda r: [f32(r, 5, 7), f32(r, 6, 7)], reference=lambda a, b: (a @ b.T,)),
    example(
        "tbmm",
        inputs=lambda r: [f32(r, 3, 4, 5), f32(r, 3, 6, 5)],
        reference=lambda x, y: (np.einsum("bnm,bkm->bnk", x, y),),
    ),
    example(
        "gconv",
        inputs=lambda r: [f32(r, 2, 3, 2, 6, 5), f32(r, 3, 4, 2, 3, 3), f32(r, 3, 4)],
        reference=lambda x, w, b: (_gconv(x, w, b),),
    ),
    example(
        "1LUT",
        inputs=lambda r: [f32(r, 20, 6), index_tensor(r, 20, 4, 5)],
        reference=lambda t, i: (_lut(t, i),),
    ),
    example(
        "2LUT",
        inputs=lambda r: [f32(r, 20, 6), index_tensor(r, 20, 4, 5), f32(r, 15, 6), index_tensor(r, 15, 4, 3)],
        reference=lambda t1, i1, t2, i2: (_lut(t1, i1), _lut(t2, i2)),
    ),
    example(
        "MLP1",
        inputs=lambda r: [f32(r, 4, 6), f32(r, 5, 6), f32(r, 5)],
        reference=lambda x, w, b: (relu(x @ w.T + b),),
    ),
    example(
        "MLP3",
        inputs=lambda r: [f32(r, 4, 8), f32(r, 6, 8), f32(r, 6), f32(r, 5, 6), f32(r, 5), f32(r, 2, 5), f32(r, 2)],
        reference=_mlp3,
    ),
    example(
        "conv1d",
        inputs=lambda r: [f32(r, 11), f32(r, 4)],
        reference=lambda i, k: (np.correlate(i, k, "valid"),),
    ),
    example("C3", inputs=lambda r: [f32(r, 4, 9), f32(r, 5, 9)], reference=lambda i, w: (i @ w.T,)),
]


def as_float64(values: Arrays) -> Arrays:
    return [v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v for v in values]


def tolerance(dtype: np.dtype) -> float:
    """Relative error allowed per element type (against a float64 reference)."""
    return {np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-10}.get(dtype.type, 0)


def assert_matches(outputs: Any, expected: tuple[np.ndarray, ...]) -> None:
    got = outputs if isinstance(outputs, tuple) else (outputs,)
    assert len(got) == len(expected)
    for out, ref in zip(got, expected):
        out = np.asarray(out)
        assert out.shape == ref.shape, (out.shape, ref.shape)
        scale = max(1.0, float(np.abs(ref).max(initial=0)))
        error = float(np.abs(out.astype(np.float64) - ref).max(initial=0)) / scale
        assert error <= tolerance(out.dtype), f"relative error {error}"
