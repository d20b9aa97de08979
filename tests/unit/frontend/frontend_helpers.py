"""Helpers for the frontend tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcir.errors import TCError
from tcir.frontend import CheckedDef, parse

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def one(source: str) -> CheckedDef:
    """Parse `source`, which must hold exactly one def."""
    (d,) = parse(source, "t.tc")
    return d


def ranges(d: CheckedDef, k: int = 0) -> dict[str, tuple[str, str]]:
    """Statement k's ranges as printed strings."""
    return {n: (d.format(lo), d.format(hi)) for n, (lo, hi) in d.stmts[k].ranges.items()}


def shape(d: CheckedDef, name: str) -> list[str]:
    """The dims of tensor `name` as printed strings."""
    return [d.format(e) for e in d.tensor(name).dims]


def expect_error(cls: type[TCError], source: str, line: int, col: int, name: str,
                 fragment: str = "") -> TCError:
    """Assert parse(source) raises `cls` at line:col, with a caret there and `name` in the message."""
    with pytest.raises(cls) as info:
        parse(source, "t.tc")
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    first, code, caret = str(err).split("\n")[:3]  # notes may follow
    assert first.startswith(f"t.tc:{line}:{col}: error: "), str(err)
    assert name in first, str(err)
    assert fragment in first, str(err)
    assert code == source.splitlines()[line - 1].expandtabs(1)
    assert caret.index("^") == col - 1
    return err
