"""Options fuzzing: random mappings from the tuner's own search space, checked.

    candidates = draw(seed=7, count=50, examples=Path("examples"))
    verdicts = run_candidates(candidates, backends=("cuda-sim",))

`PROBLEMS` are the defs of `examples/*.tc` (and a few of the layer zoo's) at small odd sizes. A candidate is
one of them with options drawn by `SearchSpace.random` (the tuner's space for
the GPU) from a seeded generator. `check` compiles it with the GPU pipeline
and runs the kernels on each backend (`cuda-sim`, the simulated GPU that also
reports races; `cuda`, a real GPU) on poisoned outputs, and compares every
output with the canonical CPU lowering (`backend="cpu"` without options).

A verdict's status is `ok`; `rejected` (compiling refused the options with a
`TCError`, saying why); `wrong` (numbers off); `fault` (a `KernelFault`:
race, conflict, divergent barrier, out-of-bounds or uninitialized read);
`error` (another `TCError` while running); `crash` (any other exception,
or one that escaped a pass: `tcir.diagnostics.InternalError`; always a tcir bug); `timeout`. `minimize` shrinks a failing candidate toward
the default options while it fails the same way.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from tcir.diagnostics import InternalError
from tcir.errors import KernelFault, TCError
from tcir.compiler.options import DEFAULT, MAX_THREADS_PER_BLOCK, MappingOptions
from tcir.tuner.executors import usable_cores
from tcir.tuner.space import over_gpu_limits

PROBLEMS: dict[str, dict[str, int]] = {
    "1LUT": {"E1": 23, "D": 13, "B": 7, "L1": 5},
    "2LUT": {"E1": 23, "D": 13, "B": 7, "L1": 5, "E2": 19, "L2": 3},
    "C3": {"B": 9, "WX": 21, "WY": 11},
    "MLP1": {"B": 7, "M": 13, "N": 11},
    "MLP3": {"B": 7, "N": 13, "O": 11, "P": 9, "Q": 5},
    "conv1d": {"M": 23, "N": 5},
    "conv2d": {"B": 2, "IP": 3, "H": 9, "W": 7, "OP": 5, "KH": 3, "KW": 2},
    "fcrelu": {"B": 7, "I": 13, "O": 11},
    "gather": {"N": 17, "A": 5, "B": 7},
    "gconv": {"N": 2, "G": 3, "C": 3, "H": 7, "W": 5, "F": 3, "KH": 3, "KW": 2},
    "maxpool2x2": {"B": 2, "C": 3, "H": 9, "W": 7},
    "mv": {"M": 13, "K": 21},
    "outerProductMM": {"P": 3, "Q": 5, "R": 7, "S": 3, "T": 5},
    "rowsum": {"B": 5, "K": 23},
    "sconv2d": {"sh": 2, "sw": 1, "N": 2, "C": 3, "H": 9, "W": 7, "F": 2, "KH": 3, "KW": 2},
    "sgemm": {"N": 13, "M": 11, "K": 9},
    "tbmm": {"B": 3, "N": 7, "M": 9, "K": 5},
    "tmm": {"M": 37, "K": 29, "N": 45},
    "softmax": {"B": 5, "N": 37},
    "log_softmax": {"B": 3, "N": 45},
    "layernorm": {"B": 4, "N": 29},
    "rmsnorm": {"B": 3, "N": 70},
    "colsum": {"B": 41, "N": 13},
    "attention": {"B": 2, "L": 9, "D": 7},
    "zoo/matmul:matmul_tt": {"M": 37, "K": 29, "N": 45},
    "zoo/batch_matmul:batch_matmul": {"B": 3, "M": 21, "K": 19, "N": 35},
    "zoo/conv:conv2d": {"N": 2, "C": 5, "H": 6, "W": 37, "F": 21, "KH": 3, "KW": 3},
    "zoo/conv:conv2d_pad1": {"N": 2, "C": 3, "H": 7, "W": 9, "F": 5, "KH": 3, "KW": 3},
    "zoo/conv:conv2d_stride2_pad1": {"N": 2, "C": 3, "H": 9, "W": 8, "F": 5, "KH": 3, "KW": 3},
    "zoo/conv:conv2d_1x1": {"N": 2, "C": 5, "H": 3, "W": 34, "F": 7},
    "zoo/conv:conv2d_filter_grad": {"N": 3, "C": 5, "H": 7, "W": 9, "F": 6, "OH": 5, "OW": 6},
    "zoo/pool:global_avgpool": {"N": 3, "C": 37, "H": 5, "W": 3},
    "zoo/reduction:instancenorm": {"N": 2, "C": 3, "H": 7, "W": 9},
    "zoo/reduction:colmax": {"B": 41, "N": 13},
    "tmm@f16": {"M": 37, "K": 29, "N": 45},
    "MLP1@f16": {"B": 7, "M": 13, "N": 11},
    "softmax@f16": {"B": 5, "N": 37},
    "tmm@bf16": {"M": 37, "K": 29, "N": 45},
    "layernorm@bf16": {"B": 4, "N": 29},
    "tmm@mma@f16": {"M": 64, "K": 64, "N": 48},
    "tbmm@mma@bf16": {"B": 2, "N": 32, "M": 64, "K": 96},
    "MLP1@mma@f16": {"B": 32, "M": 48, "N": 16},
    "tmm@tf32": {"M": 64, "K": 32, "N": 24},
    "MLP1@tf32": {"B": 32, "M": 24, "N": 16},
    "tbmm@tf32": {"B": 2, "N": 16, "M": 16, "K": 16},
    "zoo/matmul:matmul_nn@tf32": {"M": 64, "K": 64, "N": 32},
    "zoo/matmul:matmul_tn@mma@f16": {"M": 64, "K": 64, "N": 48},
    "zoo/matmul:matmul_nn@mma@f16": {"M": 64, "K": 64, "N": 128},
    "zoo/matmul:matmul_tt@mma@bf16": {"M": 128, "K": 64, "N": 64},
}
"""Each example def (named as its file, or `file:def`) at small odd sizes;
a name with `TF32` after it, at sizes of whole `mma.sync` groups, with
`allow_tf32` and small integers for inputs (exact in TF32: the comparison
stays exact); with `F16` or `BF16` after it, the def on float16 or
bfloat16 (`Function.astype`), compared within the type's tolerance; with
`MMA` before those, at sizes of whole m16n8k16 groups, a third of its
candidates' blocks and tiles shaped for `mma.sync` (`_mma_shaped`) and a
third for `wgmma` (`_wgmma_shaped`); a third of the row-wise chains' a warp
a row (`_rows_shaped`); a third of the convolutions' (`zoo/conv`)
shaped as the defaults' convolution template (`_convolution_shaped`), or
for the filter gradient as its template (`_filter_gradient_shaped`)."""
TF32 = "@tf32"
F16, BF16 = "@f16", "@bf16"
MMA = "@mma"
TF32_THREADS = (8, 16)
"""The rows of threads (Y) of TF32 candidates' mma-shaped blocks [4, Y]."""

