"""Candidates per minute of the tuner, on the tuner's benchmark problems.

    python tools/bench_tuner.py [--backend cuda] [--seconds 60] [--only gconv,tmm]

Tunes gconv C=F=16 (H=W=14) and tmm 128x1024x1024 for `--seconds` each, from
an empty cache, with every core compiling, and prints for each the candidates
measured per minute, how many failed and why (compile timeouts are the
stragglers cut from their batch), the generations completed and the best time
against the default options'.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import tcir
from tcir.compiler.lowering import DefIR
from tcir.runtime.inputs import random_inputs
from tcir.tuner.tune import Tuner

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PROBLEMS = {
    "gconv": {"N": 32, "G": 32, "C": 16, "F": 16, "H": 14, "W": 14, "KH": 3, "KW": 3},
    "tmm": {"M": 128, "K": 1024, "N": 1024},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=["cpu", "cuda", "cuda-sim"])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", default=",".join(PROBLEMS))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name in args.only.split(","):
        function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
        inputs = random_inputs(function.definition, PROBLEMS[name], args.seed)
        if args.backend == "cuda":
            from tcir.backends.cuda.runtime import cupy_module

            inputs = [cupy_module().asarray(a) if hasattr(a, "shape") else a for a in inputs]
        with tempfile.TemporaryDirectory() as cache:
            tuner = Tuner(
                DefIR.of(function.definition), inputs, backend=args.backend, generations=None,
                max_time=args.seconds, cache=cache, seed=args.seed,
            )
            started = time.monotonic()
            result = tuner.run()
            elapsed = time.monotonic() - started
        failures = Counter(
            "compile timed out" if "compile: timed out" in o.error else o.error.split(":")[0]
            for o in result.outcomes
            if o.error
        )
        default = f"{result.default_seconds * 1e6:.1f}" if result.default_seconds else "failed"
        print(
            f"{name}: {len(result.outcomes)} candidates in {elapsed:.0f} s = "
            f"{len(result.outcomes) / elapsed * 60:.0f}/min, {sum(failures.values())} failed "
            f"{dict(failures)}, {result.generations} generations, best "
            f"{result.best_seconds * 1e6:.1f} us (default {default} us)",
            flush=True,
        )


if __name__ == "__main__":
    main()
