"""Fuzzing: whatever the input, the frontend (down to the `tc` dialect)
succeeds or raises a TCError. Mutants come from `tcir.frontend.mutants`,
drawn by hypothesis (which shrinks a failure to a small input); the inputs
that once crashed stay as a fixed corpus. `tools/frontend_fuzz.py` runs
100,000 and more."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcir
from tcir.errors import TCError
from tcir.frontend.mutants import mutate

from frontend_helpers import EXAMPLES

SEEDS = [p.read_text() for p in sorted(EXAMPLES.glob("*.tc"))] + [
    "def f(float(M,K) A, int32 sh, half h) -> (int32(M) C, s) {\n"
    "  T(i) +=! A(i, k) where exists A(i, 0)\n"
    "  C(i) = int32(T(i) > 0 ? T(i) : -T(i)) <=> foo(T)\n"
    "  s() max=! fmaxf(A(i,j), .5) + A.1 + M * 2 + exp(1) + min(1, 2) + h\n"
    "  U(i, j) = A(i, j + sh) * y where x = i, y = x + 1\n"
    "}\n",
    "def g() -> (O) { O(i) = !i || i % 3 == 1e-5 && i != 2 where i in 0:10 }",
    "def rnn(float(T, B, I) x, float(B, J) h0, float(J, J) W) -> (h) {\n"
    "  for t in 0:T {\n"
    "    a(t, b, j) +=! W(j, k) * (t > 0 ? h(t - 1, b, k) : h0(b, k)) + x(t, b, j)\n"
    "    h(t, b, j) = tanh(a(t, b, j))\n"
    "  }\n"
    "  Y(t) +=! (t + k >= 1 && t + k <= T) ? h(t + k - 1, 0, 0) * W(k, 0) : 0.0 where t in 0:T\n"
    "}\n",
]
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
        tcir.define(text, "fuzz.tc")
    except TCError as err:
        assert str(err).startswith("fuzz.tc:") or str(err).startswith("error:")


CRASHES = [
    # A number glued to letters became an index name xDSL rejects (ValueError).
    "def f(float(N) A) -> (B) { B(1e40i) = A(1e40i) }",
    # A float literal outside float32 overflowed when emitted (OverflowError).
    "def f(float(N) A) -> (B) { B(i) = fmaxf(A(i), 1e40) }",
    "def f(float(N) A) -> (B) { B(i) = A(i) + 1e400 }",
    # A subscript with an index whose range depends on an unresolved one
    # solved for the other index as if that range were known (KeyError).
    "def f(float(H) A) -> (O) { O(i) max=! A(2 * i + k) where k in i:2 }",
    "def f(float(B, H) A) -> (O) { O(b, j) max=! A(2, 2 * j + k) where k in 0:b }",
]


def test_index_named_like_an_isl_keyword_lowers() -> None:
    """`min` as an index broke the isl sets of convert-tc-to-poly."""
    import numpy as np

    mv = tcir.define("def mv(float(M,K) A, float(K) x) -> (C) { C(i) +=! A(i,min) * x(min) }").mv
    a, x = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(mv(a, x, options=tcir.MappingOptions(tile=[2])), a @ x)


@pytest.mark.parametrize("text", CRASHES)
def test_inputs_that_once_crashed(text: str) -> None:
    with pytest.raises(TCError):
        tcir.define(text, "fuzz.tc")


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), rng=st.randoms(use_true_random=False))
def test_mutated_examples(seed: str, rng: random.Random) -> None:
    check(mutate(rng, seed))


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
