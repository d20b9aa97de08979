"""Source locations of ops, as MLIR keeps them.

MLIR's parser gives every op the `file:line:col` where it starts, and
diagnostics about an op point there. xDSL's parser keeps only explicit
`loc(...)` attributes, so `LocatedParser` adds the rest; an op that a pass
created without one is reported at its nearest located ancestor.
"""

from __future__ import annotations

from bisect import bisect_right

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser

from tcir.errors import SourceLocation


class LocatedParser(Parser):
    """xDSL's parser, giving each op without an explicit `loc(...)` the
    `FileLineColLoc` of its first token."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            line, col = self._line_col(start)
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
