"""The compilation cache: round trips, corruption, versions, concurrency, export."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from tuner_helpers import SIZES, TMM, run_tmm, tmm, tmm_binding, tmm_key

import tcir
from tcir.backends.cuda.runtime import (
    cuda_available,
    current_device,
    device_architecture,
)
from tcir.compiler import cache as cache_module
from tcir.compiler.artifacts import (
    CpuArtifact,
    CudaArtifact,
    build_artifact,
    target_architecture,
)
from tcir.compiler.cache import FILE_NAME, CompilationCache, default_cache_dir
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.compiled import best_options, compile_cached

OPTIONS = tcir.MappingOptions(tile=[4, 4, 4])

needs_gpu = pytest.mark.skipif(not cuda_available(), reason="needs cupy and a CUDA device")
CUDA_OPTIONS = tcir.MappingOptions(tile=[4, 4, 4], use_shared_memory=False, use_private_memory=False)


@pytest.fixture(scope="module")
def artifact() -> CpuArtifact:
    built = build_artifact(tmm().def_ir, tmm_binding(), OPTIONS, "cpu")
    assert isinstance(built, CpuArtifact)
    return built


def test_default_location_follows_environment(cache_dir):
    assert default_cache_dir() == cache_dir
    assert CompilationCache().path == cache_dir / FILE_NAME


def test_code_round_trip(cache, artifact):
    key = tmm_key()
    assert cache.get_code(key, OPTIONS) is None
    cache.put_code(key, OPTIONS, artifact)
    assert cache.get_code(key, OPTIONS) == artifact
    assert cache.get_code(key, tcir.MappingOptions()) is None
    run_tmm(cache.get_code(key, OPTIONS).load())


def test_measurements_and_best(cache):
    key = tmm_key()
    assert cache.best(key) is None
    cache.record(key, tcir.MappingOptions(), 3e-3)
    cache.record(key, OPTIONS, 1e-3)
    cache.record(key, tcir.MappingOptions(unroll=8), None, "compile: boom")
    assert cache.best(key) == (OPTIONS, 1e-3)
    assert len(cache.measurements(key)) == 3
    for seconds in (4e-3, 5e-3):  # timed again: by its median, OPTIONS is slower now
        cache.record(key, OPTIONS, seconds)
    assert cache.best(key) == (tcir.MappingOptions(), 3e-3)
    assert cache.similar(key) == []
    other = tmm_key({"M": 16, "K": 4, "N": 6})
    cache.record(other, tcir.MappingOptions(unroll=4), 2e-3)
    assert cache.similar(key) == [tcir.MappingOptions(unroll=4)]
    assert best_options(tmm().definition, SIZES, "cpu", cache) == tcir.MappingOptions()
    assert best_options(tmm().definition, {"M": 1, "K": 1, "N": 1}, "cpu", cache) is None


def test_new_process_loads_code_without_the_pipeline(cache, cache_dir, artifact):
    compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", cache)
    # With a shared library a hit needs no compiler at all: no LLVM, no passes.
    compilers = (
        ["llvmlite.binding", "tcir.backends.cpu.jit", "tcir.transforms.tc_specialize"]
        if artifact.shared_library is not None
        else []
    )
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np, tcir, tcir.api
        from tcir.runtime.signature import Binding
        from tcir.compiler.compiled import compile_cached

        def no_pipeline(*args, **kwargs):
            raise AssertionError("the tcir pipeline ran")

        tcir.api.Function.lowered = no_pipeline
        f = tcir.define({TMM!r}).tmm
        loaded_before = set(sys.modules)
        kernel = compile_cached(f.def_ir, Binding({SIZES!r}, ()), tcir.MappingOptions.from_json({OPTIONS.to_json()!r}), "cpu")
        a = np.ones((8, 4), np.float32); b = np.ones((6, 4), np.float32); c = np.zeros((8, 6), np.float32)
        kernel(a, b, c)
        assert (c == 4).all(), c
        loaded = [m for m in {compilers!r} if m in sys.modules and m not in loaded_before]
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def test_cpu_artifacts_link_a_shared_library_where_a_c_compiler_is(artifact):
    if shutil.which("cc") is None and "CC" not in os.environ:
        assert artifact.shared_library is None
    else:
        assert artifact.shared_library is not None
    assert CpuArtifact.from_json(json.loads(json.dumps(artifact.to_json()))) == artifact


def test_without_a_c_compiler_code_loads_with_mcjit(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    built = build_artifact(tmm().def_ir, tmm_binding(), OPTIONS, "cpu")
    assert isinstance(built, CpuArtifact) and built.shared_library is None
    run_tmm(built.load())


def test_a_shared_library_that_does_not_load_falls_back_to_mcjit(artifact, caplog):
    broken = dataclasses.replace(artifact, shared_library=b"not a shared library")
    run_tmm(broken.load())
    assert "cannot load a shared library" in caplog.text


def test_garbage_file_is_set_aside(cache_dir):
    cache_dir.mkdir(parents=True)
    (cache_dir / FILE_NAME).write_bytes(b"this is not a database" * 100)
    with CompilationCache(cache_dir) as fresh:
        fresh.record(tmm_key(), OPTIONS, 1e-3)
        assert fresh.best(tmm_key()) == (OPTIONS, 1e-3)
    aside = list(cache_dir.glob(f"{FILE_NAME}.corrupt-*"))
    assert aside and aside[0].read_bytes().startswith(b"this is not")


def test_foreign_schema_is_set_aside(cache_dir):
    with CompilationCache(cache_dir) as old:
        old.record(tmm_key(), OPTIONS, 1e-3)
        old.connection.execute("UPDATE meta SET value = '999' WHERE name = 'schema'")
    with CompilationCache(cache_dir) as fresh:
        assert fresh.best(tmm_key()) is None
    assert list(cache_dir.glob(f"{FILE_NAME}.corrupt-*"))


def test_foreign_version_entries_are_ignored_and_rebuilt(cache, artifact):
    key = tmm_key()
    cache.put_code(key, OPTIONS, artifact)
    cache.record(key, OPTIONS, 1e-3)
    cache.connection.execute("UPDATE kernels SET version = '0/ancient'")
    cache.connection.execute("UPDATE measurements SET version = '0/ancient'")
    assert cache.get_code(key, OPTIONS) is None
    assert cache.best(key) is None
    kernel = compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", cache)
    run_tmm(kernel)
    assert cache.get_code(key, OPTIONS) == artifact, "rebuilt and replaced"


def test_corrupted_entries_are_dropped(cache, artifact):
    key = tmm_key()
    cache.put_code(key, OPTIONS, artifact)
    cache.record(key, OPTIONS, 1e-3)
    cache.record(key, tcir.MappingOptions(), 2e-3)
    cache.connection.execute('UPDATE kernels SET code = \'{"backend": "cpu"}\'')
    cache.connection.execute("UPDATE measurements SET seconds = 1e-9 WHERE seconds = 2e-3")
    assert cache.get_code(key, OPTIONS) is None
    assert cache.best(key) == (OPTIONS, 1e-3), "the tampered row is not trusted"
    count = cache.connection.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
    assert count == 0
    assert len(cache.measurements(key)) == 1


def test_uncompilable_cached_code_is_rebuilt(cache, artifact):
    key = tmm_key()
    broken = CpuArtifact("this is not LLVM IR", b"not an object file", artifact.signature)
    cache.put_code(key, OPTIONS, broken)
    run_tmm(compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", cache))
    assert cache.get_code(key, OPTIONS) == artifact


def _cuda_key() -> ProblemKey:
    return ProblemKey.of(tmm().definition, SIZES, target_architecture("cuda"))


@needs_gpu
def test_cuda_hit_in_a_new_process_loads_the_cubin(cache):
    compile_cached(tmm().def_ir, tmm_binding(), CUDA_OPTIONS, "cuda", cache)
    stored = cache.get_code(_cuda_key(), CUDA_OPTIONS)
    assert isinstance(stored, CudaArtifact) and stored.cubin is not None
    assert stored.arch == device_architecture(current_device())
    script = textwrap.dedent(
        f"""
        import cupy, numpy as np, tcir, tcir.api
        from tcir.backends.cuda import runtime
        from tcir.runtime.signature import Binding
        from tcir.compiler.compiled import compile_cached

        def no_compiler(*args, **kwargs):
            raise AssertionError("a compiler ran")

        tcir.api.Function.lowered = no_compiler
        runtime.compile_cubin = runtime._functions = no_compiler
        f = tcir.define({TMM!r}).tmm
        options = tcir.MappingOptions.from_json({CUDA_OPTIONS.to_json()!r})
        kernel = compile_cached(f.def_ir, Binding({SIZES!r}, ()), options, "cuda")
        a = cupy.ones((8, 4), cupy.float32); b = cupy.ones((6, 4), cupy.float32)
        c = cupy.zeros((8, 6), cupy.float32)
        kernel(a, b, c)
        assert (cupy.asnumpy(c) == 4).all(), c
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


