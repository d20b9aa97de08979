"""tcir's dialects and passes, published to xDSL through the `xdsl.universe` entry point.

Everything is registered lazily (factories), as xDSL does, so that starting a
tool does not import every dialect and pass.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.universe import Universe

from tcir.transforms import get_all_passes


def _tc() -> Dialect:
    from tcir.dialects.tc import TC

    return TC


def _poly() -> Dialect:
    from tcir.dialects.poly import Poly

    return Poly


def _check() -> Dialect:
    from tcir.dialects.check import Check

    return Check


def _nvgpu() -> Dialect:
    from tcir.dialects.nvgpu import NVGPU

    return NVGPU


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Factories of tcir's own dialects, by dialect name (`nvgpu`: the
    asynchronous copies of MLIR's, which xDSL lacks)."""
    return {"tc": _tc, "poly": _poly, "check": _check, "nvgpu": _nvgpu}


TCIR_UNIVERSE = Universe(all_dialects=get_all_dialects(), all_passes=get_all_passes())