FAILURES = ("wrong", "fault", "error", "crash", "timeout")


@dataclass(frozen=True)
class Candidate:
    """A def of `examples` at its `PROBLEMS` sizes, with mapping options."""

    examples: str
    problem: str
    options: str
    """`MappingOptions.to_json()`."""

    def describe(self) -> str:
        return f"{self.problem} {self.options}"


@dataclass(frozen=True)
class Verdict:
    candidate: Candidate
    status: str
    detail: str = ""
    backend: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status in FAILURES

    @property
    def kind(self) -> str:
        """`fault:race`, `wrong`...: what minimization must keep."""
        return f"{self.status}:{self.detail.split(':', 1)[0]}" if self.status == "fault" else self.status


@functools.cache
def _function(examples: str, problem: str) -> Any:
    import tcir

    file, _, name = problem.removesuffix(TF32).removesuffix(F16).removesuffix(BF16).removesuffix(MMA).partition(":")
    path = Path(examples) / f"{file}.tc"
    function = tcir.define(path.read_text(), str(path))[name or file]
    halves = {F16: "float16", BF16: "bfloat16"}
    return next((function.astype(t) for suffix, t in halves.items() if problem.endswith(suffix)), function)


def search_space(examples: str, problem: str) -> Any:
    """The tuner's GPU search space of `problem`."""
    from tcir.tuner.space import SearchSpace

    return SearchSpace.build(_function(examples, problem).definition, PROBLEMS[problem], "cuda")


