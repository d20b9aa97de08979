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

from tcir.errors import TCError
from tcir.runtime.inputs import random_inputs, within_tolerance
from tcir.diagnostics import report_errors
from tcir.transforms.tc_specialize import parse_sizes


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcir-run", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="TC source file")
    parser.add_argument("--entry", required=True, help="name of the def to run")
    parser.add_argument("--sizes", default="", help="size values, e.g. M=128,K=32")
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "cuda-sim"))
    parser.add_argument("--repeat", type=int, default=10, help="timed runs")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(args)
    with report_errors("tcir-run"):
        return run(options)
    return 1


def run(options: argparse.Namespace) -> int:
    import tcir
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import bind, with_derived_sizes

    start = time.perf_counter()
    source = Path(options.input_file).read_text()
    function = tcir.define(source, options.input_file)[options.entry]
    definition = function.definition
    sizes = with_derived_sizes(definition, parse_sizes(options.sizes))
    missing = [n for n in definition.given_size_params if n not in sizes]
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
        good, error = within_tolerance(got, ref, param.dtype)
        ok &= good
        status = "ok" if good else "MISMATCH"
        print(f"  check {param.name}{tuple(ref.shape)} vs numpy: max rel. error {error:.2e} {status}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
