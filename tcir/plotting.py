"""Pictures of measurements, drawn with matplotlib (an optional extra:
`pip install 'tcir[plot]'`); SVG or any format matplotlib writes.

- `roofline`: each benchmark configuration's achieved FLOP/s against its
  arithmetic intensity, under the measured compute and bandwidth roofs,
  tcir and PyTorch eager side by side (`tools/bench.py --plot`);
- `tuning_curve`: the best time so far against candidates measured
  (`tcir-tune --plot`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tcir.errors import TCError


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise TCError("plots need matplotlib: pip install 'tcir[plot]'") from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def roofline(
    rows: Sequence[Mapping[str, Any]],
    peaks: tuple[float, float],
    path: str | Path,
    implementations: Mapping[str, str] = {"tcir": "tcir", "eager": "PyTorch eager"},
) -> None:
    """A roofline of benchmark `rows` (each with `config`, `flops`, `bytes`
    and `<implementation>_device_ms`) under `peaks` (FLOP/s, bytes/s)."""
    plt = _pyplot()
    flop_rate, bandwidth = peaks
    figure, axes = plt.subplots(figsize=(9, 6))
    measured = [r for r in rows if r.get("flops") and r.get("bytes")]
    if not measured:
        raise TCError("roofline: no row has flops, bytes and device times")
    intensities = [r["flops"] / r["bytes"] for r in measured]
    low, high = min(intensities) / 4, max(intensities) * 4
    xs = [low * (high / low) ** (k / 200) for k in range(201)]
    axes.plot(xs, [min(flop_rate, bandwidth * x) for x in xs], color="black", linewidth=1.5)
    axes.annotate(f"{flop_rate / 1e12:.1f} TFLOP/s", (xs[-1], flop_rate), ha="right", va="bottom")
    axes.annotate(f"{bandwidth / 1e12:.2f} TB/s", (xs[0], bandwidth * xs[0]), ha="left", va="bottom", rotation=20)
    markers = dict(zip(implementations, "os^D"))
    for name, label in implementations.items():
        points = [
            (r["flops"] / r["bytes"], r["flops"] / (r[f"{name}_device_ms"] * 1e-3), r["config"])
            for r in measured
            if r.get(f"{name}_device_ms")
        ]
        if points:
            axes.scatter([p[0] for p in points], [p[1] for p in points], marker=markers[name], label=label)
    for r, x in zip(measured, intensities):
        ms = r.get("tcir_device_ms")
        if ms:
            axes.annotate(r["config"], (x, r["flops"] / (ms * 1e-3)), fontsize=7, xytext=(4, 4), textcoords="offset points")
    axes.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)", ylabel="achieved FLOP/s")
    axes.set_title("roofline: the paper's kernels")
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def tuning_curve(points: Sequence[tuple[int, float]], path: str | Path, title: str, default: float | None = None) -> None:
    """Best time so far (seconds) after each count of measured candidates."""
    plt = _pyplot()
    if not points:
        raise TCError("tuning plot: no candidate was measured")
    figure, axes = plt.subplots(figsize=(8, 5))
    axes.step([n for n, _ in points], [t * 1e3 for _, t in points], where="post", label="best so far")
    if default is not None and math.isfinite(default):
        axes.axhline(default * 1e3, color="gray", linestyle="--", label="default options")
    axes.set(xlabel="candidates measured", ylabel="time (ms)", title=title)
    axes.grid(True, linewidth=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
