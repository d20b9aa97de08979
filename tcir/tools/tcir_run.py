"""`tcir-run FILE --entry NAME --sizes M=128,K=32`: compile, run, check, time.

Makes random inputs for the given sizes (index tensors get values inside the
dimensions they index), runs the def on a backend, checks every output
against the numpy oracle in float64, and prints the compile and run times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcir.errors import TCError
from tcir.tools.diagnostics import report_errors
from tcir.transforms.tc_specialize import parse_sizes

TOLERANCE = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-10}


def index_bounds(definition: Any) -> dict[str, int]:
    """For each tensor used in subscripts, the smallest extent it indexes."""
    from tcir.frontend import ast as A
    from tcir.frontend.subscripts import walk

    bounds: dict[str, int] = {}
    for stmt in definition.stmts:
        for node in walk(stmt.rhs):
            if not isinstance(node, A.Access):
                continue
            dims = definition.tensor(node.tensor).dims
            for sub, dim in zip(node.subscripts, dims):
                for inner in walk(sub):
                    if isinstance(inner, A.Access):
                        bounds.setdefault(inner.tensor, []).append(dim)  # type: ignore
    return bounds  # type: ignore


def random_inputs(definition: Any, sizes: dict[str, int], seed: int) -> list[Any]:
    from tcir.runtime.signature import NUMPY_DTYPES, evaluate

    rng = np.random.default_rng(seed)
    values = [sizes[n] for n in definition.size_params]
    indexing = index_bounds(definition)
    inputs: list[Any] = []
    for param in definition.inputs:
        dtype = NUMPY_DTYPES[param.dtype]
        if param.is_scalar:
            if param.name in sizes:
                inputs.append(sizes[param.name])
            elif param.dtype.startswith("float"):
                inputs.append(float(rng.standard_normal()))
            else:
                inputs.append(int(rng.integers(1, 4)))
            continue
        shape = tuple(evaluate(d, values) for d in param.dims)
        if param.name in indexing:
            high = min(evaluate(d, values) for d in indexing[param.name])  # type: ignore
            inputs.append(rng.integers(0, max(high, 1), shape).astype(dtype))
        elif param.dtype.startswith("float"):
            inputs.append(rng.standard_normal(shape).astype(dtype))
        else:
            inputs.append(rng.integers(-8, 8, shape).astype(dtype))
    return inputs


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    scale = max(1.0, float(np.abs(expected).max(initial=0)))
    return float(np.abs(got.astype(np.float64) - expected).max(initial=0)) / scale


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcir-run", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="TC source file")
    parser.add_argument("--entry", required=True, help="name of the def to run")
    parser.add_argument("--sizes", default="", help="size values, e.g. M=128,K=32")
    parser.add_argument("--backend", default="cpu", help="cpu or cuda")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(args)
    with report_errors("tcir-run"):
        return run(options)
    return 1


def run(options: argparse.Namespace) -> int:
    import tcir
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import bind

    start = time.perf_counter()
    source = Path(options.input_file).read_text()
    function = tcir.define(source, options.input_file)[options.entry]
    definition = function.definition
    sizes = parse_sizes(options.sizes)
    missing = [n for n in definition.size_params if n not in sizes]
    if missing:
        raise TCError(f"tcir-run: give a value for {', '.join(missing)} with --sizes")
    inputs = random_inputs(definition, sizes, options.seed)
    outputs = function(*inputs, backend=options.backend)
    compile_time = time.perf_counter() - start
    times = []
    for _ in range(max(options.repeat, 1)):
        begin = time.perf_counter()
        function(*inputs, backend=options.backend)
        times.append(time.perf_counter() - begin)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = reference_outputs(definition, bind(definition, inputs))
    shown = ", ".join(f"{n}={v}" for n, v in sizes.items())
    print(f"{definition.name}({shown}) on {options.backend}")
    print(f"  compile + first run: {compile_time * 1e3:.1f} ms")
    print(f"  run: median {statistics.median(times) * 1e3:.3f} ms over {len(times)} calls")
    ok = True
    for param, got, ref in zip(definition.outputs, outputs, expected):
        error = relative_error(np.asarray(got), ref)
        good = error <= TOLERANCE.get(param.dtype, 0)
        ok &= good
        status = "ok" if good else "MISMATCH"
        print(f"  check {param.name}{tuple(ref.shape)} vs numpy: max rel. error {error:.2e} {status}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
