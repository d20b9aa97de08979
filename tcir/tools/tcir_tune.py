"""`tcir-tune FILE --entry NAME --sizes M=128,K=32`: autotune a def, store the best.

Makes random inputs for the sizes (as `tcir-run` does), runs the genetic
search (or TPE, or random search) with live progress (candidates measured,
failed and pruned, best time, speedup over the default, candidates per
second; a line for each new best), and ends with a table of the best
candidates and the options that set them apart (`tcir.tuner.report`: what
`mod.f.tune()` says too).
Every measurement and the best version go to the compilation cache
(`--cache-dir`, else `$TCIR_CACHE_DIR` or `~/.cache/tcir`), where later
calls with the same shapes find them; `--resume` continues a run from them.
`--cluster tcp://HOST:PORT` (or `local`) runs the jobs on Dask workers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcir.diagnostics import report_errors
from tcir.errors import TCError
from tcir.tuner.tune import CANDIDATES, POPULATION, SEARCHES


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcir-tune", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="TC source file")
    parser.add_argument("--entry", required=True, help="name of the def to tune")
    parser.add_argument("--sizes", default="", help="size values, e.g. M=128,K=32")
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "cuda-sim"))
    parser.add_argument(
        "--candidates",
        type=int,
        help=f"candidates to measure (default {CANDIDATES}, or as many as --max-time allows)",
    )
    parser.add_argument(
        "--population",
        type=int,
        default=POPULATION,
        help=f"genetic search: the fastest candidates kept for breeding (default {POPULATION})",
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per compilation or profiling run"
    )
    parser.add_argument(
        "--max-time", type=float, help="stop after this many seconds (running jobs are cancelled)"
    )
    parser.add_argument("--search", default="genetic", choices=SEARCHES)
    parser.add_argument(
        "--max-unroll",
        type=int,
        help="largest unroll factor tried (a power of 2; default 4096 on GPUs, 64 on the CPU)",
    )
    parser.add_argument("--mutation-rate", type=float, default=0.1)
    parser.add_argument("--elites", type=int, default=1)
    parser.add_argument("--workers", type=int, help="compile processes (default: one per core)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs and of the search")
    parser.add_argument("--cache-dir", help="compilation cache directory")
    parser.add_argument(
        "--resume", action="store_true", help="count the cached measurements of this problem as done"
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run jobs on a Dask cluster: tcp://HOST:PORT, or local for one on this host",
    )
    parser.add_argument("--plot", metavar="FILE", help="draw the best time against candidates (SVG...)")
    options = parser.parse_args(args)
    with report_errors("tcir-tune"):
        return run(options)
    return 1


def run(options: argparse.Namespace) -> int:
    import tcir
    from tcir.runtime.inputs import random_inputs
    from tcir.runtime.signature import with_derived_sizes
    from tcir.transforms.tc_specialize import parse_sizes
    from tcir.tuner.report import Display, ProgressReport, summary, varied_fields
    from tcir.tuner.space import SearchSpace
    from tcir.tuner.tune import Tuner

    function = tcir.define(Path(options.input_file).read_text(), options.input_file)[options.entry]
    definition = function.definition
    sizes = with_derived_sizes(definition, parse_sizes(options.sizes))
    missing = [n for n in definition.given_size_params if n not in sizes]
    if missing:
        raise TCError(f"tcir-tune: give a value for {', '.join(missing)} with --sizes")
    inputs: list[Any] = random_inputs(definition, sizes, options.seed)
    if options.backend == "cuda":
        from tcir.backends.cuda.runtime import cupy_module

        inputs = [cupy_module().asarray(a) if hasattr(a, "shape") else a for a in inputs]
    display = Display.make(printing=True)
    report = ProgressReport(display)
    shown = ", ".join(f"{n}={v}" for n, v in sizes.items())
    display.line(f"tuning {definition.name}({shown}) on {options.backend}")
    tuner = Tuner(
        function,
        inputs,
        backend=options.backend,
        candidates=(
            options.candidates
            if options.candidates is not None or options.max_time
            else CANDIDATES
        ),
        population=options.population,
        timeout=options.timeout,
        max_time=options.max_time,
        search=options.search,
        mutation_rate=options.mutation_rate,
        elites=options.elites,
        seed=options.seed,
        workers=options.workers,
        cache=options.cache_dir,
        space=SearchSpace.build(definition, sizes, options.backend, max_unroll=options.max_unroll),
        on_progress=report,
        resume=options.resume,
        cluster=options.cluster,
    )
    try:
        result = tuner.run()
    finally:
        display.close()
    for line in summary(result, definition.name, options.backend, tuner.cache.path, varied_fields(tuner.space)):
        display.line(line)
    if options.plot:
        from tcir.plotting import tuning_curve

        title = f"tuning {definition.name}({shown}) on {options.backend}"
        tuning_curve(report.curve, options.plot, title, result.default_seconds)
        display.line(f"  plot: {options.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
