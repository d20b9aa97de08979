"""Time the compile path of a fresh process on a compilation-cache hit.

    python tools/bench_cache.py [--backend cpu|cuda] [--runs N]

A first process compiles tmm and MLP3 (filling a temporary cache); then N
fresh processes (`--runs`, default 1) each call them again and report how
long the compile step (cache lookup + loading the code: a shared library for
the CPU, a cubin for CUDA) took, against the same step with an empty cache.
tmm is each process's first kernel: its time includes what the process loads
for the first kernel; MLP3's does not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import numpy as np
import tcir
from tcir.runtime.signature import bind
from tcir.runtime.inputs import random_inputs
backend = sys.argv[1]
cases = [("tmm", {"M": 128, "K": 64, "N": 96}), ("MLP3", {"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2})]
times = {}
for name, sizes in cases:
    function = tcir.define(open(f"examples/{name}.tc").read())[name]
    inputs = random_inputs(function.definition, sizes, 0)
    if backend == "cuda":
        import cupy
        inputs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
    binding = bind(function.definition, inputs)
    start = time.perf_counter()
    function._compile(binding, None, backend)
    times[name] = (time.perf_counter() - start) * 1e3
print(json.dumps(times))
"""


def run(backend: str, cache: str) -> dict[str, float]:
    env = {**os.environ, "TCIR_CACHE_DIR": cache}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, backend], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        sys.exit(f"bench_cache: the measured process failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--runs", type=int, default=1, help="fresh processes timing the hit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cold = run(args.backend, cache)
        warm = [run(args.backend, cache) for _ in range(max(1, args.runs))]
    for name in cold:
        hits = sorted(w[name] for w in warm)
        spread = f" (min {hits[0]:.1f}, max {hits[-1]:.1f})" if len(hits) > 1 else ""
        print(
            f"{name:6} {args.backend}: compile {cold[name]:8.1f} ms, cache hit in a fresh "
            f"process {statistics.median(hits):6.1f} ms{spread}"
        )


if __name__ == "__main__":
    main()
