"""Tokenizer for TC source text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcir.errors import ParseError

from .source import Source

#: Reserved words (`in` and `exists` are only special inside `where` clauses).
KEYWORDS = frozenset({"def", "where"})

_NUMBER = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[_a-zA-Z0-9]+")
_SPACE = re.compile(r"(?:\s+|#[^\n]*)+")
# Longest first: the lexer tries these in order.
_PUNCT = (
    "<=>", "+=!", "*=!", "->", "+=", "*=", "==", "!=", "<=", ">=", "&&", "||",
    "(", ")", "{", "}", ",", ":", "?", "+", "-", "*", "/", "%", "<", ">", "=", "!", ".",
)
_MAX_INT = 2**31 - 1


@dataclass(frozen=True)
class Token:
    """A token: kind is 'id', 'int', 'float', 'eof' or the punctuation itself."""

    kind: str
    text: str
    pos: int
    value: int | float | None = None


def _number(src: Source, text: str, pos: int) -> Token:
    is_float = any(c in text for c in ".eE")
    if is_float:
        return Token("float", text, pos, float(text))
    if len(text) > 10 or int(text) > _MAX_INT:
        raise src.error(ParseError, f"integer literal '{text[:20]}' does not fit in int32",
                        pos, len(text))
    return Token("int", text, pos, int(text))


def tokenize(src: Source) -> list[Token]:
    """Split `src` into tokens, ending with an 'eof' token."""
    text, pos, out = src.text, 0, []
    n = len(text)
    while True:
        m = _SPACE.match(text, pos)
        if m:
            pos = m.end()
        if pos >= n:
            out.append(Token("eof", "", n))
            return out
        c = text[pos]
        if c.isascii() and (c.isalnum() or c == "_"):
            word = _WORD.match(text, pos)
            num = _NUMBER.match(text, pos) if c.isdigit() else None
            assert word is not None
            if num and len(num.group()) >= len(word.group()):
                out.append(_number(src, num.group(), pos))
                pos = num.end()
            elif word.group().isdigit():
                out.append(_number(src, word.group(), pos))
                pos = word.end()
            else:
                out.append(_word(word.group(), pos, text))
                pos += len(out[-1].text)
                _check_doubled(src, out[-1], text)
            continue
        if c == "." and pos + 1 < n and text[pos + 1].isdigit():
            prev = out[-1] if out else None
            if not (prev and prev.kind == "id" and prev.pos + len(prev.text) == pos):
                num = _NUMBER.match(text, pos)
                assert num is not None
                out.append(_number(src, num.group(), pos))
                pos = num.end()
                continue
        for p in _PUNCT:
            if text.startswith(p, pos):
                out.append(Token(p, p, pos))
                pos += len(p)
                break
        else:
            raise src.error(ParseError, f"unexpected character {c!r}", pos)
        _check_doubled(src, out[-1], text)


_INITIALIZING = ("+=!", "*=!", "min=!", "max=!")
_SINGLE = frozenset("+-*/%!?:<>")
"""Operators that are no operator doubled (`**`, `--`, `!!`...)."""


def _check_doubled(src: Source, tok: Token, text: str) -> None:
    """A ParseError at the second half of a doubled operator written without
    a space (`+=!!`, `=!`, `--`, `**`), which would otherwise read as an
    operator and a prefix `!` or `-` (`+=! !A`: a bool result) or fail
    later with a vaguer message."""
    end = tok.pos + len(tok.text)
    after = text[end : end + 1]
    if tok.kind in _INITIALIZING and after == "!":
        message = f"'{tok.text}!' is not an operator; did you mean '{tok.text}'? (write '{tok.text} !x' to negate)"
    elif tok.kind == "=" and after == "!" and text[end + 1 : end + 2] != "=":
        message = "'=!' is not an operator; did you mean '+=!' (a reduction) or '= !x' (a negation)?"
    elif tok.kind in _SINGLE and after == tok.kind:
        message = f"'{tok.kind * 2}' is not an operator"
        if tok.kind in "-!":
            message += f" (write '{tok.kind} {tok.kind}x' to apply '{tok.kind}' twice)"
        elif tok.kind == "/":
            message += " (comments start with '#')"
    else:
        return
    raise src.error(ParseError, message, end)


def _word(word: str, pos: int, text: str) -> Token:
    """An identifier, or the reduction operators `min=`, `max=`, `min=!`, `max=!`."""
    end = pos + len(word)
    if word in ("min", "max") and text.startswith("=", end) and not text.startswith("==", end):
        if text.startswith("=!", end) and not text.startswith("=!=", end):
            return Token(word + "=!", word + "=!", pos)
        return Token(word + "=", word + "=", pos)
    return Token("id", word, pos)
