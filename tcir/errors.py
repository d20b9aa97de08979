"""User-facing errors: every mistake a user can make surfaces as a `TCError`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in TC source text (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class TCError(Exception):
    """Base class of every error caused by user input.

    With a location, the message reads `file:line:col: error: ...` followed by
    the offending source line and a caret under the culprit, as compilers print;
    `note` appends `file:line:col: note: ...` lines the same way (clang's
    "to match this '('").
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        loc: SourceLocation | None = None,
        source: str | None = None,
        length: int = 1,
    ):
        self.message = message
        self.loc = loc
        self.source = source
        self.length = max(1, length)
        self.notes: list[tuple[str, SourceLocation, int]] = []
        super().__init__(self._format())

    def note(self, message: str, loc: SourceLocation, length: int = 1) -> TCError:
        """Add a note pointing at another place of the source; returns self."""
        self.notes.append((message, loc, max(1, length)))
        self.args = (self._format(),)
        return self

    def _format(self) -> str:
        if self.loc is None:
            return f"error: {self.message}"
        text = self._diagnostic("error", self.message, self.loc, self.length)
        for message, loc, length in getattr(self, "notes", ()):
            text += "\n" + self._diagnostic("note", message, loc, length)
        return text

    def _diagnostic(self, kind: str, message: str, loc: SourceLocation, length: int) -> str:
        text = f"{loc}: {kind}: {message}"
        if self.source is not None:
            lines = self.source.splitlines()
            if 1 <= loc.line <= len(lines):
                line = lines[loc.line - 1].expandtabs(1)
                caret = " " * (loc.col - 1) + "^" + "~" * (length - 1)
                text += f"\n{line}\n{caret}"
        return text


class ParseError(TCError):
    """Malformed TC text (lexing or parsing)."""


class TypeError_(TCError):
    """A semantic or typing error in a well-formed TC program."""


class RangeError(TCError):
    """Range inference failed (unconstrained, ambiguous or empty range)."""


class ShapeError(TCError):
    """Arguments whose rank, dtype or sizes disagree with the signature."""


class IRError(TCError):
    """Malformed textual IR or IR that fails verification."""


class KernelFault(TCError):
    """A GPU kernel that the simulated GPU (`backend="cuda-sim"`) caught
    misbehaving: a data race, a conflict between blocks, a divergent barrier,
    an out-of-bounds access, a read of uninitialized memory or a misaligned
    vector access. `kind` says which (`race`, `conflict`, `barrier`,
    `bounds`, `uninitialized`, `misaligned`)."""

    def __init__(self, message: str, kind: str):
        self.fault = kind
        super().__init__(message)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the candidate closest to a mistyped `name`
    (difflib's similarity, at least 0.6: `exps` -> `exp`, `abs` -> `fabs`,
    `max_tme` -> `max_time`), or "" when none is close."""
    close = difflib.get_close_matches(name, sorted(set(candidates) - {name}), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def check_keywords(what: str, given: Iterable[str], valid: Iterable[str]) -> None:
    """A `TCError` naming the first of the `given` keyword arguments that is
    not `valid`, the closest valid one, and all of them."""
    valid = list(valid)
    for name in given:
        if name not in valid:
            raise TCError(f"{what}: unknown keyword argument '{name}'{did_you_mean(name, valid)} "
                          f"(valid: {', '.join(valid)})")
