"""Candidates per minute of the tuner, on the tuner's benchmark problems.

    python tools/bench_tuner.py [--backend cuda] [--seconds 60] [--only gconv,tmm]
        [--search tpe] [--workers 4]

Tunes gconv C=F=16 (H=W=14) and tmm 128x1024x1024 for `--seconds` each, from
an empty cache, with every core compiling (`--workers`: fewer), and prints for
each the candidates measured per minute, how many failed and why (compile
timeouts include compiles cut for running far longer than the others), why
the run ended, the median compile and profile job, how busy the compile
slots were, and the best time against the default options'.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import tcir
from tcir.compiler.lowering import DefIR
from tcir.runtime.inputs import random_inputs
from tcir.tuner.tune import SEARCHES, Tuner

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
    parser.add_argument("--search", default="genetic", choices=SEARCHES)
    parser.add_argument("--workers", type=int, help="compile processes (default: one per core)")
    args = parser.parse_args()
    for name in args.only.split(","):
        function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
        inputs = random_inputs(function.definition, PROBLEMS[name], args.seed)
        if args.backend == "cuda":
            from tcir.backends.cuda.runtime import cupy_module

            inputs = [cupy_module().asarray(a) if hasattr(a, "shape") else a for a in inputs]
        with tempfile.TemporaryDirectory() as cache:
            tuner = Tuner(
                DefIR.of(function.definition), inputs, backend=args.backend, candidates=None,
                max_time=args.seconds, cache=cache, seed=args.seed, search=args.search,
                workers=args.workers,
            )
            started = time.monotonic()
            result = tuner.run()
            elapsed = time.monotonic() - started
        failures = Counter(
            "compile timed out" if "compile: timed out" in o.error
            else "stopped (far slower than the best)" if "stopped: far slower" in o.error
            else o.error.split(":")[0]
            for o in result.outcomes
            if o.error
        )
        default = f"{result.default_seconds * 1e6:.1f}" if result.default_seconds else "failed"
        usage = result.usage
        assert usage is not None
        print(
            f"{name}: {len(result.outcomes)} candidates in {elapsed:.0f} s = "
            f"{len(result.outcomes) / elapsed * 60:.0f}/min, {sum(failures.values())} failed "
            f"{dict(failures)}, ended: {result.stopped}; compile jobs median "
            f"{_median(usage.compile_s):.2f} s on {usage.compile_slots} slots "
            f"{usage.compile_busy:.0%} busy, profile jobs median {_median(usage.profile_s) * 1e3:.0f} ms; "
            f"best {result.best_seconds * 1e6:.1f} us (default {default} us)",
            flush=True,
        )


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


if __name__ == "__main__":
    main()
