"""Per-step times of the polyhedral pipeline on the paper's MLP3 and grouped conv.

    python tools/bench_poly.py

Times tc -> poly (`tc-specialize,convert-tc-to-poly`), scheduling
(`poly-schedule{fusion=X}`) and code generation (`convert-poly-to-loops`) at the
paper's sizes, for each fusion strategy; every step should stay under 1 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "poly"))

import tcir  # noqa: E402
from test_poly_e2e import GCONV, MLP3  # noqa: E402  (the programs as tc IR)

KERNELS = {
    "MLP3": (MLP3, "B=128,M=128,O=64,P=32,Q=2"),
    "gconv": (GCONV, "N=32,G=32,C=16,F=16,H=16,W=16,KH=3,KW=3"),
}
"""Paper sizes; gconv's input is 16x16 so that the output is 14x14."""


def _timed(module: object, pipeline: str) -> float:
    start = time.perf_counter()
    tcir.PassManager.parse(pipeline).run(module)  # pyright: ignore[reportArgumentType]
    return time.perf_counter() - start


def main() -> None:
    print(f"{'kernel':8} {'fusion':10} {'tc->poly':>10} {'schedule':>10} {'codegen':>10}")
    for name, (text, sizes) in KERNELS.items():
        for fusion in ("min", "max", "preserve3"):
            module = tcir.parse_ir(text)
            to_poly = _timed(module, f'tc-specialize{{sizes="{sizes}"}},convert-tc-to-poly')
            schedule = _timed(module, f"poly-schedule{{fusion={fusion}}}")
            codegen = _timed(module, "convert-poly-to-loops")
            print(
                f"{name:8} {fusion:10} {to_poly * 1e3:8.1f}ms {schedule * 1e3:8.1f}ms "
                f"{codegen * 1e3:8.1f}ms"
            )


if __name__ == "__main__":
    main()
