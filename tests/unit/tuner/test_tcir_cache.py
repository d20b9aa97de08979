"""`tcir-cache`: list, show, export, import and clear the compilation cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tuner_helpers import TMM, TMM_RENAMED, tmm, tmm_binding, tmm_key

import tcir
from tcir.compiler.artifacts import build_artifact, target_architecture
from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.tools.tcir_cache import main

FAST = tcir.MappingOptions(tile=[4, 4, 4])
SLOW = tcir.MappingOptions()
BROKEN = tcir.MappingOptions(unroll=8)
SMALL = {"M": 16, "K": 4, "N": 6}
ADD = "def add(float(N) A, float(N) B) -> (C) { C(i) = A(i) + B(i) }"


def add_key() -> ProblemKey:
    definition = tcir.define(ADD).add.definition
    return ProblemKey.of(definition, {"N": 5}, target_architecture("cpu"))


@pytest.fixture
def filled(cache: CompilationCache) -> CompilationCache:
    """tmm of `SIZES` (3 measurements, one failed, and code), tmm of `SMALL`
    (one measurement) and add (one measurement)."""
    key = tmm_key()
    cache.record(key, SLOW, 3e-3)
    cache.record(key, BROKEN, None, "compile: boom")
    cache.record(key, FAST, 1e-3)
    cache.put_code(key, FAST, build_artifact(tmm().def_ir, tmm_binding(), FAST, "cpu"))
    cache.record(tmm_key(SMALL), FAST, 2e-3)
    cache.record(add_key(), SLOW, 5e-6)
    return cache


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    assert exit.value.code == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


def problem_lines(output: str) -> dict[str, list[str]]:
    """The `list` rows by signature: [number, id, runs, failed, best, code, target]."""
    rows = {}
    for line in output.splitlines()[1:]:
        match = re.match(r"\s*(\d+)\s+([0-9a-f]{12})\s+(\(.*\))\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(.*)", line)
        assert match, line
        number, digest, signature, *rest = match.groups()
        rows[signature] = [number, digest, *rest]
    return rows


TMM_SIGNATURE = "(float32(8, 4) I0, float32(6, 4) I1) -> (float32(8, 6) O0)"
SMALL_SIGNATURE = "(float32(16, 4) I0, float32(6, 4) I1) -> (float32(16, 6) O0)"
ADD_SIGNATURE = "(float32(5) I0, float32(5) I1) -> (float32(5) O0)"


def test_list_shows_each_problem(filled, cache_dir, capsys):
    rows = problem_lines(run(capsys, "list", "--cache-dir", str(cache_dir)))
    assert set(rows) == {TMM_SIGNATURE, SMALL_SIGNATURE, ADD_SIGNATURE}
    target = target_architecture("cpu")
    assert rows[TMM_SIGNATURE][1:] == [tmm_key().digest[:12], "3", "1", "1.0000", "1", target]
    assert rows[SMALL_SIGNATURE][1:] == [tmm_key(SMALL).digest[:12], "1", "0", "2.0000", "0", target]
    assert rows[ADD_SIGNATURE][2:6] == ["1", "0", "0.0050", "0"]
    assert int(rows[TMM_SIGNATURE][0]) + 1 == int(rows[SMALL_SIGNATURE][0]), "smaller sizes first"
    assert sorted(row[0] for row in rows.values()) == ["1", "2", "3"]
    assert run(capsys, "list") == run(capsys, "list", "--cache-dir", str(cache_dir)), "$TCIR_CACHE_DIR"


def test_list_of_one_def(filled, cache_dir, tmp_path, capsys):
    source = tmp_path / "defs.tc"
    source.write_text(TMM + TMM_RENAMED + ADD)
    everything = problem_lines(run(capsys, "list", "--cache-dir", str(cache_dir)))
    for entry in ("tmm", "other"):  # equal up to names: one canonical TC
        rows = problem_lines(
            run(capsys, "list", "--cache-dir", str(cache_dir), "--file", str(source), "--entry", entry)
        )
        assert set(rows) == {TMM_SIGNATURE, SMALL_SIGNATURE}
        assert rows[TMM_SIGNATURE] == everything[TMM_SIGNATURE], "numbered as in the full list"
    rows = problem_lines(run(capsys, "list", "--file", str(source), "--entry", "add"))
    assert set(rows) == {ADD_SIGNATURE}
    assert "no def named 'nope'" in fails(capsys, "list", "--file", str(source), "--entry", "nope")
    with pytest.raises(SystemExit):
        main(["list", "--entry", "tmm"])  # --entry needs --file
    assert "--file" in capsys.readouterr().err


def test_empty_cache(cache_dir, capsys):
    assert run(capsys, "list", "--cache-dir", str(cache_dir)).startswith("no entries in ")


def test_show_lists_measurements_best_first(filled, cache_dir, capsys):
    rows = problem_lines(run(capsys, "list", "--cache-dir", str(cache_dir)))
    number, digest = rows[TMM_SIGNATURE][:2]
    output = run(capsys, "show", number, "--cache-dir", str(cache_dir))
    assert output == run(capsys, "show", digest[:6], "--cache-dir", str(cache_dir)), "by id prefix"
    assert f"problem {tmm_key().digest}" in output
    assert tmm_key().tc in output.replace("\n  ", "\n") and tmm_key().target in output
    assert "measurements: 3 (1 failed)" in output and "compiled versions stored: 1" in output
    lines = output.splitlines()
    fast, slow, broken = (
        next(k for k, line in enumerate(lines) if o.to_json() in line) for o in (FAST, SLOW, BROKEN)
    )
    assert fast < slow < broken
    assert lines[fast].split()[0] == "1.0000" and lines[slow].split()[0] == "3.0000"
    assert lines[broken].split()[0] == "-" and lines[broken].endswith("error: compile: boom")

    limited = run(capsys, "show", number, "--limit", "1", "--cache-dir", str(cache_dir))
    assert FAST.to_json() in limited and SLOW.to_json() not in limited
    assert "2 more" in limited


def test_show_an_unknown_problem(filled, cache_dir, capsys):
    assert "no problem 'ffffffffff'" in fails(capsys, "show", "ffffffffff", "--cache-dir", str(cache_dir))
    assert "3 problems match" in fails(capsys, "show", "", "--cache-dir", str(cache_dir))


def sorted_measurements(cache: CompilationCache, key: ProblemKey) -> list[tuple[str, float | None, str | None]]:
    return sorted(((o.to_json(), t, e) for o, t, e in cache.measurements(key)), key=str)


def test_export_then_import_reproduces_the_measurements(filled, cache_dir, tmp_path, capsys):
    exported = tmp_path / "tuning.json"
    assert "exported 5 measurements" in run(capsys, "export", str(exported), "--cache-dir", str(cache_dir))
    assert json.loads(run(capsys, "export", "--cache-dir", str(cache_dir))) == json.loads(exported.read_text())
    fresh = tmp_path / "fresh"
    output = run(capsys, "import", str(exported), "--cache-dir", str(fresh))
    assert "imported 5 of 5 measurements" in output
    with CompilationCache(fresh) as other:
        for key in (tmm_key(), tmm_key(SMALL), add_key()):
            assert sorted_measurements(other, key) == sorted_measurements(filled, key)
        assert other.get_code(tmm_key(), FAST) is None, "code is never exported"


def _export(cache: CompilationCache) -> dict:
    return json.loads(cache.export_json())


def _corrupt(document: dict, change: dict | None = None, drop: str | None = None, entry=None) -> str:
    """`document` with its second measurement changed (or replaced by `entry`)."""
    measurements = [dict(m) for m in document["measurements"]]
    if entry is not None:
        measurements[1] = entry
    else:
        measurements[1].update(change or {})
        measurements[1].pop(drop, None)
    return json.dumps({**document, "measurements": measurements})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: "{not json", "invalid export JSON"),
        (lambda d: json.dumps({**d, "format": "other"}), "not a tcir cache export"),
        (lambda d: json.dumps({**d, "measurements": {}}), "'measurements' of an export must be a list"),
        (lambda d: _corrupt(d, entry=[1, 2]), "measurement 2 of the export: not an object"),
        (lambda d: _corrupt(d, {"seconds": "fast"}), "measurement 2 of the export: 'seconds'"),
        (lambda d: _corrupt(d, {"seconds": -1.0}), "measurement 2 of the export: 'seconds'"),
        (lambda d: _corrupt(d, {"seconds": 10**400}), "measurement 2 of the export: 'seconds'"),
        (lambda d: _corrupt(d, {"seconds": True}), "measurement 2 of the export: 'seconds'"),
        (lambda d: _corrupt(d, {"error": 3}), "measurement 2 of the export: 'error'"),
        (lambda d: _corrupt(d, {"options": {"tile": [4]}}), "measurement 2 of the export: 'options'"),
        (lambda d: _corrupt(d, {"shapes": "[1, 2]"}), "measurement 2 of the export: 'shapes'"),
        (lambda d: _corrupt(d, drop="target"), "measurement 2 of the export: missing keys ['target']"),
        (lambda d: _corrupt(d, {"code": "..."}), "measurement 2 of the export: unknown keys ['code']"),
        (lambda d: _corrupt(d, drop="version"), "measurement 2 of the export: 'version'"),
    ],
)
def test_a_malformed_import_changes_nothing(filled, tmp_path, capsys, make, message):
    document = _export(filled)
    assert len(document["measurements"]) == 5
    bad = tmp_path / "bad.json"
    bad.write_text(make(document))
    target = tmp_path / "target"
    with CompilationCache(target) as cache:
        cache.record(tmm_key(), BROKEN, 9e-3)
        before = cache.export_json()
    error = fails(capsys, "import", str(bad), "--cache-dir", str(target))
    assert str(bad) in error and message in error and "nothing imported" in error
    with CompilationCache(target) as cache:
        assert cache.export_json() == before


def test_import_skips_entries_of_other_versions(filled, tmp_path, capsys):
    document = _export(filled)
    document["measurements"][0] = {"version": "0/ancient", "anything": "goes"}
    document["measurements"][1]["seconds"] = 2  # an integral time is a time
    source = tmp_path / "mixed.json"
    source.write_text(json.dumps(document))
    output = run(capsys, "import", str(source), "--cache-dir", str(tmp_path / "target"))
    assert "imported 4 of 5 measurements" in output and "skipped" in output
    with CompilationCache(tmp_path / "target") as cache:
        key = ProblemKey(*(document["measurements"][1][c] for c in ("tc", "shapes", "target")))
        assert 2.0 in [seconds for _, seconds, _ in cache.measurements(key)]


def test_clear(filled, cache_dir, tmp_path, capsys):
    source = tmp_path / "defs.tc"
    source.write_text(ADD)
    run(capsys, "clear", "--file", str(source), "--entry", "add", "--cache-dir", str(cache_dir))
    assert filled.measurements(add_key()) == []
    assert len(filled.measurements(tmm_key())) == 3, "only add's problems go"

    filled.connection.execute("UPDATE measurements SET version = '0/old' WHERE seconds > 2.5e-3")
    listed = run(capsys, "list", "--cache-dir", str(cache_dir))
    assert "1 entries of other tcir versions" in listed

    assert "deleted 5 entries" in run(capsys, "clear", "--cache-dir", str(cache_dir))
    assert run(capsys, "list", "--cache-dir", str(cache_dir)).startswith("no entries in ")
    assert filled.problems() == {} and filled.foreign_rows() == 0
    assert filled.get_code(tmm_key(), FAST) is None
    assert sorted(Path(cache_dir).iterdir()), "the cache itself stays"
