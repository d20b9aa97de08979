"""Host cost of a tcir call on the GPU: tcir against a bare cupy launch of the same kernels.

    python tools/bench_host.py [--only 1LUT,MLP3] [--json host.json]

For small configurations of `tools/bench.py` (and its 1LUT/2LUT), measured in
one run on the same inputs:

- `dev`: p50 device time per call of tcir's kernels (`bench.device_ms`);
- `wall`: p50 wall time of one call plus a synchronize, for tcir on cupy
  arrays, tcir on torch tensors, tcir writing into given outputs (`out=`,
  cupy), the bare launches (cupy `RawKernel`-style
  `Function` calls of the very kernels, outputs allocated once; and the
  same allocating its outputs per call, as a user of `RawKernel` pays for a
  fresh result), and eager;
- `host`: mean host time per call queued without synchronizing (what a call
  costs the Python thread), tcir on cupy arrays and on torch tensors, and bare.

A second table is PyTorch's side, host time per queued call: eager (for tmm,
torch's own `a @ b.T`), the registered operator (as `tcir.torch.operator`
returns it, `torch.ops.tcir.<name>.default`, and through the packet
`torch.ops.tcir.<name>`, which picks the overload per call), `torch.compile`
of `relu(op(...))`, and calls with `options=` (the default mapping's
options) reusing one object or making an equal one per call.

Host times are p50s over rounds in which the calls of a table take turns:
the host speed of the machine drifts by a third within minutes, so only
calls measured side by side compare.

The issues' bars: tcir's wall time at most 4 µs over the bare launch's (a
call that returns fresh outputs against the bare launches allocating theirs,
a call with `out=` against the bare launches into the same outputs); the
registered operator's host time at most eager's + 5 µs; a new equal options
object at most 2 µs over a reused one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import EXAMPLES, check, configs, device_inputs, device_ms, wall_ms  # noqa: E402

import tcir  # noqa: E402

SMALL = ("tmm 128x32x256", "tbmm 500,26,72,26", "1LUT", "2LUT", "MLP3", "C3")


def host_us(calls: dict[str, Callable[[], Any]], sync: Callable[[], None], queued: int = 200, rounds: int = 21) -> dict[str, float]:
    """Mean host time of `queued` calls queued without synchronizing, p50
    over `rounds`, for each of `calls` (in µs). The calls take turns in each
    round, so that a drift of the machine's speed (the host times of one
    process vary by a third from one minute to the next) weighs on all alike."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(rounds):
        for name, call in calls.items():
            sync()
            begin = time.perf_counter()
            for _ in range(queued):
                call()
            samples[name].append((time.perf_counter() - begin) / queued * 1e6)
    sync()
    return {name: statistics.median(values) for name, values in samples.items()}


def pytorch_side(
    function: Any, peer: Callable[..., Any], inputs: list[Any], tensors: list[Any], reference: Any, number: int, torch: Any
) -> dict[str, Any]:
    """Host times of eager (`peer`), the registered operator (as
    `tcir.torch.operator` returns it, and as `torch.ops.tcir.<name>`),
    `torch.compile` around it and calls with options (see the module), their
    results checked; taking turns."""
    import dataclasses

    import tcir.torch
    from tcir.compiler.defaults import default_options
    from tcir.compiler.options import MappingOptions
    from tcir.runtime.signature import bind

    op = tcir.torch.operator(function, name=f"bench_host_{number}")
    compiled = torch.compile(lambda *args: _relu(op(*args), torch), fullgraph=True)
    options = default_options(function.definition, bind(function.definition, inputs))
    fields = {  # what a user writes: the fields that differ from the defaults
        f.name: getattr(options, f.name)
        for f in dataclasses.fields(options)
        if f.init and getattr(options, f.name) != getattr(MappingOptions(), f.name)
    }
    error = max(check(op(*tensors), reference, torch), check(function(*inputs, options=options), reference, torch))
    registered = getattr(torch.ops.tcir, f"bench_host_{number}")
    calls: dict[str, Callable[[], Any]] = {
        "peer": lambda: peer(*tensors),
        "op": lambda: op(*tensors),
        "registered": lambda: registered(*tensors),
        "compiled": lambda: compiled(*tensors),
        "options": lambda: function(*inputs, options=options),
        "new_options": lambda: function(*inputs, options=MappingOptions(**fields)),
    }
    row: dict[str, Any] = {"op_error": error}
    for name, value in host_us(calls, torch.cuda.synchronize).items():
        row[f"{name}_host_us"] = value
    return row


