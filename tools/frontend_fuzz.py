"""Fuzz the frontend: mutants of `examples/*.tc` through `tcir.define`.

    python tools/frontend_fuzz.py --count 100000 [--seed 1]

Every mutant (`tcir.frontend.mutants.mutate`) must be accepted or rejected
with a `tcir.TCError` (parse, type, range errors...), all the way to the
`tc` dialect; with `--lower`, each accepted def is also specialized to
sizes of 5 and lowered to loops and to a scop (`convert-tc-to-poly`).
Prints the counts and each input that raised anything else, with its
traceback's last line; exits with 1 if there was one.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import tcir
from tcir.frontend.mutants import mutate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def lower(module: tcir.Module) -> None:
    """Each def at sizes of 5, to loops and to a scheduled scop."""
    from tcir.runtime.inputs import random_inputs

    for name in module.names:
        function = module[name]
        sizes = {n: 5 for n in function.definition.size_params}
        inputs = random_inputs(function.definition, sizes, 0)
        function.ir(*inputs, until="convert-tc-to-loops")
        function.ir(*inputs, until="poly-schedule", options=tcir.MappingOptions())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lower", action="store_true", help="also lower accepted defs")
    args = parser.parse_args()
    seeds = [p.read_text() for p in sorted(EXAMPLES.glob("*.tc"))]
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    crashes: list[tuple[str, str]] = []
    start = time.perf_counter()
    for _ in range(args.count):
        text = mutate(rng, rng.choice(seeds))
        try:
            module = tcir.define(text, "mutant.tc")
            outcomes["accepted"] += 1
            if args.lower:
                lower(module)
        except tcir.TCError as e:
            outcomes[type(e).__name__] += 1
        except Exception:  # noqa: BLE001  (what this tool looks for)
            outcomes["crash"] += 1
            crashes.append((text, traceback.format_exc().strip().splitlines()[-1]))
    seconds = time.perf_counter() - start
    print(f"{args.count} mutants (seed {args.seed}) in {seconds:.0f} s: " + ", ".join(f"{k} {v}" for k, v in outcomes.most_common()))
    for text, last in crashes[:20]:
        print(f"\n{last}\n{text}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
