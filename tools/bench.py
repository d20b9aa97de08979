"""The paper's kernels on the GPU: tcir vs PyTorch eager vs torch.compile.

    python tools/bench.py [--json results.json] [--only tmm,MLP3] [--no-compile] [--plot roofline.svg]
    python tools/bench.py --from-json results.json --plot roofline.svg    # redraw, no GPU
    python tools/bench.py --backward [--only softmax]   # derived backward defs vs eager autograd
    python tools/bench.py --dtype float16 [--only tmm]  # half precision: HALF_CONFIGS vs torch in that type

For each configuration (section 7 sizes), every implementation is checked
against PyTorch eager (float32, TF32 off; with `--tf32`, TF32 allowed to
both) before it is timed. `--backward` times the backward defs that tcir
derives (`Function.gradient`) against eager autograd's backward instead, on
the issue's layers (`BACKWARD`), gradients checked against autograd's. Reported per
implementation: p50 device time per call (CUDA events around many launches)
and p50 wall time per call including a synchronize (full Python overhead),
plus the roofline floor of the kernel: max(flops / measured fp32 rate,
bytes / measured bandwidth), both measured in the same run.

With `--dtype float16` or `bfloat16`, the contractions and row-wise layers of
`HALF_CONFIGS` run with every float value of their defs in that type
(`Function.astype`; inputs made by torch, passed to tcir and to torch
alike), against torch in the same type (cuBLAS accumulates in f32); both
are checked against a float64 reference of the same inputs, and a row is ok
where tcir's error is at most twice torch's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass
class Config:
    """One benchmark configuration: a paper kernel at one size."""

    label: str
    example: str
    sizes: dict[str, int]
    flops: float
    peer: Callable[..., Any]
    options: dict[str, Any] = field(default_factory=dict)
    moved: float | None = None
    """Bytes a kernel must move at least, when not all of the inputs (LUTs)."""


def _gconv(torch: Any, F: Any, x: Any, w: Any, b: Any) -> Any:
    n, g, c, h, wd = x.shape
    _, f, _, kh, kw = w.shape
    out = F.conv2d(x.reshape(n, g * c, h, wd), w.reshape(g * f, c, kh, kw), groups=g)
    return out.reshape(n, g, f, h - kh + 1, wd - kw + 1) + b[None, :, :, None, None]


def configs(torch: Any) -> list[Config]:
    F = torch.nn.functional
    bag = lambda table, index: F.embedding_bag(index.long(), table, mode="sum")  # noqa: E731
    relu = torch.relu
    out: list[Config] = []
    for m, k, n in [(128, 32, 256), (128, 1024, 1024), (128, 4096, 16384)]:
        out.append(Config(f"tmm {m}x{k}x{n}", "tmm", {"M": m, "K": k, "N": n}, 2 * m * n * k,
                          lambda a, b: a @ b.T))
    out.append(Config("tbmm 500,26,72,26", "tbmm", {"B": 500, "N": 26, "M": 72, "K": 26},
                      2 * 500 * 26 * 26 * 72, lambda x, y: torch.bmm(x, y.transpose(1, 2))))
    for c, hw in [(4, 56), (8, 28), (16, 14), (32, 7)]:
        sizes = {"N": 32, "G": 32, "C": c, "F": c, "H": hw, "W": hw, "KH": 3, "KW": 3}
        flops = 2 * 32 * 32 * c * c * (hw - 2) ** 2 * 9
        out.append(Config(f"gconv C=F={c} H=W={hw}", "gconv", sizes, flops,
                          lambda x, w, b: _gconv(torch, F, x, w, b)))
    lut = {"E1": 10**7, "D": 64, "B": 128, "L1": 50}
    rows = 128 * 50 * (64 * 4 + 4) + 128 * 64 * 4  # gathered rows, indices, output
    out.append(Config("1LUT", "1LUT", lut, 128 * 50 * 64, bag, moved=rows))
    out.append(Config("2LUT", "2LUT", {**lut, "E2": 10**7, "L2": 50}, 2 * 128 * 50 * 64,
                      lambda t1, i1, t2, i2: (bag(t1, i1), bag(t2, i2)), moved=2 * rows))
    out.append(Config("C3", "C3", {"B": 128, "WX": 1000, "WY": 1024}, 2 * 128 * 1000 * 1024,
                      lambda i, w: i @ w.T))
    out.append(Config("MLP1", "MLP1", {"B": 128, "M": 2000, "N": 128}, 2 * 128 * 2000 * 128,
                      lambda i, w, b: relu(i @ w.T + b)))

    def mlp3(o1: Any, w2: Any, b2: Any, w3: Any, b3: Any, w4: Any, b4: Any) -> Any:
        o2 = relu(o1 @ w2.T + b2)
        o3 = relu(o2 @ w3.T + b3)
        return o2, o3, relu(o3 @ w4.T + b4)

    # Sums whose output cannot fill the GPU (issue: parallel reductions).
    out.append(Config("mv 64x65536", "mv", {"M": 64, "K": 65536}, 2 * 64 * 65536, lambda a, x: a @ x))
    out.append(Config("rowsum 16x4194304", "rowsum", {"B": 16, "K": 1 << 22}, 16 << 22, lambda a: a.sum(1)))
    out.append(Config("MLP3", "MLP3", {"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2},
                      2 * 128 * (128 * 64 + 64 * 32 + 32 * 2), mlp3))
    out += reduction_configs(torch)
    return out


HALF_CONFIGS = (
    "tmm 128x1024x1024", "tmm 128x4096x16384", "tmm 4096x4096x4096", "tbmm 64,256,256,256", "MLP1",
    "softmax 4096x1024", "layernorm 4096x1024",
)
"""The configurations of `--dtype float16/bfloat16`."""


def half_configs(torch: Any) -> list[Config]:
    """`HALF_CONFIGS`: two of the paper's, a large square matmul and a
    batched one of 64 256x256 products besides."""
    extra = [
        Config("tmm 4096x4096x4096", "tmm", {"M": 4096, "K": 4096, "N": 4096}, 2 * 4096**3, lambda a, b: a @ b.T),
        Config("tbmm 64,256,256,256", "tbmm", {"B": 64, "N": 256, "M": 256, "K": 256}, 2 * 64 * 256**3,
               lambda x, y: torch.bmm(x, y.transpose(1, 2))),
    ]
    return [c for c in configs(torch) + extra if c.label in HALF_CONFIGS]


def reduction_configs(torch: Any) -> list[Config]:
    """Row-wise chains, a column sum and attention (issue: fused reductions),
    at sizes in L2 and, the bandwidth-bound ones, beyond it."""
    F = torch.nn.functional
    out: list[Config] = []
    for b, n in [(4096, 1024), (32768, 4096)]:
        rows = {"B": b, "N": n}
        out.append(Config(f"softmax {b}x{n}", "softmax", rows, 5 * b * n, lambda x: torch.softmax(x, 1)))
        out.append(Config(f"layernorm {b}x{n}", "layernorm", rows, 8 * b * n,
                          lambda x, g, h: F.layer_norm(x, (x.shape[1],), g, h, 1e-5)))
    out.append(Config("log-softmax 4096x1024", "log_softmax", {"B": 4096, "N": 1024}, 5 * 4096 * 1024,
                      lambda x: F.log_softmax(x, 1)))
    out.append(Config("rmsnorm 4096x4096", "rmsnorm", {"B": 4096, "N": 4096}, 4 * 4096 * 4096,
                      lambda x, w: F.rms_norm(x, (x.shape[1],), w, 1e-6)))
    for b, n in [(8192, 8192), (32768, 8192)]:
        out.append(Config(f"colsum {b}x{n}", "colsum", {"B": b, "N": n}, b * n, lambda x: x.sum(0)))
    out.append(Config("attention 64x512x64", "attention", {"B": 64, "L": 512, "D": 64}, 4 * 64 * 512 * 512 * 64,
                      lambda q, k, v: F.scaled_dot_product_attention(q, k, v)))
    return out


@dataclass
class BackwardConfig:
    """A layer whose derived backward is timed against eager autograd's."""

    label: str
    source: str
    entry: str
    sizes: dict[str, int]
    peer: Callable[..., Any]
    """The forward in PyTorch, on the def's inputs (index tensors as they are)."""


