"""`--verify-diagnostics`: check diagnostics against the input's annotations,
as MLIR's `SourceMgrDiagnosticVerifierHandler` does.

    // expected-error@+1 {{'tc.read' op expected 1 subscripts}}
    %0 = tc.read %I[%i, %i]

An annotation `expected-(error|warning|remark|note)` names the severity; the
text between the outer `{{` and `}}` must occur in the message (with the
`-re` suffix, its inner `{{...}}` parts are regular expressions). It applies
to its own line, `@+N`/`@-N` lines further, `@above`/`@below` to the nearest
line without an annotation, and `@unknown` to a diagnostic without a
location. Every diagnostic (notes included) must be expected, and every
expectation met once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tcir.diagnostics import Diagnostic
from tcir.errors import SourceLocation

ANNOTATION = re.compile(
    r"expected-(?P<severity>error|warning|remark|note)(?P<re>-re)?"
    r" *(?:@(?P<where>[+-]\d+|above|below|unknown))? *\{\{(?P<text>.*)\}\}\s*$"
)


@dataclass
class Expectation:
    severity: str
    pattern: re.Pattern[str]
    text: str
    line: int | None
    """The line the diagnostic is expected on; None for `@unknown`."""
    loc: SourceLocation
    """Where the annotation itself is (for "was not produced")."""
    met: bool = False

    def matches(self, diagnostic: Diagnostic, file: str) -> bool:
        if self.met or diagnostic.severity != self.severity:
            return False
        if self.line is None:
            where = diagnostic.loc is None
        else:
            where = diagnostic.loc is not None and (diagnostic.loc.file, diagnostic.loc.line) == (file, self.line)
        return where and self.pattern.search(diagnostic.message) is not None


def _pattern(text: str, regex: bool) -> re.Pattern[str]:
    if not regex:
        return re.compile(re.escape(text))
    parts = re.split(r"\{\{(.*?)\}\}", text)  # odd parts are the regular expressions
    return re.compile("".join(p if k % 2 else re.escape(p) for k, p in enumerate(parts)))


def expectations(text: str, file: str, first_line: int = 1) -> tuple[list[Expectation], list[Diagnostic]]:
    """The annotations of `text` (whose first line is line `first_line` of
    `file`), and an error for each malformed one (a bad regex, a line
    outside the file)."""
    found: list[Expectation] = []
    errors: list[Diagnostic] = []
    below: list[Expectation] = []
    last_plain: int | None = None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        number = first_line + index
        match = ANNOTATION.search(line)
        if match is None:
            for expectation in below:
                expectation.line = number
            below.clear()
            last_plain = number
            continue
        loc = SourceLocation(file, number, match.start() + 1)
        try:
            pattern = _pattern(match["text"], match["re"] is not None)
        except re.error as e:
            errors.append(Diagnostic("error", f"invalid regular expression in expected-{match['severity']}-re: {e}", loc))
            continue
        where = match["where"]
        expectation = Expectation(match["severity"], pattern, match["text"], number, loc)
        if where == "unknown":
            expectation.line = None
        elif where == "above":
            if last_plain is None:
                errors.append(Diagnostic("error", "expected-* @above has no line above it", loc))
                continue
            expectation.line = last_plain
        elif where == "below":
            below.append(expectation)
        elif where is not None:
            expectation.line = number + int(where)
        found.append(expectation)
    for expectation in below:
        errors.append(Diagnostic("error", "expected-* @below has no line below it", expectation.loc))
        found.remove(expectation)
    return found, errors


def check(diagnostics: Sequence[Diagnostic], expected: list[Expectation], file: str) -> list[Diagnostic]:
    """The errors that `diagnostics` (each with its notes) against `expected`
    give: an unexpected diagnostic, an expectation not met."""
    errors: list[Diagnostic] = []
    pending = [note for d in diagnostics for note in _flat(d)]
    for diagnostic in pending:
        if not any(e.matches(diagnostic, file) and _meet(e) for e in expected):
            errors.append(Diagnostic("error", f"unexpected {diagnostic.severity}: {diagnostic.message}", diagnostic.loc))
    for e in expected:
        if not e.met:
            errors.append(Diagnostic("error", f'expected {e.severity} "{e.text}" was not produced', e.loc))
    return errors


def _flat(diagnostic: Diagnostic) -> list[Diagnostic]:
    return [diagnostic, *(n for note in diagnostic.notes for n in _flat(note))]


def _meet(expectation: Expectation) -> bool:
    expectation.met = True
    return True
