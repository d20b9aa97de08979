"""Options fuzzing: random mappings from the tuner's search space, checked.

    python tools/options_fuzz.py --count 400                       # cuda-sim, random seed
    python tools/options_fuzz.py --count 2000 --backend cuda,cuda-sim --seed 7
    python tools/options_fuzz.py --problem tmm --options '{"fusion": "min", ...}'
    python tools/options_fuzz.py --count 400 --minimize            # shrink each failure
    python tools/options_fuzz.py --count 400 --backend cuda --max-time 240   # what fits in 4 min

Every def of `examples/*.tc` at small odd sizes (`tcir.tools.options_fuzz.PROBLEMS`)
gets candidates from `SearchSpace.random`, compiled for the GPU and run on
each backend against the canonical CPU lowering; the candidates are split
into chunks of `--per-seed`, each drawn from its own seed (`--seed`, +1, ...).
Prints a table per def and every failure with the line that reproduces it;
exits with 1 if any candidate is wrong, racy, or fails other than by a
`TCError` rejecting its options.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections import Counter, defaultdict
from pathlib import Path

from tcir.tools.options_fuzz import PROBLEMS, Candidate, Verdict, draw, minimize, run_candidates

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def candidates_for(args: argparse.Namespace) -> list[Candidate]:
    if args.options is not None:
        if len(args.problem) != 1:
            sys.exit("options_fuzz: --options needs exactly one --problem")
        return [Candidate(str(EXAMPLES), args.problem[0], args.options)]
    found: list[Candidate] = []
    seed = args.seed
    while len(found) < args.count:
        found += draw(seed, min(args.per_seed, args.count - len(found)), EXAMPLES, args.problem)
        seed += 1
    return found


def table(verdicts: list[Verdict]) -> str:
    by_problem: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    seconds: dict[tuple[str, str], float] = defaultdict(float)
    for v in verdicts:
        key = (v.candidate.problem, v.backend)
        by_problem[key][v.status] += 1
        seconds[key] += v.seconds
    columns = ("ok", "rejected", "wrong", "fault", "error", "crash", "timeout")
    lines = [
        "| def | backend | candidates | " + " | ".join(columns) + " | mean s |",
        "|---|---|" + "---:|" * (len(columns) + 2),
    ]
    total: Counter[str] = Counter()
    for (problem, backend), counts in sorted(by_problem.items()):
        n = sum(counts.values())
        total.update(counts)
        cells = " | ".join(str(counts[c]) for c in columns)
        lines.append(f"| {problem} | {backend} | {n} | {cells} | {seconds[problem, backend] / n:.2f} |")
    cells = " | ".join(str(total[c]) for c in columns)
    lines.append(f"| all | | {sum(total.values())} | {cells} | |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400, help="candidates in all")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("--per-seed", type=int, default=50, help="candidates drawn from each seed")
    parser.add_argument("--backend", default="cuda-sim", help="comma-separated: cuda-sim, cuda")
    parser.add_argument("--problem", action="append", default=[], choices=sorted(PROBLEMS))
    parser.add_argument("--options", help="check these options (JSON) only, with one --problem")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per candidate")
    parser.add_argument(
        "--max-time", type=float, default=None, help="seconds in all: then report what was checked"
    )
    parser.add_argument("--minimize", action="store_true", help="shrink each failure")
    parser.add_argument("--json", type=Path, help="write every verdict here")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = secrets.randbelow(1 << 31)
    backends = tuple(args.backend.split(","))
    candidates = candidates_for(args)
    print(f"options fuzzing: {len(candidates)} candidates, seed {args.seed}, backends {', '.join(backends)}")
    done = [0]

    def progress(found: list[Verdict]) -> None:
        done[0] += 1
        for v in found:
            if v.failed:
                last = v.detail.strip().splitlines()[-1:] or [""]
                print(f"  {v.status} on {v.backend}: {v.candidate.describe()}\n    {last[0][:400]}")
        if done[0] % 50 == 0:
            print(f"  {done[0]}/{len(candidates)} checked", flush=True)

    verdicts = run_candidates(
        candidates, backends, workers=args.workers, timeout=args.timeout, on_verdicts=progress,
        max_time=args.max_time,
    )
    if done[0] < len(candidates):
        print(f"  --max-time {args.max_time:g} s: {done[0]} of {len(candidates)} candidates checked")
    print(table(verdicts))
    failures = [v for v in verdicts if v.failed]
    if args.json is not None:
        rows = [
            {"problem": v.candidate.problem, "options": json.loads(v.candidate.options),
             "backend": v.backend, "status": v.status, "detail": v.detail, "seconds": v.seconds}
            for v in verdicts
        ]  # fmt: skip
        args.json.write_text(json.dumps({"seed": args.seed, "verdicts": rows}, indent=1))
    for v in failures:
        shown = minimize(v, v.backend) if args.minimize and v.backend == "cuda-sim" else v
        print(f"\n{shown.status} on {shown.backend}: {shown.detail.strip()}")
        print(f"  python tools/options_fuzz.py --problem {shown.candidate.problem} --backend {shown.backend} "
              f"--options '{shown.candidate.options}'")
    print(f"\n{len(failures)} failures among {len(verdicts)} checks (seed {args.seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
