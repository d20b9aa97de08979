"""Autotuning on the CPU backend: a short search, the cache it leaves, the tool."""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir import TCError
from tcir.runtime.signature import Binding
from tcir.tools.tcir_tune import main as tcir_tune
from tcir.compiler.artifacts import target_architecture
from tcir.compiler.cache import FILE_NAME, CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.compiled import best_options, compile_cached
from tcir.compiler.options import MappingOptions
from tcir.tuner.space import SearchSpace
from tcir.tuner.tune import VERIFY_ROUNDS, Tuner, tune

EXAMPLES = Path(__file__).parents[2] / "examples"
SIZES = {"M": 64, "N": 64, "K": 64}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("TCIR_CACHE_DIR", str(directory))
    return directory


@pytest.fixture(scope="module")
def tmm() -> tcir.Function:
    return tcir.define((EXAMPLES / "tmm.tc").read_text()).tmm


def inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2)]


def small_space(tmm: tcir.Function) -> SearchSpace:
    """The tmm space with unrolling up to 16: fast compiles for tests."""
    return SearchSpace.build(tmm.definition, SIZES, "cpu", max_unroll=16)


def test_short_tuning_run_stores_the_best(tmm, cache_dir):
    progress = []
    result = Tuner(
        tmm,
        inputs(),
        backend="cpu",
        candidates=8,
        population=4,
        workers=2,
        space=small_space(tmm),
        on_progress=progress.append,
    ).run()
    assert result.stopped == "candidates"
    assert result.default_seconds is not None
    assert result.best_seconds <= result.default_seconds
    assert [p.done for p in progress] == list(range(1, 9)) and progress[-1].total == 8
    assert progress[-1].measured == len(result.outcomes) == 8
    assert sum(p.improved for p in progress) >= 1 and progress[0].improved

    assert best_options(tmm.definition, SIZES, "cpu") == result.best
    key = ProblemKey.of(tmm.definition, SIZES, target_architecture("cpu"))
    with CompilationCache(cache_dir) as cache:  # None: the canonical loops were faster
        assert cache.best(key) == (None if result.best is None else (result.best, result.best_seconds))
        assert result.best is None or cache.get_code(key, result.best) is not None, "the best version's code is kept"
    a, b = inputs(1)
    c = np.zeros((64, 64), np.float32)
    compile_cached(tmm.def_ir, Binding(dict(SIZES), ()), result.best, "cpu")(a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-4, atol=1e-4)


def test_failing_candidates_are_discarded_not_fatal(tmm):
    with pytest.raises(tcir.TCError, match="no candidate compiled and ran correctly.*timed out"):
        tune(tmm, *inputs(), candidates=2, timeout=0.01, workers=1)


def test_max_time_spent_before_any_measurement_says_so(tmm):
    """A budget shorter than making the inputs and compiling one candidate
    (1LUT's 2.5 GB tables in 10 s did this): the error names max_time."""
    with pytest.raises(tcir.TCError, match=r"no candidate was measured within max_time=1e-06 s"):
        tune(tmm, *inputs(), max_time=1e-6, workers=1)


def test_bad_inputs_are_user_errors(tmm):
    with pytest.raises(tcir.ShapeError):
        tune(tmm, np.zeros((4, 4), np.float32), np.zeros((5, 5), np.float32))
    with pytest.raises(tcir.TCError, match="candidates must be at least 1"):
        tune(tmm, *inputs(), candidates=0)
    with pytest.raises(tcir.TCError, match="give candidates, max_time or both"):
        tune(tmm, *inputs(), candidates=None)
    with pytest.raises(tcir.TCError, match="population"):
        tune(tmm, *inputs(), population=0)


def test_tcir_tune_help(capsys):
    with pytest.raises(SystemExit) as exit:
        tcir_tune(["--help"])
    assert exit.value.code == 0
    assert "--candidates" in capsys.readouterr().out


def test_tcir_tune_reports_missing_sizes(capsys):
    with pytest.raises(SystemExit) as exit:
        tcir_tune([str(EXAMPLES / "tmm.tc"), "--entry", "tmm", "--sizes", "M=8"])
    assert exit.value.code == 1
    assert "give a value for K, N" in capsys.readouterr().err