def backward_configs(torch: Any) -> list[BackwardConfig]:
    F = torch.nn.functional
    read = lambda name: (EXAMPLES / f"{name}.tc").read_text()  # noqa: E731
    return [
        BackwardConfig("tmm 128x1024x1024", read("tmm"), "tmm", {"M": 128, "K": 1024, "N": 1024}, lambda a, b: a @ b.T),
        BackwardConfig("conv2d 32x64x56x56 3x3", read("conv2d"), "conv2d",
                       {"B": 32, "IP": 64, "H": 56, "W": 56, "OP": 64, "KH": 3, "KW": 3}, F.conv2d),
        BackwardConfig("softmax 4096x1024", read("softmax"), "softmax", {"B": 4096, "N": 1024},
                       lambda x: torch.softmax(x, 1)),
        BackwardConfig("1LUT", read("1LUT"), "1LUT", {"E1": 10**7, "D": 64, "B": 128, "L1": 50},
                       lambda table, index: F.embedding_bag(index.long(), table, mode="sum")),
    ]


def run_backward(config: BackwardConfig, torch: Any, cupy: Any) -> dict[str, Any]:
    """Device times of the derived backward def and of eager autograd's
    backward (the forward run once, its graph kept), gradients checked."""
    import tcir
    import tcir.torch

    function = tcir.define(config.source)[config.entry]
    started = time.perf_counter()
    backward = tcir.torch.derived_backward(function)
    row: dict[str, Any] = {"config": config.label, "derive_s": time.perf_counter() - started}
    inputs = device_inputs(function.definition, config.sizes, cupy)
    tensors = [torch.as_tensor(x, device="cuda") for x in inputs]
    floats = [t.requires_grad_() for t in tensors if t.is_floating_point()]
    outputs = config.peer(*tensors)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    grads = [torch.randn_like(o) for o in outputs]
    expected = torch.autograd.grad(outputs, floats, grads, retain_graph=True)
    arguments = [*inputs, *(cupy.asarray(g.detach()) for g in grads)]
    started = time.perf_counter()
    got = backward(*arguments)
    cupy.cuda.runtime.deviceSynchronize()
    row["tcir_compile_s"] = time.perf_counter() - started
    row["error"] = check(got if isinstance(got, tuple) else (got,), tuple(expected), torch)
    implementations = {
        "tcir": lambda: backward(*arguments),
        "eager": lambda: torch.autograd.grad(outputs, floats, grads, retain_graph=True),
    }
    for name, call in implementations.items():
        _time(torch, name, call, row)
    row["ratio"] = row["tcir_device_ms"] / row["eager_device_ms"]
    row["ok"] = row["error"] <= 1e-3
    return row