def _relu(outputs: Any, torch: Any) -> Any:
    return tuple(torch.relu(o) for o in outputs) if isinstance(outputs, tuple) else torch.relu(outputs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated config labels")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    import cupy
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    wanted = [w for w in args.only.split(",") if w] or list(SMALL)
    rows = []
    for config in configs(torch):
        if config.label not in wanted:
            continue
        function = tcir.define((EXAMPLES / f"{config.example}.tc").read_text())[config.example]
        inputs = device_inputs(function.definition, config.sizes, cupy)
        tensors = [torch.as_tensor(x, device="cuda") for x in inputs]
        reference = config.peer(*tensors)
        error = max(check(function(*inputs), reference, torch), check(function(*tensors), reference, torch))
        outputs = function(*inputs)
        outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
        for _ in range(2):  # checked, then through the cached launcher
            for output in outputs:  # what out= must overwrite (accumulated outputs: zero)
                output.fill(12345)
            error = max(error, check(function(*inputs, outputs=outputs), reference, torch))
        (entry,) = [e for key, e in function._compiled.items() if key[0] == "cuda"][:1]
        launches = entry.kernel.raw_launches(*inputs, *outputs)

        def bare() -> None:
            for kernel, grid, block, kernel_args in launches:
                kernel(grid, block, kernel_args)

        shapes = [(o.shape, o.dtype) for o in outputs]

        def bare_alloc() -> None:  # what a RawKernel user pays for a fresh result
            for shape, dtype in shapes:
                cupy.empty(shape, dtype)
            bare()

        calls: dict[str, Callable[[], Any]] = {
            "tcir": lambda: function(*inputs),
            "torch": lambda: function(*tensors),
            "tcir_out": lambda: function(*inputs, outputs=outputs),
            "bare": bare,
            "bare_alloc": bare_alloc,
            "eager": lambda: config.peer(*tensors),
        }
        row: dict[str, Any] = {"config": config.label, "error": error, "launches": len(launches)}
        for name, call in calls.items():
            call()
            torch.cuda.synchronize()
            row[f"{name}_wall_us"] = wall_ms(torch, call, 200) * 1e3
        for name, value in host_us(calls, torch.cuda.synchronize).items():
            row[f"{name}_host_us"] = value
        row["tcir_dev_us"] = device_ms(torch, calls["tcir"], 200) * 1e3
        row["eager_dev_us"] = device_ms(torch, calls["eager"], 200) * 1e3
        row.update(pytorch_side(function, config.peer, inputs, tensors, reference, len(rows), torch))
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| config | kernels | tcir dev | eager dev | wall tcir | wall tcir (torch) | wall tcir out= | wall bare | tcir out= - bare | wall bare+alloc | tcir - (bare+alloc) | host tcir | host tcir (torch) | host tcir out= | host bare | eager wall | max err |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['config']} | {r['launches']} | {r['tcir_dev_us']:.1f} | {r['eager_dev_us']:.1f} | {r['tcir_wall_us']:.1f} "
            f"| {r['torch_wall_us']:.1f} | {r['tcir_out_wall_us']:.1f} | {r['bare_wall_us']:.1f} "
            f"| {r['tcir_out_wall_us'] - r['bare_wall_us']:+.1f} "
            f"| {r['bare_alloc_wall_us']:.1f} | {r['tcir_wall_us'] - r['bare_alloc_wall_us']:+.1f} "
            f"| {r['tcir_host_us']:.1f} | {r['torch_host_us']:.1f} | {r['tcir_out_host_us']:.1f} | {r['bare_host_us']:.1f} "
            f"| {r['eager_wall_us']:.1f} | {r['error']:.1e} |"
        )
    print("µs; dev = p50 device time per call; wall = p50 of call + synchronize; host = host time per queued call")
    print("\n| config | host eager | host op | op - eager | host torch.ops.tcir | - eager | host compiled relu(op) | host options reused | host options new | new - reused | max err |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['config']} | {r['peer_host_us']:.1f} | {r['op_host_us']:.1f} | {r['op_host_us'] - r['peer_host_us']:+.1f} "
            f"| {r['registered_host_us']:.1f} | {r['registered_host_us'] - r['peer_host_us']:+.1f} | {r['compiled_host_us']:.1f} "
            f"| {r['options_host_us']:.1f} | {r['new_options_host_us']:.1f} "
            f"| {r['new_options_host_us'] - r['options_host_us']:+.1f} | {r['op_error']:.1e} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(max(r["error"], r["op_error"]) <= 1e-3 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
