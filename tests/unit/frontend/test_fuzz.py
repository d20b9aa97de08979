"""Fuzzing: whatever the input, the frontend succeeds or raises a TCError."""

from __future__ import annotations

import random

import pytest

from tcir.errors import TCError
from tcir.frontend import parse
from tcir.frontend.lexer import tokenize
from tcir.frontend.source import Source

from frontend_helpers import EXAMPLES

SEEDS = [p.read_text() for p in sorted(EXAMPLES.glob("*.tc"))] + [
    "def f(float(M,K) A, int32 sh, half h) -> (int32(M) C, s) {\n"
    "  T(i) +=! A(i, k) where exists A(i, 0)\n"
    "  C(i) = int32(T(i) > 0 ? T(i) : -T(i)) <=> foo(T)\n"
    "  s() max=! fmaxf(A(i,j), .5) + A.1 + M * 2 + exp(1) + min(1, 2) + h\n"
    "  U(i, j) = A(i, j + sh) * y where x = i, y = x + 1\n"
    "}\n",
    "def g() -> (O) { O(i) = !i || i % 3 == 1e-5 && i != 2 where i in 0:10 }",
]
VOCAB = ["(", ")", "{", "}", ",", ":", "?", "+", "-", "*", "/", "%", "<", "<=", "==", "!=",
         "&&", "||", "!", "=", "+=", "+=!", "max=!", "min=", "<=>", "->", ".", "#", "\n",
         "def", "where", "exists", "in", "float", "int", "A", "B", "i", "j", "k", "M", "N", "0",
         "1", "2.5", "1e-5", "A.0", "fmaxf", "exp", "min", "sh", "O", "C", "x"]


def fragments(text: str) -> list[str]:
    """The token texts of `text` with the spaces between them kept."""
    toks = tokenize(Source(text))
    return [text[t.pos:(toks[k + 1].pos if k + 1 < len(toks) else len(text))]
            for k, t in enumerate(toks)]


def mutate(rng: random.Random, text: str) -> str:
    parts = fragments(text)
    kind = rng.randrange(6)
    if kind == 0:
        return text[:rng.randrange(len(text) + 1)]
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(len(parts))
        if kind == 1:
            del parts[k]
        elif kind == 2:
            parts.insert(k, rng.choice(VOCAB) + " ")
        elif kind == 3:
            m = rng.randrange(len(parts))
            parts[k], parts[m] = parts[m], parts[k]
        elif kind == 4:
            parts[k] = rng.choice(VOCAB) + " "
        else:
            parts.insert(k, "".join(rng.choice("()+-*,?:!aA1._ =<>#\t") for _ in range(5)))
        if not parts:
            break
    return "".join(parts)


def random_expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["A(i)", "A(i + 1)", "B(i, j)", "i", "M", "A.0", "2", "0.5", "sh", "x"])
    op = rng.choice(["+", "-", "*", "/", "%", "<", "==", "&&", "||", "?", "u", "call", "cast"])
    a, b = random_expr(rng, depth - 1), random_expr(rng, depth - 1)
    if op == "?":
        return f"({a} ? {b} : {random_expr(rng, depth - 1)})"
    if op == "u":
        return f"{rng.choice('-!')}({a})"
    if op == "call":
        return f"{rng.choice(['fmaxf', 'exp', 'min', 'pow', 'sqrt', 'fma'])}({a}, {b})"
    if op == "cast":
        return f"{rng.choice(['float', 'int32', 'double', 'bool'])}({a})"
    return f"({a} {op} {b})"


def check(text: str) -> None:
    try:
        parse(text, "fuzz.tc")
    except TCError as err:
        assert str(err).startswith("fuzz.tc:") or str(err).startswith("error:")


@pytest.mark.parametrize("seed", range(8))
def test_mutated_examples(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        check(mutate(rng, rng.choice(SEEDS)))


@pytest.mark.parametrize("seed", range(4))
def test_random_programs(seed: int) -> None:
    rng = random.Random(1000 + seed)
    for _ in range(150):
        op = rng.choice(["=", "+=", "+=!", "max=!", "*="])
        where = rng.choice(["", " where x = A(i)", " where j in 0:M", " where exists B(i, j)"])
        check(f"def f(int sh, float(M) A, int(M, N) B) -> (O) {{ O(i) {op} "
              f"{random_expr(rng, rng.randint(0, 6))}{where} }}")


def test_garbage() -> None:
    rng = random.Random(7)
    alphabet = "def()[]{}<>=!+-*/%#.,:;?&|^~ \n\tabcAB019_\\\"'é\x00"
    for _ in range(300):
        check("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))))


def test_very_long_inputs() -> None:
    body = "\n".join(f"  T{k}(i) = A(i) * {k}" for k in range(2000))
    check(f"def f(float(N) A) -> (T0) {{\n{body}\n}}")
    check("def f(float(N) A) -> (O) { O(i) = " + "A(i" * 3000 + ")" * 3000 + " }")
    check("def f(float(N) A) -> (O) { O(i) = " + "1" * 100000 + " }")
    check("def f(float(N) A) -> (O) { O(i) = A(i) " + "where x = 1, " * 2000 + "y = 2 }")
    check("(" * 100000)
    check("def " + "f" * 100000)
