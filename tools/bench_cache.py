"""Time the compile path of a fresh process on a compilation-cache hit.

    python tools/bench_cache.py [--backend cpu|cuda]

A first process compiles MLP3 and tmm (filling a temporary cache); a second,
fresh process calls them again and reports how long the compile step (cache
lookup + loading the code: MCJIT for the CPU, NVRTC for CUDA) took against
the same step with an empty cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import numpy as np
import tcir
from tcir.runtime.signature import bind
from tcir.tools.tcir_run import random_inputs
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
        [sys.executable, "-c", CHILD, backend], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cold = run(args.backend, cache)
        warm = run(args.backend, cache)
    for name in cold:
        print(f"{name:6} {args.backend}: compile {cold[name]:8.1f} ms, cache hit in a fresh process {warm[name]:6.1f} ms")


if __name__ == "__main__":
    main()
