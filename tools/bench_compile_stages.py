"""Where one tuning candidate's compile time goes, stage by stage.

    python tools/bench_compile_stages.py [--only gconv] [--candidates 20] [--max-unroll 16]
        [--from-scratch] [--stages K]

For tmm 128x1024x1024 and gconv C=F=16 (the tuner's benchmark problems),
compiles random candidates of the tuner's CUDA space as a tuning compile job
does (a `StagedLowering`: the scop once per problem, the schedule once per
scheduler setting, then the options' passes and the CUDA C with its host
program; NVRTC, which a compile job runs where a GPU exists, is left out).
Prints the time of each stage of candidate `--stages` (default 0), then each
candidate's compile time (schedules computed beforehand, as a worker that
compiled earlier candidates has them) and their median and mean;
`--from-scratch` also times each candidate through the whole pipeline
(`DefIR.lowered`, what every candidate paid before staged reuse).
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
from tcir.compiler.artifacts import artifact_of
from tcir.compiler.lowering import StagedLowering
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


def stages(staged: StagedLowering, options: tcir.MappingOptions, name: str) -> None:
    """Print the time of each stage of one candidate's staged compile."""
    start = time.perf_counter()
    module = staged.scheduled(options).clone()
    print(f"  {'schedule (cached)':28} {(time.perf_counter() - start) * 1e3:8.1f}")
    rest = [*options.tiling_passes(), *options.backend_passes("cuda")]
    for p in PassManager.parse(",".join(rest), verify_each=False).passes:
        start = time.perf_counter()
        PassManager([p], verify_each=False).run(module)
        print(f"  {p.name:28} {(time.perf_counter() - start) * 1e3:8.1f}", flush=True)
    start = time.perf_counter()
    artifact_of(module, name, "cuda")
    print(f"  {'CUDA C and host program':28} {(time.perf_counter() - start) * 1e3:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--only", default="", help="tmm or gconv")
    parser.add_argument("--max-unroll", type=int, help="default: the tuner's (4096)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stages", type=int, default=0, help="the candidate to time stage by stage")
    parser.add_argument("--from-scratch", action="store_true")
    args = parser.parse_args()
    for label, (name, sizes) in PROBLEMS.items():
        if args.only and name != args.only:
            continue
        function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
        binding = bind(function.definition, shapes_only(function, sizes))
        space = SearchSpace.build(function.definition, binding.sizes, "cuda", max_unroll=args.max_unroll)
        rng = random.Random(args.seed)
        candidates = [space.random(rng) for _ in range(args.candidates)]
        staged = StagedLowering(function.def_ir, binding)
        start = time.perf_counter()
        for options in candidates:
            staged.scheduled(options)
        settings = len({o.scheduler_key for o in candidates})
        print(f"\n{label}: {settings} scheduler settings scheduled in {time.perf_counter() - start:.2f} s")
        print(f"candidate {args.stages} ({candidates[args.stages]}), stage by stage (ms):", flush=True)
        stages(staged, candidates[args.stages], name)
        times = []
        for k, options in enumerate(candidates):
            start = time.perf_counter()
            try:
                artifact_of(staged.lowered(options, "cuda"), name, "cuda")
                failed = ""
            except Exception as e:  # a candidate that fails to compile
                failed = f"  (fails: {str(e).splitlines()[0][:60]})"
            times.append(time.perf_counter() - start)
            print(f"  candidate {k:3} {times[-1] * 1e3:9.0f} ms{failed}", flush=True)
        print(
            f"  {len(candidates)} candidates: median {statistics.median(times) * 1e3:.0f} ms, "
            f"mean {statistics.mean(times) * 1e3:.0f} ms"
        )
        if args.from_scratch:
            full = []
            for options in candidates:
                start = time.perf_counter()
                print_cuda(function.def_ir.lowered(binding, options, "cuda"))
                full.append(time.perf_counter() - start)
            print(
                f"  from scratch: median {statistics.median(full) * 1e3:.0f} ms, "
                f"mean {statistics.mean(full) * 1e3:.0f} ms"
            )


if __name__ == "__main__":
    main()
