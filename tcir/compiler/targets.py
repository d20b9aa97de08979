"""The backends and which one a call's arguments ask for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcir.errors import TCError

BACKENDS = ("cpu", "cuda", "cuda-sim")


def on_gpu(value: Any) -> bool:
    """Whether `value` is an array on a CUDA device (cupy, torch, DLPack)."""
    # torch's and cupy's own attributes first: their __cuda_array_interface__
    # builds a dict on each access, which every call would pay.
    if type(value).__module__.startswith("cupy") or getattr(value, "is_cuda", False):
        return True
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    return device is not None and device()[0] == 2  # kDLCUDA


def resolve_backend(backend: str | None, args: Sequence[Any]) -> str:
    """`backend`, or the default for these arguments: cuda when they live on a GPU."""
    if backend is None:
        backend = "cuda" if any(on_gpu(a) for a in args) else "cpu"
    if backend not in BACKENDS:
        raise TCError(f"unknown backend '{backend}' (available: {', '.join(BACKENDS)})")
    if backend == "cuda-sim" and any(on_gpu(a) for a in args):
        raise TCError("backend 'cuda-sim' runs on numpy arrays; pass host arrays")
    return backend
