"""Where one tuning candidate's compile time goes, before and after staged reuse.

    python tools/bench_compile_stages.py [--candidates 20]

For tmm 128x1024x1024 and gconv C=F=16 (the tuner's benchmark problems),
prints the time of each stage of one candidate's compilation for the CUDA
backend (specialization, scop, schedule, tiling, mapping, promotion, kernels,
CUDA C), then the mean time per candidate over random candidates of the
tuner's space compiled from scratch (`DefIR.lowered`, what every candidate
paid before) and through a `StagedLowering` (scop once per problem, schedule
once per scheduler setting), all in this process.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import numpy as np

import tcir
from tcir.backends.cuda.printer import print_cuda
from tcir.compiler.lowering import StagedLowering, pipeline
from tcir.passmanager import PassManager
from tcir.runtime.signature import bind
from tcir.tuner.space import SearchSpace

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PROBLEMS = {
    "tmm 128x1024x1024": ("tmm", {"M": 128, "K": 1024, "N": 1024}),
    "gconv C=F=16": ("gconv", {"N": 32, "G": 32, "C": 16, "F": 16, "H": 14, "W": 14, "KH": 3, "KW": 3}),
}


def shapes_only(function: tcir.Function, sizes: dict[str, int]) -> list[np.ndarray]:
    from tcir.runtime.signature import NUMPY_DTYPES, evaluate

    values = [sizes[n] for n in function.definition.size_params]
    return [
        np.broadcast_to(np.zeros((), NUMPY_DTYPES[p.dtype]), tuple(evaluate(d, values) for d in p.dims))
        for p in function.definition.inputs
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    args = parser.parse_args()
    for label, (name, sizes) in PROBLEMS.items():
        function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
        binding = bind(function.definition, shapes_only(function, sizes))
        space = SearchSpace.build(function.definition, binding.sizes, "cuda", max_unroll=16)
        rng = random.Random(0)
        candidates = [space.random(rng) for _ in range(args.candidates)]
        print(f"\n{label}: one candidate ({candidates[0]}), stage by stage (ms)", flush=True)
        module = function.def_ir.module.clone()
        for p in PassManager.parse(pipeline(function.definition, binding, candidates[0], "cuda")).passes:
            start = time.perf_counter()
            PassManager([p]).run(module)
            print(f"  {p.name:24} {(time.perf_counter() - start) * 1e3:8.1f}", flush=True)
        start = time.perf_counter()
        print_cuda(module)
        print(f"  {'print CUDA C':24} {(time.perf_counter() - start) * 1e3:8.1f}")
        full, staged_times = [], []
        for options in candidates:
            start = time.perf_counter()
            print_cuda(function.def_ir.lowered(binding, options, "cuda"))
            full.append(time.perf_counter() - start)
        staged = StagedLowering(function.def_ir, binding)
        for options in candidates:
            start = time.perf_counter()
            print_cuda(staged.lowered(options, "cuda"))
            staged_times.append(time.perf_counter() - start)
        settings = len({o.scheduler_key for o in candidates})
        print(
            f"  per candidate, {len(candidates)} candidates ({settings} scheduler settings): "
            f"from scratch {statistics.mean(full) * 1e3:.0f} ms, staged {statistics.mean(staged_times) * 1e3:.0f} ms "
            f"(median {statistics.median(full) * 1e3:.0f} -> {statistics.median(staged_times) * 1e3:.0f} ms)"
        )


if __name__ == "__main__":
    main()
