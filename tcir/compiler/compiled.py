"""Compiled code through the persistent compilation cache (the call path).

Kept apart from the tuner so that a cache hit imports little: looking up and
loading cached code must take milliseconds in a fresh process.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from tcir.compiler.artifacts import Artifact, build_artifact, loaded, target_architecture
from tcir.compiler.cache import CompilationCache, default_cache_dir
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.options import MappingOptions
from tcir.errors import TCError
from tcir.frontend.ast import CheckedDef
from tcir.runtime.signature import Binding

if TYPE_CHECKING:
    from tcir.compiler.lowering import DefIR

log = logging.getLogger(__name__)


@functools.cache
def _cache_at(directory: str) -> CompilationCache:
    return CompilationCache(directory)


def open_cache(cache: CompilationCache | str | os.PathLike[str] | None = None) -> CompilationCache:
    """`cache` itself, the cache in directory `cache`, or the process's default
    cache (`$TCIR_CACHE_DIR` or `~/.cache/tcir`)."""
    if isinstance(cache, CompilationCache):
        return cache
    return _cache_at(str(cache if cache is not None else default_cache_dir()))


def _sizes(shapes: Binding | Mapping[str, int]) -> dict[str, int]:
    return dict(shapes.sizes if isinstance(shapes, Binding) else shapes)


def best_options(
    definition: CheckedDef,
    shapes: Binding | Mapping[str, int],
    backend: str,
    cache: CompilationCache | str | os.PathLike[str] | None = None,
) -> MappingOptions | None:
    """The fastest options measured for `definition` at these sizes on this
    machine's `backend`, or None (also when the cache is unusable: calls must
    not fail because of it)."""
    try:
        key = ProblemKey.of(definition, _sizes(shapes), target_architecture(backend))
        known = open_cache(cache).best(key)
    except (sqlite3.Error, OSError, TCError) as e:
        log.warning("compilation cache unusable: %s", e)
        return None
    return known[0] if known else None


def measured_before(
    definition: CheckedDef,
    shapes: Binding | Mapping[str, int],
    backend: str,
    cache: CompilationCache | str | os.PathLike[str] | None = None,
) -> bool:
    """Whether the cache holds measurements of `definition` at these sizes on
    this machine's `backend` (a tuning run, even one the default won)."""
    try:
        key = ProblemKey.of(definition, _sizes(shapes), target_architecture(backend))
        return bool(open_cache(cache).measurements(key))
    except (sqlite3.Error, OSError, TCError) as e:
        log.warning("compilation cache unusable: %s", e)
        return True  # nothing to tune into


def compile_cached(
    ir: DefIR,
    binding: Binding,
    options: MappingOptions | None,
    backend: str,
    cache: CompilationCache | str | os.PathLike[str] | None = None,
) -> Callable[..., None]:
    """The def of `ir` compiled for `binding` and `options` (None: the backend's
    default lowering), loaded from the cache when it holds the code, else
    compiled and stored. An unusable cache only costs the compilation."""
    key: ProblemKey | None = None
    store: CompilationCache | None = None
    try:
        key = ProblemKey.of(ir.definition, binding.sizes, target_architecture(backend))
        store = open_cache(cache)
        artifact = store.get_code(key, options)
    except (sqlite3.Error, OSError, TCError) as e:
        log.warning("compilation cache unusable: %s", e)
        artifact, store = None, None
    if artifact is not None and store is not None and key is not None:
        try:
            kernel = artifact.load()
        except Exception as e:  # noqa: BLE001  (code from the cache that does not load is rebuilt)
            log.warning("cached code does not load (%s); recompiling", e)
            store.drop_code(key, options)
        else:
            completed = loaded(artifact, kernel)
            if completed is not artifact:  # e.g. NVRTC compiled the cubin it lacked
                _store(store, key, options, completed)
            return kernel
    with _collector_paused():
        artifact = build_artifact(ir, binding, options, backend)
    kernel = artifact.load()
    if store is not None and key is not None:
        _store(store, key, options, loaded(artifact, kernel))
    return kernel


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, then as it was:
    a lowering allocates IR by the thousand, and the collections that
    triggers took a share of a first call's time (the defaults guide); the
    block's garbage cycles go at the next collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _store(
    store: CompilationCache, key: ProblemKey, options: MappingOptions | None, artifact: Artifact
) -> None:
    try:
        store.put_code(key, options, artifact)
    except (sqlite3.Error, OSError, TCError) as e:
        log.warning("compilation cache: cannot store code: %s", e)