def draw(seed: int, count: int, examples: Path | str, problems: Sequence[str] = ()) -> list[Candidate]:
    """`count` candidates from `seed`: problems in turn (all by default, in a
    seeded order), options from each one's search space."""
    rng = random.Random(seed)
    names = list(problems or PROBLEMS)
    rng.shuffle(names)
    spaces = {name: search_space(str(examples), name) for name in names}
    candidates = []
    for k in range(count):
        name = names[k % len(names)]
        options = spaces[name].random(rng)
        batch = int(name.startswith("tbmm"))
        if name.endswith(TF32):
            options = _tf32_options(options, rng, batch)
        elif MMA in name:
            roll = rng.random()
            if roll < 1 / 3:
                options = _mma_shaped(options, rng, batch, points=16)
            elif roll < 2 / 3:
                options = _wgmma_shaped(options, rng, batch, points=64)
        elif name.startswith(CONVOLUTIONS) and rng.random() < 1 / 3:
            shaped = _filter_gradient_shaped if name.endswith(FILTER_GRADIENT) else _convolution_shaped
            options = shaped(options, rng, name)
        elif name.removesuffix(F16).removesuffix(BF16) in ROW_CHAINS and rng.random() < 1 / 3:
            rows = len(_function(str(examples), name).definition.stmts[0].lhs_indices)
            options = _rows_shaped(options, rng, rows)
        candidates.append(Candidate(str(examples), name, options.to_json()))
    return candidates


def _tf32_options(options: MappingOptions, rng: random.Random, batch: int) -> MappingOptions:
    """`options` with `allow_tf32`; a third of them with a block of 4 x Y
    threads (or of 4 x 8 threads a warp, `warps` of them) and tiles of whole
    mma groups (of 2Y rows, 8 columns, 8 points, per warp), so that
    `poly-map-to-mma` finds fragments to map, and a third with
    `warpgroup_mma` on a warpgroup's 64 x N x 32 tiles (N a multiple of 8),
    so that it finds wgmma's: the m, n and k tile sizes of a contraction,
    after 1 for each of its `batch` dimensions."""
    roll = rng.random()
    if roll < 1 / 3:
        return replace(options, allow_tf32=True)
    if roll < 2 / 3:
        return replace(_wgmma_shaped(options, rng, batch, points=32), allow_tf32=True)
    return replace(_mma_shaped(options, rng, batch, points=8), allow_tf32=True)


def _wgmma_shaped(options: MappingOptions, rng: random.Random, batch: int, points: int) -> MappingOptions:
    """`options` with `warpgroup_mma` on a warpgroup's 64 x N x `points`
    tiles (N a multiple of 8, or a 128-byte row of halves: what an MN-major
    Y's tile needs; `points` a 128-byte row: 32 f32, 64 halves)."""
    tile = [64, 8 * rng.choice((1, 2, 3, 4, 8)), points]
    return replace(
        options, warpgroup_mma=True, threads=[4, 8], warps=[1, 4], size_per_thread=[], tile=[1] * batch + tile,
        parallel_reductions=False, split_k=1, use_shared_memory=True,
        max_shared_memory=max(options.max_shared_memory, 49152),
    )


ROW_CHAINS = ("softmax", "log_softmax", "layernorm", "rmsnorm", "rowsum", "zoo/reduction:instancenorm")


def _rows_shaped(options: MappingOptions, rng: random.Random, rows: int) -> MappingOptions:
    """`options` shaped as the defaults' short-row template: block
    reductions, a warp a row (`threads=[32, Y]`) and the innermost of the
    `rows` row dimensions tiled (by Y or not), so that its rows go to
    thread y."""
    y = rng.choice((1, 2, 3, 4, 8))
    tile = [*[1] * (rows - 1), rng.choice((y, 2 * y, max(1, y - 1)))]
    return replace(
        options, block_reductions=True, threads=[32, y], warps=[], size_per_thread=[], tile=tile,
        parallel_reductions=False, split_k=1,
    )


CONVOLUTIONS = "zoo/conv:"
FILTER_GRADIENT = "_filter_grad"


