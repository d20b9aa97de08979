"""Default mappings at random shapes: the zoo's defs at sizes nobody tuned them for.

    python tools/shape_fuzz.py --count 3 --seed 7                   # CUDA C at sizes around the zoo's
    python tools/shape_fuzz.py --backend cuda-sim --backward        # numbers of derived backwards, small sizes

Every def of `tools/bench_zoo.py` (with `--backward`, its derived backward)
at `--count` shapes drawn around its case's sizes: each size scaled by a
random factor and nudged off powers of two, taps of 1 to 7. With `--backend
cuda` each is lowered to CUDA C with the default options (no GPU needed:
what fails to compile for a shape fails there); with `cuda-sim` the zoo's
small sizes are drawn around instead, and the outputs are checked against
the float64 numpy reference. Sizes the def rejects (a filter larger than
its image) are drawn again, not counted. Each shape runs in a process of its
own with a timeout (pebble), so a lowering that hangs fails alone. Prints
every failure with its sizes, then a summary; exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_zoo  # noqa: E402

from tcir.tools.options_fuzz import run_isolated  # noqa: E402

TAPS = {"KH", "KW", "K"}
"""Sizes of filter taps, drawn from 1 to 7."""
SCALES = (0.3, 0.6, 0.77, 1.0, 1.3)
NUDGES = (0, 0, 1, 3)
TOLERANCE = 1e-3
"""Largest error relative to 1 + |reference| on the simulated GPU."""


@dataclass(frozen=True)
class Shape:
    """A def of the zoo (`case`'s) at `sizes`, forward or its derived backward."""

    case: str
    sizes: dict[str, int]
    backward: bool


def draw(rng: random.Random, count: int, small: bool, backward: bool, only: str = "") -> list[Shape]:
    """`count` shapes of every zoo def (the first case of each), around its
    benchmark sizes or its `small` ones."""
    shapes, seen = [], set()
    for case in bench_zoo.select(bench_zoo.cases(), only, None):
        if (case.file, case.entry) in seen:
            continue
        seen.add((case.file, case.entry))
        base = case.small if small else case.sizes
        for _ in range(count):
            sizes = {
                name: rng.randint(1, 7) if name in TAPS and value <= 7
                else max(1, int(value * rng.choice(SCALES)) + rng.choice(NUDGES))
                for name, value in base.items()
            }
            shapes.append(Shape(case.name, sizes, backward))
    return shapes


def check(shape: Shape, backend: str) -> str:
    """"ok", "skip" (sizes the def rejects, no backward) or what failed."""
    import numpy as np

    import tcir
    from tcir.errors import ShapeError
    from tcir.runtime.inputs import random_inputs
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import NUMPY_DTYPES, Binding, bind, with_derived_sizes

    case = next(c for c in bench_zoo.cases() if c.name == shape.case)
    fn = forward = bench_zoo.function(case)
    if shape.backward:
        try:
            fn = tcir.define(forward.gradient())[f"{forward.name}_grad"]
        except tcir.TCError:
            return "skip"
    definition = forward.definition
    binding = Binding(with_derived_sizes(definition, dict(shape.sizes)), ())
    # The backward's inputs: the forward's, then a gradient of each of its outputs.
    params = [*definition.inputs, *(definition.outputs if shape.backward else [])]
    dims = [binding.shape(definition, p) for p in params]
    if any(extent < 1 for d in dims for extent in d):
        return "skip"
    try:
        if backend == "cuda":  # arrays without memory: lowering reads only their shapes
            fn.ir(*[np.broadcast_to(np.zeros(1, NUMPY_DTYPES[p.dtype]), d) for p, d in zip(params, dims)], backend="cuda")
            return "ok"
        rng = np.random.default_rng(0)
        inputs = random_inputs(definition, binding.sizes, 0)
        inputs += [rng.standard_normal(d).astype(NUMPY_DTYPES[p.dtype]) for p, d in zip(params[len(inputs):], dims[len(inputs):])]
        expected = reference_outputs(fn.definition, bind(fn.definition, inputs))
        got = fn(*inputs, backend=backend)
    except ShapeError:
        return "skip"
    except Exception as e:  # noqa: BLE001  (reported: any error is what the fuzz looks for)
        return f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        error = np.max(np.abs(np.asarray(g, np.float64) - e) / (1 + np.abs(e)), initial=0.0)
        if not error <= TOLERANCE:
            return f"wrong: error {error:.2e}"
    return "ok"


def run(shapes: Sequence[Shape], backend: str, workers: int, timeout: float) -> list[tuple[Shape, str]]:
    """`check` every shape in `workers` processes, each within `timeout` seconds."""
    results = run_isolated(check, shapes, (backend,), lambda shape, kind, why: f"{kind}: {why}",
                           workers=workers, timeout=timeout)
    return list(zip(shapes, results, strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2, help="shapes of each def")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=("cuda", "cuda-sim"), default="cuda")
    parser.add_argument("--backward", action="store_true", help="the derived backwards instead")
    parser.add_argument("--only", default="", help="comma-separated substrings of the zoo's case names")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a shape may take")
    args = parser.parse_args(argv)
    shapes = draw(random.Random(args.seed), args.count, args.backend == "cuda-sim", args.backward, args.only)
    results = run(shapes, args.backend, args.workers, args.timeout)
    failed = [(s, r) for s, r in results if r not in ("ok", "skip")]
    for shape, result in failed:
        print(json.dumps({"case": shape.case, "backward": shape.backward, "sizes": shape.sizes, "failure": result}))
    checked = sum(r != "skip" for _, r in results)
    print(f"{len(failed)} failures among {checked} shapes ({args.backend}, seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