def test_tcir_tune_on_the_simulated_gpu(tmm, capsys):
    """`tcir-tune --backend cuda-sim`: GPU mappings checked on the simulator;
    the best goes to the cache under the `cuda-sim` target, and later calls
    on that backend use it."""
    sizes = {"M": 24, "K": 16, "N": 20}
    argv = [str(EXAMPLES / "tmm.tc"), "--entry", "tmm", "--sizes", "M=24,K=16,N=20"]
    argv += ["--backend", "cuda-sim", "--candidates", "3", "--workers", "2"]
    argv += ["--max-unroll", "4"]
    assert tcir_tune(argv) == 0
    assert "tuning tmm(M=24, K=16, N=20) on cuda-sim" in capsys.readouterr().out
    best = best_options(tmm.definition, sizes, "cuda-sim")
    assert best is not None and best.threads is not None
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((24, 16), np.float32), rng.standard_normal((20, 16), np.float32)
    np.testing.assert_allclose(tmm(a, b, backend="cuda-sim"), a @ b.T, rtol=1e-4, atol=1e-4)


def _measurements(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=5) as connection:
            return connection.execute("SELECT COUNT(*) FROM measurements WHERE options != 'null'").fetchone()[0]
    except sqlite3.Error:
        return 0


FRESH_PROCESS_CHECK = """
import sys
import numpy as np
import tcir
from tcir import TCError
from tcir.api import Function
from tcir.compiler.cache import CompilationCache

source, cache_dir = sys.argv[1], sys.argv[2]
with CompilationCache(cache_dir) as cache:
    assert cache.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

used = []
compile_with = Function._compile

def spy(self, binding, options, backend):
    used.append(options)
    return compile_with(self, binding, options, backend)

Function._compile = spy
tmm = tcir.define(source).tmm
rng = np.random.default_rng(7)
a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
np.testing.assert_allclose(tmm(a, b), a @ b.T, rtol=1e-4, atol=1e-4)
assert len(used) == 1 and used[0] is not None, used
print(used[0].to_json())
"""


def test_killed_tuner_leaves_a_usable_cache(tmm, cache_dir):
    """SIGKILL to the tuner and its workers mid-run; a fresh process then
    opens the cache, calls with the best options recorded, and computes right."""
    command = [
        sys.executable,
        "-m",
        "tcir.tools.tcir_tune",
        str(EXAMPLES / "tmm.tc"),
        "--entry",
        "tmm",
        "--sizes",
        "M=64,N=64,K=64",
        "--candidates",
        "400",
        "--population",
        "4",
        "--workers",
        "1",
        "--max-unroll",
        "16",
        "--cache-dir",
        str(cache_dir),
    ]
    # A session of its own: the kill reaches the worker processes too.
    tuner = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, env=os.environ.copy(), start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while _measurements(cache_dir / FILE_NAME) < 4 and time.monotonic() < deadline:
            assert tuner.poll() is None, "the tuner stopped early"
            time.sleep(0.1)
        assert _measurements(cache_dir / FILE_NAME) >= 4, "not 4 candidates measured in time"
    finally:
        os.killpg(tuner.pid, signal.SIGKILL)
        tuner.wait()

    checked = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS_CHECK, (EXAMPLES / "tmm.tc").read_text(), str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    key = ProblemKey.of(tmm.definition, SIZES, target_architecture("cpu"))
    with CompilationCache(cache_dir) as cache:
        recorded = cache.best(key)
    assert recorded is not None
    assert MappingOptions.from_json(checked.stdout.strip().splitlines()[-1]) == recorded[0]
    assert not list(cache_dir.glob(f"{FILE_NAME}.corrupt-*")), "the cache was set aside"
    again = tune(tmm, *inputs(), candidates=2, workers=1, space=small_space(tmm))
    assert again is not None


