"""Mutants of TC source, for fuzzing the frontend.

    text = mutate(random.Random(7), source)

A mutant cuts the text short, or deletes, inserts, swaps or replaces a few of
its tokens (from `VOCABULARY`, or short runs of punctuation and letters). The
frontend must accept a mutant or reject it with a `TCError`: never raise
anything else (`tests/unit/frontend/test_fuzz.py`, `tools/frontend_fuzz.py`).
"""

from __future__ import annotations

import random

from .lexer import tokenize
from .source import Source

VOCABULARY = (
    "(", ")", "{", "}", ",", ":", "?", "+", "-", "*", "/", "%", "<", "<=", "==", "!=",
    "&&", "||", "!", "=", "+=", "+=!", "max=!", "min=", "<=>", "->", ".", "#", "\n",
    "def", "where", "exists", "in", "float", "int", "double", "half", "A", "B", "i", "j", "k",
    "M", "N", "0", "1", "2.5", "1e-5", "1e40", "1e400", "7i", "A.0", "fmaxf", "exp", "min", "sh",
    "nextafter", "O", "C", "x", "0:N", "N*N",
)  # fmt: skip
NOISE = "()+-*,?:!aA1._ =<>#\t"


def fragments(text: str) -> list[str]:
    """The token texts of `text`, each with the spaces after it."""
    tokens = tokenize(Source(text))
    ends = [t.pos for t in tokens[1:]] + [len(text)]
    return [text[t.pos : end] for t, end in zip(tokens, ends)]


def mutate(rng: random.Random, text: str) -> str:
    """One random mutant of `text` (which must tokenize)."""
    parts = fragments(text)
    kind = rng.randrange(6)
    if kind == 0:
        return text[: rng.randrange(len(text) + 1)]
    for _ in range(rng.randint(1, 4)):
        if not parts:
            break
        k = rng.randrange(len(parts))
        if kind == 1:
            del parts[k]
        elif kind == 2:
            parts.insert(k, rng.choice(VOCABULARY) + " ")
        elif kind == 3:
            m = rng.randrange(len(parts))
            parts[k], parts[m] = parts[m], parts[k]
        elif kind == 4:
            parts[k] = rng.choice(VOCABULARY) + " "
        else:
            parts.insert(k, "".join(rng.choice(NOISE) for _ in range(5)))
    return "".join(parts)
