"""Generated source text as indented lines (the CUDA printer, the simulator)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class IndentedLines:
    """A mixin for code printers: `line` appends at the current nesting
    depth, `indented` nests. Subclasses set `lines`, `depth` and `indent`."""

    indent = "  "
    lines: list[str]
    depth: int

    def line(self, text: str) -> None:
        self.lines.append(self.indent * self.depth + text)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.depth += 1
        yield
        self.depth -= 1