def test_resume_after_sigkill_loses_no_measured_candidate(tmm, cache_dir):
    """`tcir-tune --resume` after SIGKILL: every measurement the killed run
    recorded is in the resumed run's results, none of them measured again."""
    command = [sys.executable, "-m", "tcir.tools.tcir_tune", str(EXAMPLES / "tmm.tc")]
    command += ["--entry", "tmm", "--sizes", "M=64,N=64,K=64", "--candidates", "400"]
    command += ["--population", "4", "--workers", "1", "--max-unroll", "16"]
    command += ["--cache-dir", str(cache_dir)]
    tuner = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _measurements(cache_dir / FILE_NAME) < 6 and time.monotonic() < deadline:
            assert tuner.poll() is None, "the tuner stopped early"
            time.sleep(0.05)
    finally:
        os.killpg(tuner.pid, signal.SIGKILL)
        tuner.wait()
    key = ProblemKey.of(tmm.definition, SIZES, target_architecture("cpu"))
    with CompilationCache(cache_dir) as cache:
        before = [(o.to_json(), t) for o, t, _ in cache.measurements(key)]
    assert len(before) >= 6
    tuner = Tuner(
        tmm, inputs(), backend="cpu", candidates=8, population=4, workers=1,
        space=small_space(tmm), cache=cache_dir, resume=True,
    )  # fmt: skip
    result = tuner.run()
    restored = [(o.options.to_json(), o.seconds) for o in result.outcomes if o.from_cache]
    assert sorted(restored) == sorted(before)
    fresh = [o.options.to_json() for o in result.outcomes if not o.from_cache]
    assert not set(fresh) & {options for options, _ in before}, "measured again"
    assert len(fresh) == 8
    with CompilationCache(cache_dir) as cache:  # and the best timed again with the canonical loops
        assert len(cache.measurements(key)) == len(before) + len(fresh) + VERIFY_ROUNDS


def test_max_time_stops_within_one_candidate(tmm):
    """Without a candidate limit the tuner runs until `max_time`, then
    cancels what still runs: it never overruns by more than one candidate."""
    progress = []
    begin = time.monotonic()
    result = Tuner(
        tmm, inputs(), backend="cpu", candidates=None, max_time=6.0, population=4, workers=2,
        space=small_space(tmm), on_progress=progress.append,
    ).run()  # fmt: skip
    elapsed = time.monotonic() - begin
    slowest = max(p.elapsed - q.elapsed for p, q in zip(progress[1:], progress))
    assert elapsed < 6.0 + max(slowest, 1.0) + 2.0  # + start-up of the reference
    assert result.stopped == "max_time" and progress[-1].total is None
    # How many it measures is the machine's speed (a benchmark's business):
    # 3 to 20 in 6 s on 2 cores, depending on what else runs.
    assert len(result.outcomes) == progress[-1].measured >= 1


def test_max_time_counts_from_the_tuners_creation(tmm):
    """Making the tuner (copying the inputs to the host: seconds for a large
    table) is part of `max_time`: a run begun past it measures nothing."""
    tuner = Tuner(
        tmm, inputs(), backend="cpu", candidates=None, max_time=3.0, population=4, workers=1,
        space=small_space(tmm),
    )  # fmt: skip
    time.sleep(3.2)
    begin = time.monotonic()
    with pytest.raises(TCError, match="no candidate was measured within max_time=3 s"):
        tuner.run()
    assert time.monotonic() - begin < 10.0


