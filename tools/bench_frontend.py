"""Time the TC frontend (parse + check + range inference) on the MLP3 example.

Usage: python tools/bench_frontend.py [runs]   (prints the median in milliseconds)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from tcir.frontend import parse

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "MLP3.tc"


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    source = EXAMPLE.read_text()
    parse(source, str(EXAMPLE))  # warm up (imports, isl context)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        parse(source, str(EXAMPLE))
        times.append(time.perf_counter() - start)
    print(f"frontend MLP3: median {statistics.median(times) * 1e3:.3f} ms over {runs} runs "
          f"(min {min(times) * 1e3:.3f} ms)")


if __name__ == "__main__":
    main()
