"""Options fuzzing in CI: random mappings from the tuner's own search space,
on the simulated GPU, against the canonical CPU lowering.

At least 400 candidates over every example def, drawn from seeds that
change per run (`TCIR_FUZZ_SEED` fixes the first); each failure is reported
with its seed and the command that reproduces it. A candidate may be
rejected (a `TCError` saying why its options cannot work), never wrong,
racy, or failing any other way. With a GPU, the same candidates run there too.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from tcir.backends.cuda.runtime import cuda_available

from tcir.tools.options_fuzz import PROBLEMS, Verdict, draw, run_candidates

EXAMPLES = Path(__file__).parents[2] / "examples"
SEEDS, PER_SEED = 8, 51  # 408 candidates, about 19 per example def


def _report(verdict: Verdict, seeds: dict[str, int]) -> str:
    c = verdict.candidate
    return (
        f"{verdict.status} on {verdict.backend} (seed {seeds[c.options + c.problem]}): "
        f"{verdict.detail.strip()[:2000]}\n"
        f"  python tools/options_fuzz.py --problem {c.problem} --backend {verdict.backend} "
        f"--options '{c.options}'"
    )


def test_random_mappings_are_correct_and_race_free():
    first = int(os.environ.get("TCIR_FUZZ_SEED", secrets.randbelow(1 << 31)))
    seeds: dict[str, int] = {}
    candidates = []
    for seed in range(first, first + SEEDS):
        for candidate in draw(seed, PER_SEED, EXAMPLES):
            seeds.setdefault(candidate.options + candidate.problem, seed)
            candidates.append(candidate)
    assert len(candidates) >= 400 and {c.problem for c in candidates} == set(PROBLEMS)
    backends = ("cuda-sim", "cuda") if cuda_available() else ("cuda-sim",)
    # A candidate's bound: isl's AST generation alone takes 150-180 s for some
    # mappings (tmm, threads=[5, 23, 4], tile=[6, 13, 45], split_k=16), twice
    # that while the other test processes share the cores.
    verdicts = run_candidates(candidates, backends, timeout=480)
    failures = [_report(v, seeds) for v in verdicts if v.failed]
    ok = sum(v.status == "ok" for v in verdicts)
    rejected = [v for v in verdicts if v.status == "rejected"]
    print(f"options fuzzing, seeds {first}..{first + SEEDS - 1}: {ok} ok, {len(rejected)} rejected")
    assert not failures, f"seeds {first}..{first + SEEDS - 1}:\n" + "\n".join(failures)
    assert len(rejected) <= len(verdicts) // 10, [v.detail for v in rejected[:5]]


def test_max_time_reports_what_was_checked():
    """Past `max_time`, the candidates not yet checked are dropped, not waited for."""
    candidates = draw(7, 12, EXAMPLES)
    assert run_candidates(candidates, ("cuda-sim",), workers=1, max_time=0.0) == []
    checked = run_candidates(candidates[:2], ("cuda-sim",), workers=1, max_time=600.0)
    assert len(checked) == 2 and all(v.status in ("ok", "rejected") for v in checked)


def test_blocks_over_cuda_limits_are_rejected_before_compiling():
    """A block 96 threads deep (CUDA's z is at most 64) would fail to launch
    on a GPU (CUDA_ERROR_INVALID_VALUE, seen fuzzing on an H200): rejected
    on every backend, naming the limit, as the tuner prunes it."""
    from tcir.tools.options_fuzz import Candidate, check

    candidate = Candidate(str(EXAMPLES), "tbmm", '{"threads": [3, 2, 96], "tile": [2, 8, 20, 96]}')
    (verdict,) = check(candidate, ("cuda-sim",))
    assert verdict.status == "rejected" and verdict.detail == "threads in z 96 over the limit 64"


def test_convolution_draws_stay_within_a_block():
    """The convolutions' segments of rows drew threads of a thread several
    filters without a bound: `zoo/conv:conv2d` drew 18 x 4 x 16 threads
    (1152) and the draw itself raised, on 13 of 600 seeds."""
    from tcir.compiler.options import MAX_THREADS_PER_BLOCK, MappingOptions

    problems = [p for p in PROBLEMS if p.startswith("zoo/conv:") and not p.endswith("_filter_grad")]
    for seed in range(200):
        for candidate in draw(seed, 12, EXAMPLES, problems):
            threads = 1
            for t in MappingOptions.from_json(candidate.options).block:
                threads *= t
            assert threads <= MAX_THREADS_PER_BLOCK
