"""The paper configurations once on the GPU, for compute-sanitizer.

    python tools/bench.py --tuned 15 --no-compile --json tuned.json     # tuned mappings
    compute-sanitizer --tool racecheck python tools/gpu_sanitize.py --tuned tuned.json
    compute-sanitizer --tool memcheck  python tools/gpu_sanitize.py --tuned tuned.json
    (and --tool synccheck, --tool initcheck)

Runs each configuration of `tools/bench.py` (the paper's sizes, and the sums)
with the default mapping and, given `--tuned`, with the tuned options that
`bench.py --tuned` recorded for it; checks every result against PyTorch
eager (float32, TF32 off). Exits with 1 if any result is wrong; the
sanitizer reports hazards and errors itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import EXAMPLES, check, configs, device_inputs  # noqa: E402

import tcir  # noqa: E402


def tuned_options(path: Path | None) -> dict[str, tcir.MappingOptions]:
    """Config label -> the tuned options `bench.py --tuned --json` recorded."""
    if path is None:
        return {}
    rows = json.loads(path.read_text())["rows"]
    return {r["config"]: tcir.MappingOptions.from_json(r["tuned_options"]) for r in rows if "tuned_options" in r}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuned", type=Path, help="bench.py --tuned --json output")
    parser.add_argument("--only", default="", help="comma-separated kernel names or configuration labels")
    args = parser.parse_args()
    import cupy
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tuned = tuned_options(args.tuned)
    wanted = set(filter(None, args.only.split(",")))
    failures = 0
    for config in configs(torch):
        if wanted and config.example not in wanted and config.label not in wanted:
            continue
        function = tcir.define((EXAMPLES / f"{config.example}.tc").read_text())[config.example]
        inputs = device_inputs(function.definition, config.sizes, cupy)
        reference = config.peer(*[torch.as_tensor(x, device="cuda") for x in inputs])
        variants = {"default": None, **({"tuned": tuned[config.label]} if config.label in tuned else {})}
        for variant, options in variants.items():
            error = check(function(*inputs, options=options), reference, torch)
            ok = error <= 1e-3
            failures += not ok
            shown = "" if options is None else f" {options}"
            print(f"{config.label:24} {variant:8} max rel. error {error:.1e} {'ok' if ok else 'MISMATCH'}{shown}", flush=True)
        del inputs, reference
        torch.cuda.empty_cache()
        cupy.get_default_memory_pool().free_all_blocks()
    cupy.cuda.runtime.deviceSynchronize()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