def main_backward(args: Any) -> None:
    import cupy
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    wanted = set(filter(None, args.only.split(",")))
    rows = []
    print(f"{'config':26} {'tcir bwd dev':>12} {'eager bwd dev':>13} {'ratio':>6} {'max err':>8} {'ok':>3}")
    for config in backward_configs(torch):
        if wanted and config.entry not in wanted and config.label not in wanted:
            continue
        try:
            row = run_backward(config, torch, cupy)
        except Exception as e:  # keep going: report the failure in the table
            row = {"config": config.label, "failure": f"{type(e).__name__}: {e}"[:300]}
            print(f"{config.label:26} FAILED {row['failure']}", flush=True)
            rows.append(row)
            continue
        rows.append(row)
        print(
            f"{row['config']:26} {row['tcir_device_ms']:12.4f} {row['eager_device_ms']:13.4f} "
            f"{row['ratio']:6.2f} {row['error']:8.1e} {'yes' if row['ok'] else 'NO':>3}",
            flush=True,
        )
    Path(args.json).write_text(json.dumps({"backward": rows}, indent=1))
    print("ms; dev = p50 device time per backward; ratio = tcir / eager (the issue's bar: 1.5)")


def device_inputs(definition: Any, sizes: dict[str, int], cupy: Any) -> list[Any]:
    """Random inputs made on the GPU (the LUTs hold 2.5 GB each)."""
    from tcir.runtime.signature import NUMPY_DTYPES, evaluate
    from tcir.runtime.inputs import index_bounds

    values = [sizes[n] for n in definition.size_params]
    indexing = index_bounds(definition)
    cupy.random.seed(0)
    inputs = []
    for param in definition.inputs:
        shape = tuple(evaluate(d, values) for d in param.dims)
        if param.name in indexing:
            high = min(evaluate(d, values) for d in indexing[param.name])
            inputs.append(cupy.random.randint(0, high, shape).astype(NUMPY_DTYPES[param.dtype]))
        else:
            inputs.append(cupy.random.standard_normal(shape, dtype=cupy.float32))
    return inputs