@needs_gpu
def test_cuda_code_cached_without_a_cubin_gains_one_when_loaded(cache):
    built = build_artifact(tmm().def_ir, tmm_binding(), CUDA_OPTIONS, "cuda")
    assert isinstance(built, CudaArtifact) and built.cubin is None, "built without a GPU"
    cache.put_code(_cuda_key(), CUDA_OPTIONS, built)
    compile_cached(tmm().def_ir, tmm_binding(), CUDA_OPTIONS, "cuda", cache)
    stored = cache.get_code(_cuda_key(), CUDA_OPTIONS)
    assert isinstance(stored, CudaArtifact) and stored.cubin is not None
    assert CudaArtifact.from_json(json.loads(json.dumps(stored.to_json()))) == stored


WRITER = """
import sys
from tuner_helpers import tmm_key
import tcir
from tcir.compiler.cache import CompilationCache

cache = CompilationCache(sys.argv[1])
key = tmm_key()
for k in range(40):
    cache.record(key, tcir.MappingOptions(unroll=2 ** (k % 8)), 1e-3 * (k + 1) + int(sys.argv[2]))
"""


def test_concurrent_writers(cache_dir):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(cache_dir), str(k)], env=env)
        for k in range(2)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with CompilationCache(cache_dir) as cache:
        assert len(cache.measurements(tmm_key())) == 80
        assert cache.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_export_import(cache, cache_dir, tmp_path, artifact):
    key = tmm_key()
    cache.put_code(key, OPTIONS, artifact)
    cache.record(key, OPTIONS, 1e-3)
    cache.record(key, tcir.MappingOptions(), None, "run: wrong result")
    document = json.loads(cache.export_json())
    assert "kernels" not in document and len(document["measurements"]) == 2
    document["measurements"].append({**document["measurements"][0], "version": "0/ancient"})
    document["measurements"].append({**document["measurements"][0], "problem": "0" * 64})
    with CompilationCache(tmp_path / "other") as other:
        assert other.import_json(json.dumps(document)) == 2, "foreign and forged entries skipped"
        assert other.best(key) == (OPTIONS, 1e-3)
        assert other.get_code(key, OPTIONS) is None, "code is never imported"
        with pytest.raises(tcir.TCError):
            other.import_json("{not json")
        with pytest.raises(tcir.TCError):
            other.import_json('{"format": "something else"}')


def test_unusable_cache_does_not_break_calls(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    assert best_options(tmm().definition, SIZES, "cpu", blocker / "cache") is None
    run_tmm(compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", blocker / "cache"))


def test_version_string():
    assert cache_module.VERSION.startswith(f"{cache_module.SCHEMA_VERSION}/")


def test_sqlite_is_in_wal_mode(cache):
    assert cache.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert isinstance(cache.connection, sqlite3.Connection)


def test_threads_share_a_cache_object(cache):
    key = tmm_key()

    def write(k: int) -> None:
        for j in range(10):
            cache.record(key, tcir.MappingOptions(unroll=2**j), 1e-3 * (k + 1))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache.measurements(key)) == 40
