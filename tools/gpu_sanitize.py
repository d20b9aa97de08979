"""Run every paper kernel once on the GPU at small sizes, for compute-sanitizer.

    compute-sanitizer --tool racecheck python tools/gpu_sanitize.py
    compute-sanitizer --tool memcheck python tools/gpu_sanitize.py

Uses the default mapping (shared and private promotion on) plus a tiled
variant, and checks each result against the numpy oracle.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import tcir
from tcir.runtime.numpy_reference import reference_outputs
from tcir.runtime.signature import bind
from tcir.runtime.inputs import random_inputs, relative_error

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SIZES = {
    "tmm": {"M": 64, "K": 96, "N": 80},
    "tbmm": {"B": 3, "N": 26, "M": 72, "K": 26},
    "gconv": {"N": 2, "G": 4, "C": 4, "F": 4, "H": 10, "W": 10, "KH": 3, "KW": 3},
    "1LUT": {"E1": 100, "D": 64, "B": 16, "L1": 5},
    "2LUT": {"E1": 100, "D": 64, "B": 16, "L1": 5, "E2": 50, "L2": 3},
    "C3": {"B": 16, "WX": 100, "WY": 64},
    "MLP1": {"B": 16, "M": 100, "N": 64},
    "MLP3": {"B": 16, "N": 32, "O": 16, "P": 8, "Q": 2},
    "conv2d": {"B": 2, "IP": 3, "H": 9, "W": 9, "OP": 4, "KH": 3, "KW": 3},
}
VARIANTS = {"default": None, "tiled": tcir.MappingOptions(tile=[16, 16, 16], threads=[16, 8])}


def main() -> int:
    import cupy

    failures = 0
    for name, sizes in SIZES.items():
        function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
        inputs = random_inputs(function.definition, sizes, 0)
        expected = reference_outputs(function.definition, bind(function.definition, inputs))
        device = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
        for variant, options in VARIANTS.items():
            outputs = function(*device, options=options)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            error = max(relative_error(cupy.asnumpy(o), e) for o, e in zip(outputs, expected))
            ok = error <= 1e-4
            failures += not ok
            print(f"{name:8} {variant:8} max rel. error {error:.1e} {'ok' if ok else 'MISMATCH'}")
    cupy.cuda.runtime.deviceSynchronize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