def device_ms(torch: Any, call: Callable[[], Any], launches: int) -> float:
    """p50 over 5 rounds of the mean device time of `launches` back-to-back calls.

    Each round first queues a GPU spin (`torch.cuda._sleep`) longer than the
    host needs to queue the calls, so the events time the kernels back to
    back and not the host's launch rate (which bounds small kernels).
    """
    begin = time.perf_counter()
    for _ in range(launches):
        call()
    host_s = time.perf_counter() - begin
    torch.cuda.synchronize()
    cycles = int(2 * host_s * 2e9)  # twice the host's queueing time at a 2 GHz clock
    rounds = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(cycles)
        start.record()
        for _ in range(launches):
            call()
        end.record()
        end.synchronize()
        rounds.append(start.elapsed_time(end) / launches)
    return statistics.median(rounds)


def wall_ms(torch: Any, call: Callable[[], Any], calls: int) -> float:
    """p50 wall time of one call plus synchronize."""
    samples = []
    for _ in range(calls):
        begin = time.perf_counter()
        call()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(samples)


def machine_peaks(torch: Any) -> tuple[float, float]:
    """Measured matmul FLOP/s (f32, TF32 where `--tf32` allows it) and device-memory bytes/s."""
    a = torch.randn(8192, 8192, device="cuda")
    ms = device_ms(torch, lambda: a @ a, 5)
    flops = 2 * 8192**3 / (ms * 1e-3)
    x = torch.empty(1 << 28, device="cuda")
    y = torch.empty_like(x)
    ms = device_ms(torch, lambda: y.copy_(x), 10)
    return flops, 2 * x.numel() * 4 / (ms * 1e-3)


def call_overhead_us(cupy: Any) -> tuple[float, float]:
    """Host time per call, no synchronize: a bare cupy launch of an empty kernel
    vs a tcir call on a cache hit (tmm 16x16x16: launch plus output allocation)."""
    import tcir

    empty = cupy.RawKernel(r'extern "C" __global__ void empty(float* x) {}', "empty")
    x = cupy.zeros(1, cupy.float32)
    mod = tcir.define((EXAMPLES / "tmm.tc").read_text())
    a = cupy.ones((16, 16), cupy.float32)
    b = cupy.ones((16, 16), cupy.float32)
    mod.tmm(a, b)
    results = []
    for call in (lambda: empty((1,), (1,), (x,)), lambda: mod.tmm(a, b)):
        samples = []
        for _ in range(5):
            cupy.cuda.runtime.deviceSynchronize()
            begin = time.perf_counter()
            for _ in range(200):
                call()
            samples.append((time.perf_counter() - begin) / 200 * 1e6)
        results.append(statistics.median(samples))
    cupy.cuda.runtime.deviceSynchronize()
    return results[0], results[1]


def ptxas_usage(source: str) -> str:
    """Registers, spill-store bytes and static shared bytes of each kernel of
    `source` (`ptxas -v` through nvcc, for sm_90a), e.g. `128r/0s/17408B`."""
    import re
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernels.cu"
        path.write_text(source)
        report = subprocess.run(
            ["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas", "-v", "-o", "/dev/null", str(path)],
            capture_output=True, text=True, check=False,
        ).stderr
    regs = re.findall(r"Used (\d+) registers", report)
    spills = re.findall(r"(\d+) bytes spill stores", report)
    smem = [m or "0" for m in re.findall(r"Used \d+ registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?", report)]
    return " ".join(f"{r}r/{s}s/{m}B" for r, s, m in zip(regs, spills, smem, strict=False))


def tensor_bytes(values: Any) -> int:
    items = values if isinstance(values, (tuple, list)) else [values]
    return sum(v.numel() * v.element_size() for v in items if hasattr(v, "numel"))


def check(got: Any, expected: Any, torch: Any) -> float:
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    error = 0.0
    for g, e in zip(got, expected, strict=True):
        g = torch.as_tensor(g, device="cuda").double()
        scale = max(1.0, e.abs().max().item())
        error = max(error, (g - e.double()).abs().max().item() / scale)
    return error


def in_dtype(tensors: list[Any], dtype: str, torch: Any) -> list[Any]:
    """The float tensors of `tensors` in `dtype` (torch makes the half
    inputs: cupy has no bfloat16; tcir takes the tensors as they are)."""
    return [t.to(getattr(torch, dtype)) if t.is_floating_point() else t for t in tensors]


def errors64(result: Any, reference: Any, peer: Callable[..., Any], tensors: list[Any], torch: Any) -> dict[str, Any]:
    """tcir's and eager's errors against eager in float64 on the same
    inputs, and whether tcir's is at most twice eager's (a half type's rule)."""
    exact = peer(*[t.double() if t.is_floating_point() else t for t in tensors])
    error, eager = check(result, exact, torch), check(reference, exact, torch)
    return {"error64": error, "eager_error64": eager, "ok": error <= 2 * eager + 1e-6}


