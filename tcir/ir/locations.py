"""Source locations of ops, as MLIR keeps them.

MLIR's parser gives every op the `file:line:col` where it starts, and
diagnostics about an op point there. xDSL's parser keeps only explicit
`loc(...)` attributes, so `LocatedParser` adds the rest; an op that a pass
created without one is reported at its nearest located ancestor.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from tcir.errors import SourceLocation


RESULTS = re.compile(r"(?:%[\w$.-]+(?:\s*:\s*\d+)?\s*,\s*)*%[\w$.-]+(?:\s*:\s*\d+)?\s*=\s*")
"""The result list of an op (`%a, %b:2 = `)."""


class LocatedParser(Parser):
    """xDSL's parser, giving each op without an explicit `loc(...)` the
    `FileLineColLoc` of its first token (and an error raised while parsing
    an op, not by the parser itself, that location too)."""

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        start = span.start
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except DiagnosticException as e:  # a constraint that failed while parsing: at the op
            raise ParseError(span, str(e).strip().splitlines()[0]) from None
        if not isinstance(op.location, FileLineColLoc):
            # MLIR locates an op at its name, after the results it defines.
            results = RESULTS.match(self._parser_state.lexer.input.content, start)
            line, col = self._line_col(results.end() if results else start)
            op.location = FileLineColLoc(
                StringAttr(self._parser_state.lexer.input.name), IntAttr(line), IntAttr(col)
            )
        return op

    def _line_col(self, position: int) -> tuple[int, int]:
        # xDSL's Span.get_location counts newlines from the start for every
        # call; a file of many ops needs them counted once.
        starts = getattr(self, "_line_starts", None)
        if starts is None:
            source = self._parser_state.lexer.input
            newline, text = source.newline, source.content
            starts = [0]
            found = text.find(newline)
            while found >= 0:
                starts.append(found + 1)
                found = text.find(newline, found + 1)
            self._line_starts = starts
        line = bisect_right(starts, position)
        return line, position - starts[line - 1] + 1


def op_location(op: Operation) -> SourceLocation | None:
    """Where `op` (or, for an op a pass created, its nearest ancestor) was parsed."""
    current: Operation | None = op
    while current is not None:
        location = current.location
        if isinstance(location, FileLineColLoc):
            return SourceLocation(location.filename.data, location.line.data, location.column.data)
        current = current.parent_op()
    return None


def first_located(op: Operation) -> SourceLocation | None:
    """`op`'s location, else that of the first op inside it that has one (an
    implicit `builtin.module` has none of its own)."""
    for inner in op.walk():
        if isinstance(inner.location, FileLineColLoc):
            return op_location(inner)
    return None
