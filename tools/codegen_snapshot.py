"""Snapshot the generated CUDA C of many kernels, to check a compiler change keeps it.

    python tools/codegen_snapshot.py before.json [--candidates 50] [--only gconv,tmm] [--jobs 2]
    python tools/codegen_snapshot.py after.json --compare before.json

For every configuration of `tools/bench.py`: the CUDA C of the default
mapping; for every example there: that of `--candidates` random candidates
of the tuner's CUDA space (unroll up to `--max-unroll`), spread over the
example's configurations. Each kernel is lowered as a tuning compile job
lowers it (`StagedLowering`) and printed with the CUDA printer (no GPU
needed); a candidate that fails to compile records its error instead, one
that takes longer than `--timeout` is recorded as timed out (and not
compared). `--compare` reports every kernel whose text differs (exit status
1 if any).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from concurrent.futures import TimeoutError
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

TIMED_OUT = "timed out"
TOOLS = Path(__file__).resolve().parent
EXAMPLES = TOOLS.parent / "examples"


def bench_configs() -> list[tuple[str, str, dict[str, int]]]:
    """(label, example, sizes) of every `tools/bench.py` configuration."""
    spec = importlib.util.spec_from_file_location("bench", TOOLS / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    torch = SimpleNamespace(nn=SimpleNamespace(functional=None), relu=None)  # peers are not called
    return [(c.label, c.example, c.sizes) for c in bench.configs(torch)]


def _shapes_only(definition: Any, sizes: dict[str, int]) -> list[np.ndarray]:
    from tcir.runtime.signature import NUMPY_DTYPES, evaluate

    values = [sizes[n] for n in definition.size_params]
    return [
        np.broadcast_to(np.zeros((), NUMPY_DTYPES[p.dtype]), tuple(evaluate(d, values) for d in p.dims))
        for p in definition.inputs
    ]


_STAGED: dict[tuple[str, str], Any] = {}
"""Per worker process: the staged lowering of each (example, configuration)."""


def _lowering(example: str, label: str, sizes: dict[str, int]) -> tuple[Any, Any]:
    """The def and staged lowering of `example` at `sizes`, made once per process."""
    import tcir
    from tcir.compiler.lowering import StagedLowering
    from tcir.runtime.signature import bind

    key = (example, label)
    if key not in _STAGED:
        function = tcir.define((EXAMPLES / f"{example}.tc").read_text())[example]
        binding = bind(function.definition, _shapes_only(function.definition, sizes))
        _STAGED[key] = function, StagedLowering(function.def_ir, binding)
    return _STAGED[key]


def cuda_source(example: str, label: str, sizes: dict[str, int], options_json: str | None) -> str:
    """The CUDA C of one kernel (None options: the default mapping), or `error: ...`."""
    from tcir.backends.cuda.printer import print_cuda
    from tcir.compiler.options import MappingOptions

    _, staged = _lowering(example, label, sizes)
    options = None if options_json is None else MappingOptions.from_json(options_json)
    try:
        return print_cuda(staged.lowered(options, "cuda"))
    except Exception as e:  # recorded: a change must keep failures too
        return f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def kernels(
    example: str, configs: list[tuple[str, dict[str, int]]], candidates: int, max_unroll: int
) -> list[tuple[str, str, dict[str, int], str | None]]:
    """(name, label, sizes, options JSON) of an example's defaults and random candidates."""
    import tcir
    from tcir.runtime.signature import bind
    from tcir.tuner.space import SearchSpace

    function = tcir.define((EXAMPLES / f"{example}.tc").read_text())[example]
    spaces = [
        SearchSpace.build(
            function.definition,
            bind(function.definition, _shapes_only(function.definition, sizes)).sizes,
            "cuda",
            max_unroll=max_unroll,
        )
        for _, sizes in configs
    ]
    found: list[tuple[str, str, dict[str, int], str | None]] = [
        (f"{label} default", label, sizes, None) for label, sizes in configs
    ]
    rng = random.Random(f"{example}:{candidates}")
    for n in range(candidates):
        label, sizes = configs[n % len(configs)]
        options = spaces[n % len(configs)].random(rng).to_json()
        found.append((f"{label} #{n} {options}", label, sizes, options))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="JSON file to write")
    parser.add_argument("--candidates", type=int, default=50, help="random candidates per example")
    parser.add_argument("--max-unroll", type=int, default=64)
    parser.add_argument("--only", default="", help="comma-separated examples")
    parser.add_argument("--jobs", type=int, default=1, help="kernels compiled in parallel")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per kernel (recorded as timed out)"
    )
    parser.add_argument("--compare", metavar="JSON", help="an earlier snapshot to compare with")
    args = parser.parse_args()
    wanted = set(filter(None, args.only.split(",")))
    examples: dict[str, list[tuple[str, dict[str, int]]]] = {}
    for label, example, sizes in bench_configs():
        if not wanted or example in wanted:
            examples.setdefault(example, []).append((label, sizes))
    from pebble import ProcessPool

    jobs = [
        (example, *kernel)
        for example, configs in examples.items()
        for kernel in kernels(example, configs, args.candidates, args.max_unroll)
    ]
    snapshot: dict[str, str] = {}
    with ProcessPool(args.jobs) as pool:
        futures = [
            (name, pool.schedule(cuda_source, (example, label, sizes, options), timeout=args.timeout))
            for example, name, label, sizes, options in jobs
        ]
        for name, future in futures:
            started = time.monotonic()
            try:
                snapshot[name] = future.result()
            except TimeoutError:
                snapshot[name] = TIMED_OUT
            print(f"{time.monotonic() - started:7.2f} s  {name[:110]}", file=sys.stderr, flush=True)
    Path(args.output).write_text(json.dumps(snapshot, indent=1, sort_keys=True))
    errors = sum(v.startswith("error:") for v in snapshot.values())
    late = sum(v == TIMED_OUT for v in snapshot.values())
    print(f"{len(snapshot)} kernels ({errors} failed to compile, {late} timed out) -> {args.output}")
    if args.compare is None:
        return 0
    before = json.loads(Path(args.compare).read_text())
    names = sorted(set(before) | set(snapshot))
    unchecked = [k for k in names if TIMED_OUT in (before.get(k), snapshot.get(k))]
    differ = [k for k in names if k not in unchecked and before.get(k) != snapshot.get(k)]
    for name in differ:
        print(f"differs: {name}")
    print(
        f"{len(names) - len(differ) - len(unchecked)} of {len(names)} identical, "
        f"{len(differ)} differ, {len(unchecked)} timed out in one run (not compared)"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