def test_tcir_tune_ends_with_a_table_of_the_best(tmm, capsys, cache_dir):
    """The table fits 100 columns and shows the options the CPU search
    varies that differ from `MappingOptions()` (no GPU field); the summary
    says what later calls use."""
    argv = [str(EXAMPLES / "tmm.tc"), "--entry", "tmm", "--sizes", "M=64,K=64,N=64"]
    argv += ["--candidates", "4", "--workers", "2", "--max-unroll", "4"]
    assert tcir_tune(argv + ["--search", "tpe"]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 100, out
    table = out[out.index("best 4 of 4 measured (0 pruned):") :].splitlines()[1:]
    assert table[0].split()[:5] == ["#", "time", "vs", "default", "options"]
    rows = [row.split() for row in table if row[:4].strip().isdigit()]
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    times = [float(row[1]) for row in rows]
    assert times == sorted(times)
    for field in ("threads", "blocks", "vector_width", "use_shared_memory", "async_copies", "specialize"):
        assert field not in out
    assert "later calls of tmm with these shapes on cpu" in " ".join(out.split())
    assert tcir_tune(argv + ["--resume"]) == 0  # the 4 measured count as done, 4 more
    out = capsys.readouterr().out
    assert "best 5 of 8 measured" in out and "ended: measured its candidates" in out


def test_tune_says_what_it_does(tmm, caplog):
    """`tune()` logs its progress (no terminal here) and the summary of
    `tcir-tune`; `verbose=False` keeps it quiet."""
    import logging

    with caplog.at_level(logging.INFO, logger="tcir.tuner"):
        best = tune(tmm, *inputs(), candidates=2, workers=1, space=small_space(tmm))
    said = [r.getMessage() for r in caplog.records if r.name == "tcir.tuner"]
    assert said[0] == "tuning tmm(M=64, K=64, N=64) on cpu"
    assert any("new best" in line for line in said)
    assert any(line.startswith("best 2 of 2 measured") for line in said)
    assert "ended: measured its candidates" in said
    assert "later calls of tmm with these shapes on cpu" in " ".join(" ".join(said).split())
    assert (best is None) == any("no candidate beat a call without options" in line for line in said)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tcir.tuner"):
        tune(tmm, *inputs(), candidates=1, workers=1, space=small_space(tmm), verbose=False)
    assert not [r for r in caplog.records if r.name == "tcir.tuner"]


@pytest.mark.parametrize("canonical_time", [0.5, 2.0])
def test_the_best_and_the_default_are_timed_again(tmm, cache_dir, monkeypatch, canonical_time):
    """On the CPU the default is what a call without options runs, the
    canonical loops: timed as the candidates are, recorded as options None.
    After the search, the best candidate and the default are timed
    VERIFY_ROUNDS more times each, alternately; the result is the faster of
    the two by the median of these times (a lucky first time is outvoted),
    as the cache's best is. Where the canonical loops win, `best` is None
    and later calls keep them. (Times faked: which is faster is the point.)"""
    from tcir.compiler.artifacts import build_artifact
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import bind
    from tcir.tuner.evaluate import Outcome
    from tcir.tuner.jobs import Benchmark, Problem
    from tcir.tuner.tune import VERIFY_ROUNDS, _Session

    a, b = inputs()
    tuner = Tuner(tmm, [a, b], candidates=1, workers=1, cache=cache_dir)
    binding = bind(tmm.definition, [a, b])
    problem = Problem(tmm.definition, dict(binding.sizes), "cpu")
    benchmark = Benchmark(problem, [a, b], reference_outputs(tmm.definition, binding))
    tiled = MappingOptions(tile=[2, 2, 2])
    tiled_code = build_artifact(tmm.def_ir, binding, tiled, "cpu")
    fake = lambda code, cutoff=math.inf: 1.0 if code == tiled_code.to_json() else canonical_time  # noqa: E731
    monkeypatch.setattr(_Session, "_profiler", lambda self, benchmark: fake)
    session = _Session(tuner, time.monotonic())
    session.time_baseline(benchmark)
    assert session.baseline is not None and session.default_seconds == canonical_time
    session.record(Outcome(tiled, 1e-9, artifact=tiled_code))  # one lucky time
    assert session.best.options == tiled
    session.verify(benchmark)
    rows = tuner.cache._measured(tuner.key)
    assert sorted(t for o, t, _ in rows if o is None) == [canonical_time] * (1 + VERIFY_ROUNDS)
    assert sorted(t for o, t, _ in rows if o == tiled) == [1e-9] + [1.0] * VERIFY_ROUNDS
    assert session.default_seconds == canonical_time
    result = session.result()
    if canonical_time < 1.0:
        assert result.best is None and result.best_seconds == canonical_time
        assert tuner.cache.best(tuner.key) is None  # so calls keep the canonical loops
    else:
        assert result.best == tiled and result.best_seconds == 1.0 and result.speedup == 2.0
        assert tuner.cache.best(tuner.key) == (tiled, 1.0)
        assert tuner.cache.get_code(tuner.key, tiled) is not None
    assert best_options(tmm.definition, SIZES, "cpu", cache_dir) == result.best


def test_a_default_lowered_in_parts_is_the_baseline(tmm, cache_dir, monkeypatch):
    """On a GPU backend, a def that the default mapping lowers in parts (a
    padded convolution: its zero-padded copy, then the convolution), as its
    collapsed form (an einsum's projection) or with its channels summed
    before its taps (a channels-last convolution) has no options that stand
    for a call without them: the tuner times that call as the CPU's
    canonical loops (recorded as options None, the default to beat); a def
    mapped whole (tmm) keeps its default options."""
    from tcir.runtime.numpy_reference import reference_outputs
    from tcir.runtime.signature import bind
    from tcir.tuner.jobs import Benchmark, Problem
    from tcir.tuner.tune import _Session

    pad1 = tcir.define((EXAMPLES / "zoo" / "conv.tc").read_text()).conv2d_pad1
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 5, 6), np.float32), rng.standard_normal((3, 2, 3, 3), np.float32)
    tuner = Tuner(pad1, [x, w], backend="cuda-sim", candidates=1, workers=1, cache=cache_dir)
    assert tuner._default_without_options()
    assert not Tuner(tmm, inputs(), backend="cuda-sim", candidates=1, workers=1, cache=cache_dir)._default_without_options()
    qkv = tcir.define((EXAMPLES / "zoo" / "attention.tc").read_text()).qkv_projection
    xq, wq = rng.standard_normal((2, 3, 4), np.float32), rng.standard_normal((2, 3, 4), np.float32)
    assert Tuner(qkv, [xq, wq], backend="cuda-sim", candidates=1, workers=1, cache=cache_dir)._default_without_options()
    nhwc = tcir.define(
        "def c(float(N,H,W,C) X, float(F,KH,KW,C) Wt) -> (Y) { Y(n,h,w,f) +=! X(n,h+kh,w+kw,c) * Wt(f,kh,kw,c) }"
    ).c
    xn, wn = rng.standard_normal((1, 5, 6, 2), np.float32), rng.standard_normal((3, 3, 3, 2), np.float32)
    assert Tuner(nhwc, [xn, wn], backend="cuda-sim", candidates=1, workers=1, cache=cache_dir)._default_without_options()
    assert not Tuner(nhwc, [xn, wn], backend="cpu", candidates=1, workers=1, cache=cache_dir)._default_without_options()
    binding = bind(pad1.definition, [x, w])
    benchmark = Benchmark(Problem(pad1.definition, dict(binding.sizes), "cuda-sim"), [x, w],
                          reference_outputs(pad1.definition, binding))
    monkeypatch.setattr(_Session, "_profiler", lambda self, benchmark: lambda code, cutoff=math.inf: 0.25)
    session = _Session(tuner, time.monotonic())
    session.time_baseline(benchmark)
    assert session.baseline is not None and session.default_seconds == 0.25
    assert "conv2d_pad1_part0_kernel0" in session.baseline[0].ir  # the copy, then the convolution
    assert [o for o, _, _ in tuner.cache._measured(tuner.key)] == [None]


def test_quick_autotune_on_first_call(cache_dir):
    """`define(..., autotune="quick")`: the first call with new shapes measures
    a few candidates (the default first) and computes right; later calls, and
    a new module's call, use the cached options without measuring again."""
    source = (EXAMPLES / "tmm.tc").read_text()
    a, b = inputs()
    mod = tcir.define(source, autotune="quick")
    np.testing.assert_allclose(mod.tmm(a, b), a @ b.T, rtol=1e-4, atol=1e-4)
    measured = _measurements(cache_dir / FILE_NAME)
    assert 1 <= measured <= 8 + 2 * VERIFY_ROUNDS  # the candidates, and the best and the default timed again
    np.testing.assert_allclose(mod.tmm(a, b), a @ b.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tcir.define(source, autotune="quick").tmm(a, b), a @ b.T, rtol=1e-4, atol=1e-4)
    assert _measurements(cache_dir / FILE_NAME) == measured
    with pytest.raises(TCError, match="autotune must be one of None, 'quick', got 'always'"):
        tcir.define(source, autotune="always")
