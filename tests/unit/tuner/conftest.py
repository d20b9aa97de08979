"""Fixtures of the tuner tests: every test gets its own cache directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcir.compiler.cache import CompilationCache


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `TCIR_CACHE_DIR`, so no test touches `~/.cache/tcir`."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("TCIR_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def cache(cache_dir: Path):
    """An open cache in the test's directory."""
    with CompilationCache(cache_dir) as store:
        yield store
