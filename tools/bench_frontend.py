"""Time the TC frontend on the MLP3 example: parse + check + range inference,
and the same plus lowering to the `tc` dialect.

Usage: python tools/bench_frontend.py [runs]   (prints medians in milliseconds)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tcir.frontend import parse
from tcir.frontend.emit import emit_module

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "MLP3.tc"


def median_ms(step: Callable[[], object], runs: int) -> tuple[float, float]:
    step()  # warm up (imports, isl context)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    source = EXAMPLE.read_text()
    steps = {
        "parse + check + infer": lambda: parse(source, str(EXAMPLE)),
        "... + lower to tc": lambda: emit_module(source, str(EXAMPLE)),
    }
    for label, step in steps.items():
        median, best = median_ms(step, runs)
        print(f"MLP3 {label:22} median {median:7.3f} ms (min {best:.3f} ms, {runs} runs)")


if __name__ == "__main__":
    main()
