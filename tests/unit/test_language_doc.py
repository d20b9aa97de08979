"""docs/language.md, the language reference, against the code: it lists
every builtin (with its arity) and every type, and each builtin's CUDA and
CPU columns name what the backends really emit for it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tcir
from tcir.frontend.dtypes import BUILTINS, SCALAR_TYPES

DOC = Path(__file__).parents[2] / "docs" / "language.md"
FUNCTION = re.compile(r"\b(?:llvm\.[a-z0-9]+|[a-z][a-z0-9]*f|fdiv)\b")
"""A function or instruction named in a column: `expf`, `llvm.exp`, `fdiv`."""


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def builtin_rows() -> dict[str, list[str]]:
    """The builtins table: name -> its columns (arity, meaning, CUDA, CPU)."""
    rows = {}
    for line in section("Builtins").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            assert cells[0] not in rows, f"{cells[0]} listed twice"
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_builtin_is_listed_with_its_arity() -> None:
    rows = builtin_rows()
    assert sorted(rows) == sorted(BUILTINS)
    assert {name: int(cells[0]) for name, cells in rows.items()} == BUILTINS


def test_every_type_is_listed() -> None:
    listed = set(re.findall(r"`([a-z0-9]+)`", section("Types")))
    assert set(SCALAR_TYPES) <= listed


@pytest.fixture(scope="module")
def emitted() -> tuple[dict[str, str], str]:
    """Each builtin's CUDA statement (by builtin) and the whole CPU LLVM IR,
    for one def calling every builtin on floats."""
    names = list(BUILTINS)
    args = {1: "A(i)", 2: "A(i), B(i)", 3: "A(i), B(i), A(i)"}
    outputs = ", ".join(f"O{k}" for k in range(len(names)))
    stmts = "\n".join(f"  O{k}(i) = {name}({args[BUILTINS[name]]})" for k, name in enumerate(names))
    function = tcir.define(f"def every(float(N) A, float(N) B) -> ({outputs}) {{\n{stmts}\n}}").every
    a = np.ones(3, np.float32)
    plain = tcir.MappingOptions(fusion="min", use_shared_memory=False, use_private_memory=False)
    cuda = function.ir(a, a, backend="cuda", options=plain)
    lines = {name: re.search(rf"\bO{k}\[[^\]]*\] = (.*);", cuda).group(1) for k, name in enumerate(names)}  # type: ignore[union-attr]
    return lines, function.ir(a, a, backend="cpu")


def test_the_cuda_and_cpu_columns_name_what_is_emitted(emitted: tuple[dict[str, str], str]) -> None:
    """The first function a column names is in the CUDA statement of that
    builtin, or in the CPU code (floats: the integer forms are not called)."""
    cuda, llvm = emitted
    for name, (_, _, in_cuda, on_cpu) in builtin_rows().items():
        named = FUNCTION.findall(in_cuda)
        if named:  # fdivide's `x / y` names none
            assert named[0] in cuda[name], (name, in_cuda, cuda[name])
        if on_cpu.startswith("none"):
            assert "CUDA only" in on_cpu
            continue
        assert FUNCTION.findall(on_cpu)[0] in llvm, (name, on_cpu)
