"""tcir's passes: one module per pass, named after it.

Pass `poly-tile` lives in `tcir/transforms/poly_tile.py`, which defines exactly
one `ModulePass` subclass whose `name` is `poly-tile`. The registry below relies
on that rule to find every pass from file names alone, so nothing is imported
until a pass is used.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

from xdsl.passes import ModulePass


def _load(module_name: str) -> Callable[[], type[ModulePass]]:
    def factory() -> type[ModulePass]:
        module = importlib.import_module(f"{__name__}.{module_name}")
        passes = [
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj)
            and issubclass(obj, ModulePass)
            and obj.__module__ == module.__name__
        ]
        if len(passes) != 1:
            raise ImportError(f"{module.__name__} must define exactly one ModulePass")
        return passes[0]

    return factory


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Factories of all tcir passes, by pass name."""
    here = Path(__file__).parent
    return {
        path.stem.replace("_", "-"): _load(path.stem)
        for path in sorted(here.glob("*.py"))
        if not path.stem.startswith("_")
    }
