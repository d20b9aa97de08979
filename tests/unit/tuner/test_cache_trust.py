"""The compilation cache never runs code it did not write for this user:
exports carry no code, imports take none, the cache is private, and code in
a cache that others can write is rebuilt instead of loaded."""

from __future__ import annotations

import base64
import json
import logging
import shutil
import stat
import subprocess

import pytest

import tcir
from tcir.compiler.artifacts import build_artifact
from tcir.compiler.cache import EXPORT_FORMAT, VERSION, CompilationCache
from tcir.compiler.compiled import compile_cached

from tuner_helpers import run_tmm, tmm, tmm_binding, tmm_key

OPTIONS = tcir.MappingOptions(tile=[4, 4, 4])

# A shared library whose constructor runs when it is loaded: it writes the
# file $TCIR_PWNED. It also defines `tmm`, doing nothing, as a kernel would.
MALICIOUS = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void pwn(void) {
  const char *path = getenv("TCIR_PWNED");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (f) { fputs("pwned", f); fclose(f); }
}
void tmm(void *a, void *b, void *c) {}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler to build the library")
def test_a_malicious_export_does_not_load_its_code(tmp_path, monkeypatch):
    """An export in the old format, with a kernel whose shared library runs
    code when loaded and whose digests are made to match: importing it and
    calling the def must neither load that library nor return its results."""
    source = tmp_path / "pwn.c"
    source.write_text(MALICIOUS)
    library = tmp_path / "pwn.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", library, source], check=True)
    marker = tmp_path / "pwned"
    monkeypatch.setenv("TCIR_PWNED", str(marker))

    key = tmm_key()
    artifact = build_artifact(tmm().def_ir, tmm_binding(), OPTIONS, "cpu").to_json()
    artifact["shared_library"] = base64.b64encode(library.read_bytes()).decode()
    options = OPTIONS.to_json()
    kernel = {
        "key": key.kernel_digest(options), "problem": key.digest, "tc": key.tc,
        "shapes": key.shapes, "target": key.target, "options": options,
        "code": json.dumps(artifact), "version": VERSION,
    }  # fmt: skip
    measurement = {
        "problem": key.digest, "family": key.tc_digest, "tc": key.tc, "shapes": key.shapes,
        "target": key.target, "options": options, "seconds": 1e-9, "error": None, "version": VERSION,
    }  # fmt: skip
    document = {"format": EXPORT_FORMAT, "version": VERSION, "kernels": [kernel], "measurements": [measurement]}

    with CompilationCache(tmp_path / "importer") as cache:
        assert cache.import_json(json.dumps(document)) == 1, "the measurement only"
        assert cache.best(key) == (OPTIONS, 1e-9), "options and times are data: they come in"
        assert cache.get_code(key, OPTIONS) is None, "code never does"
        run_tmm(compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", cache))
    assert not marker.exists(), "the library's constructor ran"


def test_the_cache_is_private(tmp_path):
    with CompilationCache(tmp_path / "new" / "cache") as cache:
        cache.record(tmm_key(), OPTIONS, 1e-3)
        assert stat.S_IMODE(cache.path.parent.stat().st_mode) == 0o700
        for path in cache.path.parent.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_code_in_a_cache_others_can_write_is_rebuilt(tmp_path, caplog):
    with CompilationCache(tmp_path / "shared") as cache:
        key = tmm_key()
        cache.put_code(key, OPTIONS, build_artifact(tmm().def_ir, tmm_binding(), OPTIONS, "cpu"))
        assert cache.get_code(key, OPTIONS) is not None
        cache.path.parent.chmod(0o777)
        with caplog.at_level(logging.WARNING):
            assert cache.get_code(key, OPTIONS) is None
        assert "is writable by others (mode 777); rebuilding" in caplog.text
        run_tmm(compile_cached(tmm().def_ir, tmm_binding(), OPTIONS, "cpu", cache))
        cache.path.parent.chmod(0o700)
        cache.path.chmod(0o666)
        assert cache.untrusted() == f"{cache.path} is writable by others (mode 666)"
