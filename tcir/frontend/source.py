"""Source text with offset -> line:col mapping and error construction."""

from __future__ import annotations

from bisect import bisect_right

from tcir.errors import SourceLocation, TCError


class Source:
    """A TC source text; turns character offsets into `SourceLocation`s."""

    def __init__(self, text: str, filename: str = "<string>"):
        self.text = text
        self.filename = filename
        self._starts = [0]
        self._ends = []
        for line in text.splitlines(keepends=True):
            self._ends.append(self._starts[-1] + len(line.rstrip("\r\n")))
            self._starts.append(self._starts[-1] + len(line))
        self._starts.pop()
        if not self._ends:
            self._starts.append(0)
            self._ends.append(0)

    def loc(self, offset: int) -> SourceLocation:
        """The location of the character at `offset` (1-based line and column).

        Offsets past the last line (end of input) point just after its last character.
        """
        index = max(0, bisect_right(self._starts, offset) - 1)
        offset = min(offset, self._ends[index]) if index == len(self._starts) - 1 else offset
        return SourceLocation(self.filename, index + 1, offset - self._starts[index] + 1)

    def error(
        self, cls: type[TCError], message: str, offset: int, length: int = 1
    ) -> TCError:
        """Build (not raise) an error of class `cls` pointing at `offset`."""
        return cls(message, self.loc(offset), self.text, length)
