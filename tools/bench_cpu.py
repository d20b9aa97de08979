"""CPU backend benchmark: compile time per example, run time against numpy.einsum.

    .venv/bin/python tools/bench_cpu.py [--repeat 20]

Compile time is frontend to callable (parse, check, lower, LLVM O3, JIT) in a
warm process; run time is the median of repeated calls, numpy's einsum on the
same float32 arrays measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import tcir
from tcir.runtime.inputs import random_inputs

EXAMPLES = Path(__file__).parents[1] / "examples"

# (example, sizes at a mid size, einsum of the same contraction or None)
CASES = [
    ("tmm", {"M": 256, "K": 256, "N": 256}, "mk,nk->mn"),
    ("tbmm", {"B": 500, "N": 26, "M": 72, "K": 26}, "bnm,bkm->bnk"),
    ("C3", {"B": 128, "WX": 1000, "WY": 1024}, "bx,yx->by"),
    ("mv", {"M": 1024, "K": 1024}, "mk,k->m"),
    ("outerProductMM", {"P": 16, "Q": 16, "R": 32, "S": 16, "T": 16}, "pqr,srt->psqt"),
    ("MLP1", {"B": 128, "M": 512, "N": 256}, None),
    ("MLP3", {"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2}, None),
    ("conv1d", {"M": 4096, "N": 64}, None),
    ("conv2d", {"B": 4, "IP": 16, "H": 28, "W": 28, "OP": 16, "KH": 3, "KW": 3}, None),
    ("maxpool2x2", {"B": 16, "C": 32, "H": 56, "W": 56}, None),
    ("gconv", {"N": 4, "G": 8, "C": 8, "F": 8, "H": 14, "W": 14, "KH": 3, "KW": 3}, None),
    ("2LUT", {"E1": 100000, "D": 64, "B": 128, "L1": 50, "E2": 100000, "L2": 50}, None),
]


def median_time(call, repeat: int) -> float:
    call()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    tcir.define("def warm(float(N) X) -> (Y) { Y(i) = X(i) }").warm(np.ones(4, np.float32))
    print(f"{'kernel':16} {'compile ms':>10} {'tcir ms':>9} {'einsum ms':>10} {'ratio':>7}")
    for name, sizes, einsum in CASES:
        source = (EXAMPLES / f"{name}.tc").read_text()
        start = time.perf_counter()
        function = tcir.define(source)[name]
        inputs = random_inputs(function.definition, sizes, seed=0)
        function(*inputs)
        compile_ms = (time.perf_counter() - start) * 1e3
        run = median_time(lambda: function(*inputs), args.repeat)
        line = f"{name:16} {compile_ms:10.1f} {run * 1e3:9.3f}"
        if einsum is not None:
            arrays = [a for a in inputs if isinstance(a, np.ndarray)]
            peer = median_time(lambda: np.einsum(einsum, *arrays), args.repeat)
            line += f" {peer * 1e3:10.3f} {peer / run:7.2f}"
        print(line)
    print("ratio = einsum time / tcir time (higher is better for tcir)")


if __name__ == "__main__":
    main()
