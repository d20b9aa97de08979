"""CPU speed of tiling: tmm 512x512x512 tiled (and sunk, unrolled) vs canonical loops.

    .venv/bin/python tools/bench_tiling_cpu.py [--size 512] [--repeat 7]

Every variant runs through the CPU JIT (LLVM O3); the baseline is the
canonical reference lowering (`options=None`: one loop nest per statement in
source order). Times are medians of `--repeat` calls after a warm-up call
(which compiles); results are checked against numpy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

import tcir

SOURCE = (Path(__file__).parents[1] / "examples" / "tmm.tc").read_text()

VARIANTS: list[tuple[str, tcir.MappingOptions | None]] = [
    ("canonical loops", None),
    ("fusion=max, no tiling", tcir.MappingOptions(fusion="max")),
    ("fusion=max tile=32,32,32", tcir.MappingOptions(fusion="max", tile=[32, 32, 32])),
    ("fusion=min tile=32,32,32", tcir.MappingOptions(fusion="min", tile=[32, 32, 32])),
    ("fusion=max tile=16,16,16", tcir.MappingOptions(fusion="max", tile=[16, 16, 16])),
    ("fusion=min tile=16,16,16", tcir.MappingOptions(fusion="min", tile=[16, 16, 16])),
    ("fusion=min tile=16,16,64", tcir.MappingOptions(fusion="min", tile=[16, 16, 64])),
    (
        "fusion=min tile=16,16,16 unroll=4",
        tcir.MappingOptions(fusion="min", tile=[16, 16, 16], unroll=4),
    ),
    ("fusion=min tile=64,64,64", tcir.MappingOptions(fusion="min", tile=[64, 64, 64])),
]


def median_ms(call: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return 1e3 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.size, args.size)).astype(np.float32)
    b = rng.standard_normal((args.size, args.size)).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64).T
    function = tcir.define(SOURCE).tmm
    print(f"tmm {args.size}^3, median of {args.repeat}")
    print(f"{'variant':36} {'compile s':>9} {'ms':>9} {'speedup':>8}")
    baseline = None
    for label, options in VARIANTS:
        start = time.perf_counter()
        result = function(a, b, options=options)
        compile_s = time.perf_counter() - start
        np.testing.assert_allclose(result, expected, rtol=1e-3, atol=1e-2)
        ms = median_ms(partial(function, a, b, options=options), args.repeat)
        baseline = baseline or ms
        print(f"{label:36} {compile_s:9.2f} {ms:9.2f} {baseline / ms:7.2f}x")


if __name__ == "__main__":
    main()