def _filter_gradient_shaped(options: MappingOptions, rng: random.Random, problem: str) -> MappingOptions:
    """`options` shaped as the defaults' filter-gradient template: tiles of
    filters x channels x every tap, split-K over the images (one a slice,
    its member untiled, or two), rows of the output gradient a step; a
    thread for each channel (or every other) at each tap."""
    sizes = PROBLEMS[problem]
    taps = [sizes["H"] - sizes["OH"] + 1, sizes["W"] - sizes["OW"] + 1]
    images, channels = rng.choice((1, 2)), rng.choice((2, 4, 8))
    tile = [rng.choice((4, 8, 32)), channels, *taps, images, rng.choice((1, 2, 3)), rng.choice((2, 3, sizes["OW"]))]
    return replace(
        options, tile=tile, blocks=[], threads=[taps[1], taps[0], channels // rng.choice((1, 2))], warps=[],
        size_per_thread=[], split_k=-(-sizes["N"] // images), parallel_reductions=False, use_shared_memory=True,
        max_private_elements=rng.choice((32, 64)), vector_width=rng.choice((1, 2)),
    )


def _convolution_shaped(options: MappingOptions, rng: random.Random, problem: str) -> MappingOptions:
    """`options` shaped as the defaults' convolution templates: tiles of
    filters x rows x pixels of an NCHW output and a channel step with all
    taps, threads along the pixels, a thread several filters (blocks whose
    threads are whole warps or not, so that the image's promotion and both
    ways of dealing copies to threads, `FlatCopy` and `Copy`, run); or, a
    third of them, the whole output plane a block, on squares of pixels or
    segments of rows a thread (the narrow-convolution rules)."""
    sizes = PROBLEMS[problem]
    taps = [sizes["KH"], sizes["KW"]] if "KH" in sizes else []
    height, width = _output_plane(problem, sizes)
    common = dict(blocks=[], warps=[], size_per_thread=[], parallel_reductions=False, split_k=1, use_shared_memory=True)
    if taps and rng.random() < 1 / 3:
        filters = rng.choice((8, 16, 32))
        if rng.random() < 0.5:  # squares of pixels
            side = rng.choice((1, 2, 3))
            threads = [-(-width // side), -(-height // side)]
        else:  # segments of rows, a thread several filters, in a block of at most 1024 threads
            segments = -(-width // rng.choice((2, 3, 4, 7)))
            groups = [g for d in (2, 4, 8) if segments * height * (g := -(-filters // d)) <= MAX_THREADS_PER_BLOCK]
            threads = [segments, height, rng.choice(groups or [1])]
        return replace(
            options, tile=[1, filters, height, width, rng.choice((1, 2, 8)), *taps], threads=threads,
            max_private_elements=rng.choice((32, 64)), **common,
        )
    filters, rows = rng.choice((8, 16, 32)), rng.choice((1, 2, 4))
    columns = rng.choice((16, 32, width))
    points, per_thread = rng.choice((1, 2, 3, 4)), rng.choice((2, 4, 8))
    return replace(
        options, tile=[1, filters, rows, columns, rng.choice((1, 2, 4, 8)), *taps],
        threads=[-(-columns // points), 1, -(-filters // per_thread)], max_private_elements=rng.choice((32, 64)),
        **common,
    )


def _output_plane(problem: str, sizes: dict[str, int]) -> tuple[int, int]:
    """The output rows and columns of a `zoo/conv` problem."""
    if problem.endswith("stride2_pad1"):
        return -(-sizes["H"] // 2), -(-sizes["W"] // 2)
    if problem.endswith("_pad1") or "KH" not in sizes:
        return sizes["H"], sizes["W"]
    return sizes["H"] - sizes["KH"] + 1, sizes["W"] - sizes["KW"] + 1


def _mma_shaped(options: MappingOptions, rng: random.Random, batch: int, points: int) -> MappingOptions:
    """`options` with a block of 4 x Y threads (or of 4 x 8 threads a warp,
    `warps` of them) and tiles of whole `mma.sync` groups (2Y rows, 8
    columns, `points` of the reduction: 8 for TF32, 16 for half types)."""
    rows = rng.choice(TF32_THREADS)
    across, down = (rng.choice((1, 2)), rng.choice((1, 2))) if rows == 8 else (1, 1)
    warps = [across, down] if rows == 8 else []
    tile = [2 * rows * down * rng.choice((1, 2)), 8 * across * rng.choice((1, 2, 4)), points * rng.choice((1, 2, 4))]
    return replace(
        options, threads=[4, rows], warps=warps, size_per_thread=[], tile=[1] * batch + tile, parallel_reductions=False
    )


# --- checking one candidate (in a worker process) -------------------------------


@dataclass(frozen=True)
class _Reference:
    inputs: list[Any]
    expected: list[np.ndarray]
    outputs: list[tuple[tuple[int, ...], str, bool]]
    """Shape, dtype and whether it starts at zero, per output."""


@functools.cache
def _reference(examples: str, problem: str) -> _Reference:
    """Inputs and the canonical CPU lowering's outputs of `problem`."""
    from tcir.runtime.inputs import random_inputs
    from tcir.runtime.signature import bind
    from tcir.tuner.jobs import Problem, output_specs

    function = _function(examples, problem)
    inputs = random_inputs(function.definition, PROBLEMS[problem], 0)
    if problem.endswith(TF32):
        rng = np.random.default_rng(0)
        inputs = [rng.integers(-4, 5, x.shape).astype(x.dtype) if isinstance(x, np.ndarray) else x for x in inputs]
    result = function(*inputs, backend="cpu")
    expected = [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]
    sizes = dict(bind(function.definition, inputs).sizes)
    specs = output_specs(Problem(function.definition, sizes, "cpu"))
    return _Reference(inputs, expected, [(s.shape, s.dtype, s.zero) for s in specs])


def _outputs(reference: _Reference, xp: Any) -> list[Any]:
    """Outputs to run into: zeros where the def accumulates first, else poison."""
    from tcir.runtime.signature import NUMPY_DTYPES

    arrays = []
    for shape, dtype, zero in reference.outputs:
        numpy_dtype = np.dtype(NUMPY_DTYPES[dtype])
        poison = 0 if zero else (np.nan if numpy_dtype.kind == "f" else -1)
        arrays.append(xp.full(shape, poison, numpy_dtype))
    return arrays


def _run(module: Any, entry: str, reference: _Reference, backend: str) -> list[np.ndarray]:
    from tcir.backends.cuda.launch import extract_host_program

    from tcir.backends.cuda.printer import print_cuda

    host = extract_host_program(module, entry)
    source = print_cuda(module)  # what the GPU would compile: its printing is checked on cuda-sim too
    if backend == "cuda-sim":
        from tcir.backends.cuda_sim.runtime import SimProgram

        outputs = _outputs(reference, np)
        first = len(reference.inputs)
        undefined = [first + k for k, (_, _, zero) in enumerate(reference.outputs) if not zero]
        SimProgram(module, host)(*reference.inputs, *outputs, undefined=undefined)
        return outputs
    import cupy

    from tcir.backends.cuda.runtime import CudaProgram

    inputs = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in reference.inputs]
    outputs = _outputs(reference, cupy)
    CudaProgram(source, host)(*inputs, *outputs)
    return [cupy.asnumpy(o) for o in outputs]


def check(candidate: Candidate, backends: Sequence[str] = ("cuda-sim",)) -> list[Verdict]:
    """Compile `candidate` for the GPU and run it on each of `backends`."""
    from tcir.runtime.inputs import within_tolerance
    from tcir.runtime.signature import bind

    start = time.perf_counter()
    function = _function(candidate.examples, candidate.problem)
    try:
        reference = _reference(candidate.examples, candidate.problem)
        options = MappingOptions.from_json(candidate.options)
        if (limit := over_gpu_limits(options)) is not None:  # what the tuner never launches
            return [Verdict(candidate, "rejected", limit, b, time.perf_counter() - start) for b in backends]
        binding = bind(function.definition, reference.inputs)
        try:
            module = function.lowered(binding, options, "cuda")
        except InternalError as e:  # a pass failed unexpectedly: a bug
            trace = "".join(traceback.format_exception(e.__cause__ or e))
            return [Verdict(candidate, "crash", f"{e.message}\n{trace}", b) for b in backends]
        except TCError as e:
            return [Verdict(candidate, "rejected", str(e), b, time.perf_counter() - start) for b in backends]
        verdicts = []
        for backend in backends:
            try:
                outputs = _run(module, function.name, reference, backend)
            except KernelFault as e:
                verdicts.append(Verdict(candidate, "fault", f"{e.fault}: {e.message}", backend))
                continue
            except TCError as e:
                verdicts.append(Verdict(candidate, "error", str(e), backend))
                continue
            bad = []
            for param, got, expected in zip(function.definition.outputs, outputs, reference.expected):
                good, error = within_tolerance(got, expected, param.dtype)
                if not good:
                    bad.append(f"{param.name} max rel. error {error:.3g}")
            verdicts.append(Verdict(candidate, "wrong" if bad else "ok", "; ".join(bad), backend))
    except Exception:  # noqa: BLE001  (anything but a TCError is a bug to report)
        return [Verdict(candidate, "crash", traceback.format_exc(), b) for b in backends]
    seconds = time.perf_counter() - start
    return [replace(v, seconds=seconds) for v in verdicts]


# --- many candidates, in worker processes ------------------------------------------


def _initialize(cache_dir: str) -> None:
    os.environ["TCIR_CACHE_DIR"] = cache_dir  # the canonical CPU builds stay out of the user's cache


def run_isolated(
    check_one: Callable[..., Any],
    items: Iterable[Any],
    args: tuple[Any, ...],
    failed: Callable[[Any, str, str], Any],
    *,
    workers: int | None = None,
    timeout: float = 300.0,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    max_time: float | None = None,
    on_result: Callable[[Any], None] | None = None,
) -> list[Any]:
    """`check_one(item, *args)` for every item in `workers` spawned processes
    (pebble: an item that hangs past `timeout` seconds or kills its process
    fails alone, as `failed(item, "timeout" or "crash", why)`), the results
    in the items' order; after `max_time` seconds, the items not yet checked
    are dropped and the results so far returned."""
    from pebble import ProcessExpired, ProcessPool

    deadline = None if max_time is None else time.monotonic() + max_time
    results: list[Any] = []
    # Spawned, not forked: a parent that touched CUDA cannot fork workers that use it.
    context = multiprocessing.get_context("spawn")
    with ProcessPool(workers or usable_cores(), initializer=initializer, initargs=initargs, context=context) as pool:
        jobs = [(item, pool.schedule(check_one, (item, *args), timeout=timeout)) for item in items]
        out_of_time = False
        for item, future in jobs:
            if not out_of_time:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                out_of_time = not wait([future], remaining).done
            if out_of_time and not future.done():  # past max_time: dropped
                future.cancel()
                continue
            try:
                result = future.result()
            except FutureTimeout:
                result = failed(item, "timeout", f"over {timeout:g} s")
            except ProcessExpired as e:
                result = failed(item, "crash", f"worker died: {e}")
            results.append(result)
            if on_result is not None:
                on_result(result)
        if out_of_time:
            pool.stop()
    return results


def run_candidates(
    candidates: Iterable[Candidate],
    backends: Sequence[str] = ("cuda-sim",),
    *,
    workers: int | None = None,
    timeout: float = 300.0,
    on_verdicts: Callable[[list[Verdict]], None] | None = None,
    max_time: float | None = None,
) -> list[Verdict]:
    """`check` every candidate in worker processes (`run_isolated`: a timeout
    or a dead worker fails the candidate on every backend)."""

    def failed(candidate: Candidate, kind: str, why: str) -> list[Verdict]:
        return [Verdict(candidate, kind, why, b, timeout if kind == "timeout" else 0.0) for b in backends]

    with tempfile.TemporaryDirectory(prefix="tcir-fuzz-") as cache_dir:
        found = run_isolated(check, candidates, (tuple(backends),), failed, workers=workers, timeout=timeout,
                             initializer=_initialize, initargs=(cache_dir,), max_time=max_time, on_result=on_verdicts)
    return [verdict for verdicts in found for verdict in verdicts]


# --- minimizing a failure -------------------------------------------------------------


def _simpler(options: MappingOptions) -> Iterable[dict[str, Any]]:
    """Changes that bring `options` one step closer to the defaults (or smaller)."""
    for f in fields(MappingOptions):
        if not f.init:
            continue
        value, default = getattr(options, f.name), getattr(DEFAULT, f.name)
        if value == default:
            continue
        if isinstance(value, list):
            yield {f.name: []}
            if len(value) > 1:
                yield {f.name: value[:-1]}
            for k, v in enumerate(value):
                if v > 1:
                    yield {f.name: [*value[:k], max(1, v // 2), *value[k + 1 :]]}
        elif f.name == "unroll":
            yield {"unroll": max(1, value // 4)}
        else:
            yield {f.name: default}


def minimize(verdict: Verdict, backend: str = "cuda-sim", budget: int = 200) -> Verdict:
    """A smallest variant of a failing candidate that fails the same way."""
    best = verdict
    tried = 0
    progress = True
    while progress and tried < budget:
        progress = False
        options = MappingOptions.from_json(best.candidate.options)
        for change in _simpler(options):
            tried += 1
            try:
                candidate = replace(best.candidate, options=replace(options, **change).to_json())
            except TCError:  # e.g. more threads than a block may have
                continue
            (found,) = check(candidate, (backend,))
            if found.kind == best.kind:
                best, progress = found, True
                break
    return best