def _time(torch: Any, name: str, call: Callable[[], Any], row: dict[str, Any]) -> None:
    """`row[name_device_ms]` and `row[name_wall_ms]` of `call`."""
    call()
    torch.cuda.synchronize()
    probe = wall_ms(torch, call, 3)
    launches = max(3, min(200, int(200 / max(probe, 0.01))))
    row[f"{name}_device_ms"] = device_ms(torch, call, launches)
    row[f"{name}_wall_ms"] = wall_ms(torch, call, max(5, launches // 4))


def run(
    config: Config,
    torch: Any,
    cupy: Any,
    peaks: tuple[float, float],
    compile_peer: bool,
    tune_seconds: float,
    ptxas: bool = False,
    dtype: str | None = None,
) -> dict[str, Any]:
    import tcir

    function = tcir.define((EXAMPLES / f"{config.example}.tc").read_text())[config.example]
    if dtype:
        function = function.astype(dtype)
    inputs = device_inputs(function.definition, config.sizes, cupy)
    tensors = [torch.as_tensor(x, device="cuda") for x in inputs]
    if dtype:
        inputs = tensors = in_dtype(tensors, dtype, torch)
    reference = config.peer(*tensors)
    options = tcir.MappingOptions(**config.options) if config.options else None
    started = time.perf_counter()
    result = function(*inputs, options=options)
    cupy.cuda.runtime.deviceSynchronize()
    row: dict[str, Any] = {"config": config.label, "tcir_compile_s": time.perf_counter() - started}
    error = check(result, reference, torch)
    row["tcir_error"] = error
    if dtype:
        against64 = errors64(result, reference, config.peer, tensors, torch)
        row["tcir_error64"], row["eager_error64"] = against64["error64"], against64["eager_error64"]
    from tcir.compiler.defaults import default_options
    from tcir.runtime.signature import bind

    plain = dataclasses.replace(
        options or default_options(function.definition, bind(function.definition, inputs)),
        use_shared_memory=False,
        use_private_memory=False,
    )
    row["nopromo_error"] = check(function(*inputs, options=plain), reference, torch)
    if ptxas:
        row["ptxas"] = ptxas_usage(function.ir(*inputs, backend="cuda", options=options))
    implementations: dict[str, Callable[[], Any]] = {
        "tcir": lambda: function(*inputs, options=options),
        "nopromo": lambda: function(*inputs, options=plain),
        "eager": lambda: config.peer(*tensors),
    }
    if compile_peer:
        compiled = torch.compile(config.peer)
        row["compile_error"] = check(compiled(*tensors), reference, torch)
        implementations["compiled"] = lambda: compiled(*tensors)
    for name, call in implementations.items():
        _time(torch, name, call, row)
    if tune_seconds > 0:  # after the default's timing: later calls find the tuned options
        started = time.perf_counter()
        counts: dict[str, int] = {}
        tuned = function.tune(
            *inputs, candidates=None, population=8, max_time=tune_seconds,
            on_progress=lambda p: counts.update(candidates=p.done, failed=p.failed, pruned=p.pruned),
        )
        row["tuning_s"] = time.perf_counter() - started
        row["tuning_counts"] = counts
        row["tuned_options"] = tuned.to_json()
        row["tuned_error"] = check(function(*inputs, options=tuned), reference, torch)
        _time(torch, "tuned", lambda: function(*inputs, options=tuned), row)
    flop_rate, bandwidth = peaks
    moved = config.moved or tensor_bytes(tensors) + tensor_bytes(reference)
    row["roofline_ms"] = max(config.flops / flop_rate, moved / bandwidth) * 1e3
    row["flops"], row["bytes"] = config.flops, moved
    row["ok"] = max(error, row["nopromo_error"], row.get("tuned_error", 0.0)) <= 1e-3
    if dtype:
        row["ok"] = against64["ok"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="bench.json", help="where to write the results")
    parser.add_argument(
        "--only", default="",
        help="comma-separated kernel names or config labels, or one label whole (commas and all)",
    )
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument(
        "--tuned", type=float, default=0, metavar="SECONDS",
        help="also autotune each kernel for about this long and time the result",
    )
    parser.add_argument(
        "--options", action="append", default=[], metavar="JSON",
        help="time the selected kernels with these MappingOptions fields instead of the "
        "default (repeatable: one table row per options)",
    )
    parser.add_argument(
        "--ptxas", action="store_true",
        help="also report registers/spill bytes/shared bytes of tcir's kernels (needs nvcc)",
    )
    parser.add_argument(
        "--tf32", action="store_true",
        help="allow TF32: tcir with MappingOptions(allow_tf32=True), eager and torch.compile with "
        "torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32",
    )
    parser.add_argument(
        "--dtype", choices=("float16", "bfloat16"),
        help="time HALF_CONFIGS in this type against torch in it (errors against float64)",
    )
    parser.add_argument("--plot", metavar="FILE", help="draw a roofline of the results (SVG, PNG...)")
    parser.add_argument("--from-json", metavar="FILE", help="plot the results of an earlier run, measure nothing")
    parser.add_argument(
        "--backward", action="store_true",
        help="time the derived backward defs of BACKWARD's layers against eager autograd's backward",
    )
    args = parser.parse_args()
    if args.backward:
        main_backward(args)
        return
    if args.from_json:
        if not args.plot:
            parser.error("--from-json needs --plot")
        results = json.loads(Path(args.from_json).read_text())
        from tcir.plotting import roofline

        roofline(results["rows"], tuple(results["peaks"]), args.plot)
        return
    import logging

    import cupy
    import torch

    logging.getLogger("torch").setLevel(logging.ERROR)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    peaks = machine_peaks(torch)
    print(f"measured peaks: {peaks[0] / 1e12:.1f} TFLOP/s fp32, {peaks[1] / 1e12:.2f} TB/s")
    bare, ours = call_overhead_us(cupy)
    print(f"per-call host overhead: bare cupy launch {bare:.1f} us, tcir call {ours:.1f} us")
    labels = {c.label for c in configs(torch) + half_configs(torch)}
    # A label may hold commas ("tbmm 500,26,72,26"): the whole text first.
    wanted = {args.only} if args.only in labels else set(filter(None, args.only.split(",")))
    rows = []
    header = (
        f"{'config':24} {'tcir dev':>9} {'no promo':>9} {'eager dev':>9} {'compl dev':>9} "
        f"{'roof':>8} {'tcir wall':>9} {'eager wall':>10} {'ok':>3}"
    )
    print(header)
    pool = half_configs(torch) if args.dtype else configs(torch)
    selected = [c for c in pool if not wanted or c.example in wanted or c.label in wanted]
    if args.options:
        selected = [
            dataclasses.replace(c, label=f"{c.label} {text}", options=json.loads(text))
            for c in selected
            for text in args.options
        ]
    if args.tf32:
        selected = [
            dataclasses.replace(c, label=f"{c.label} tf32", options={**(c.options or {}), "allow_tf32": True})
            for c in selected
        ]
    for config in selected:
        try:
            row = run(config, torch, cupy, peaks, not args.no_compile, args.tuned, args.ptxas, args.dtype)
        except Exception as e:  # keep going: report the failure in the table
            row = {"config": config.label, "error": f"{type(e).__name__}: {e}"[:300]}
            print(f"{config.label:24} FAILED {row['error']}", flush=True)
            rows.append(row)
            continue
        rows.append(row)
        print(
            f"{row['config']:24} {row['tcir_device_ms']:9.4f} {row['nopromo_device_ms']:9.4f} "
            f"{row['eager_device_ms']:9.4f} "
            f"{row.get('compiled_device_ms', float('nan')):9.4f} {row['roofline_ms']:8.4f} "
            f"{row['tcir_wall_ms']:9.4f} {row['eager_wall_ms']:10.4f} {'yes' if row['ok'] else 'NO':>3}"
            + (
                f"  tuned {row['tuned_device_ms']:.4f} ms after {row['tuning_s']:.0f} s "
                f"{row['tuning_counts']}: {row['tuned_options']}"
                if "tuned_device_ms" in row
                else ""
            )
            + (f"  ptxas {row['ptxas']}" if "ptxas" in row else "")
            + (f"  error vs f64: tcir {row['tcir_error64']:.2e}, torch {row['eager_error64']:.2e}"
               if "tcir_error64" in row else ""),
            flush=True,
        )
    overhead = {"bare_cupy_launch_us": bare, "tcir_call_us": ours}
    Path(args.json).write_text(
        json.dumps({"peaks": peaks, "overhead": overhead, "rows": rows}, indent=1)
    )
    if args.plot:
        from tcir.plotting import roofline

        roofline(rows, peaks, args.plot)
    print(
        "times in ms; dev = p50 device time per call, wall = p50 per call incl. sync; "
        "no promo = tcir with shared/private promotion off"
    )


if __name__ == "__main__":
    sys.exit(main())
