"""What the tuner reports (`Progress`, `TuningResult`) and how it says it, for
`tune()` and `tcir-tune` alike.

    display = Display.make(printing=False)       # rich on a terminal, else logging
    tuner = Tuner(f, inputs, on_progress=ProgressReport(display))
    result = tuner.run()
    for line in summary(result, "f", "cpu", tuner.cache.path, varied_fields(tuner.space)):
        display.line(line)

While the search runs: a live status line through `rich` on a terminal or in
a notebook (candidates measured, failed, pruned, the best time and its
speedup over the default, the rate), and a line for each new best and each
discarded candidate; elsewhere those lines only, printed (`tcir-tune`) or
logged at INFO (`tune()`, logger `tcir.tuner`). At the end, the same summary
for both: a table of the fastest candidates with the options that differ
from the default (`MappingOptions()`) among those the search varies, then
the best options, their time and the default's, and where they are stored
for later calls. Every line fits `WIDTH` columns.
"""

from __future__ import annotations

import logging
import sys
import textwrap
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

from tcir.compiler.options import DEFAULT, MappingOptions
from tcir.tuner.evaluate import Outcome, Usage
from tcir.tuner.space import SearchSpace

log = logging.getLogger("tcir.tuner")

@dataclass(frozen=True)
class Progress:
    """The tuner's state after each measured candidate."""

    done: int
    """Candidates measured in this run so far (failed ones included)."""
    total: int | None
    """Candidates this run measures at most; None: as many as `max_time` allows."""
    measured: int
    """All candidates measured, those of resumed runs included."""
    failed: int
    pruned: int
    """Candidates not compiled because they cannot run (see `SearchSpace.prune`)."""
    best: Outcome | None
    last: Outcome
    improved: bool
    """`last` is the new best."""
    elapsed: float
    default_seconds: float | None
    """The time of a call without options (the default), once measured."""

    @property
    def speedup(self) -> float | None:
        """Default time over best time so far."""
        if self.default_seconds is None or self.best is None or self.best.seconds is None:
            return None
        return self.default_seconds / self.best.seconds

    @property
    def rate(self) -> float:
        """Candidates measured per second since the tuner started."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0


Stop = Literal["candidates", "max_time", "converged"]
"""Why a run ended: it measured its `candidates`, reached `max_time`, or the
search converged (`CONVERGED_AFTER` proposals in a row brought nothing new)."""


@dataclass(frozen=True)
class TuningResult:
    """The best options found, their time and the time of a call without
    options (the default: the default mapping on a GPU, the canonical
    loops on the CPU). `best` is None where no candidate beat a default
    that no options stand for (the CPU's canonical loops, a def the GPU's
    default mapping lowers in parts): calls keep it."""

    best: MappingOptions | None
    best_seconds: float
    default_seconds: float | None
    stopped: Stop
    outcomes: list[Outcome] = field(repr=False)
    """Every candidate measured, in order (those of resumed runs first)."""
    pruned: int = 0
    """Candidates not compiled because they cannot run."""
    usage: Usage | None = field(default=None, repr=False)
    """How busy the compile and profile workers were."""

    def ranking(self, count: int = 5) -> list[Outcome]:
        """The `count` fastest candidates that ran correctly, fastest first."""
        return sorted((o for o in self.outcomes if o.seconds is not None), key=lambda o: o.time)[
            :count
        ]

    @property
    def speedup(self) -> float | None:
        """Default time over best time (None if the default failed)."""
        if self.default_seconds is None:
            return None
        return self.default_seconds / self.best_seconds



WIDTH = 100
"""Columns every line of the tuner's output fits in."""

ENDINGS = {
    "candidates": "measured its candidates",
    "max_time": "reached max_time",
    "converged": "the search converged (it proposed nothing new)",
}


def milliseconds(seconds: float | None) -> str:
    return "failed" if seconds is None else f"{seconds * 1e3:.4f} ms"


def fit(text: str, indent: str = "    ") -> str:
    """`text` wrapped between words to `WIDTH` columns, continuation lines indented."""
    return textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False)


class Display:
    """Where the tuner's lines go: plain lines (`status` is dropped), printed
    or logged at INFO; see `make` for the live ones."""

    def __init__(self, printing: bool = True):
        self.printing = printing

    @staticmethod
    def make(printing: bool) -> Display:
        """A live display through rich where the output is a terminal or a
        notebook; else lines, printed or logged."""
        try:
            from rich.console import Console
        except ImportError:
            return TerminalDisplay() if printing and sys.stdout.isatty() else Display(printing)
        console = Console(width=WIDTH) if sys.stdout.isatty() else Console()
        if console.is_terminal or console.is_jupyter:
            return RichDisplay(console)
        return Display(printing)

    def status(self, text: str) -> None:
        log.debug("%s", text)

    def line(self, text: str) -> None:
        text = fit(text)
        if self.printing:
            print(text, flush=True)
        else:
            for line in text.splitlines():
                log.info("%s", line)

    def close(self) -> None:
        pass


class TerminalDisplay(Display):
    """A live status line on a terminal without rich (`\\r` and erase)."""

    def status(self, text: str) -> None:
        print(f"\r\x1b[2K{text[:WIDTH]}", end="", flush=True)

    def line(self, text: str) -> None:
        print("\r\x1b[2K", end="")
        super().line(text)


class RichDisplay(Display):
    """A `rich` spinner with the live status; lines printed above it."""

    def __init__(self, console: object):
        from rich.console import Console

        super().__init__(printing=True)
        assert isinstance(console, Console)
        self.console = console
        self._status = console.status("starting workers")
        self._status.start()

    def status(self, text: str) -> None:
        self._status.update(text[: WIDTH - 2])

    def line(self, text: str) -> None:
        self.console.print(fit(text), highlight=False, markup=False, soft_wrap=True)

    def close(self) -> None:
        self._status.stop()


class ProgressReport:
    """An `on_progress` callback that shows the search on a `Display` and
    keeps the curve of the best time (measured candidates, seconds)."""

    def __init__(self, display: Display):
        self.display = display
        self.curve: list[tuple[int, float]] = []

    def __call__(self, p: Progress) -> None:
        if p.best is not None and p.best.seconds is not None:
            self.curve.append((p.measured, p.best.seconds))
        best = milliseconds(p.best.seconds if p.best else None)
        speedup = "" if p.speedup is None else f" ({p.speedup:.2f}x the default)"
        candidate = f"candidate {p.done}" + (f"/{p.total}" if p.total else "")
        self.display.status(
            f"{candidate}: best {best}{speedup}; {p.measured} measured, {p.failed} failed, "
            f"{p.pruned} pruned; {p.rate:.2f}/s"
        )
        if p.last.error is not None:
            self.display.line(f"  discarded {p.last.options}: {p.last.error.splitlines()[0]}")
        if p.improved:
            self.display.line(f"{candidate}: new best {best}{speedup}, {p.elapsed:.1f} s")


def changed_fields(options: MappingOptions, varied: set[str]) -> list[str]:
    """`options`' fields among `varied` that differ from `MappingOptions()`,
    as `name=value` (`["default"]` where none does)."""
    changed = [
        f"{f.name}={getattr(options, f.name)!r}"
        for f in fields(options)
        if f.init and f.name in varied and getattr(options, f.name) != getattr(DEFAULT, f.name)
    ]
    return changed or ["default"]


def _pack(items: list[str], width: int) -> list[str]:
    """`items` joined by ", " into lines of at most `width` characters
    where they fit, breaking between items only."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) + 1 <= width:  # and a "," after
            lines[-1] += f", {item}"
        else:
            lines[-1:] = [lines[-1] + ","] if lines else []
            lines.append(item)
    return lines


def varied_fields(space: SearchSpace) -> set[str]:
    """The option fields a search space varies (a list field per gene `tile_0`...)."""
    names = set()
    for name in space.names:
        base, _, position = name.rpartition("_")
        names.add(base if position.isdigit() else name)
    return names


def ranking_table(result: TuningResult, varied: set[str], count: int = 5) -> list[str]:
    """The `count` fastest candidates: time, speedup over the default, and
    the options among `varied` that differ from `MappingOptions()`."""
    rows: list[tuple[str, str, str, list[str]]] = []
    for k, outcome in enumerate(result.ranking(count), 1):
        speedup = "" if result.default_seconds is None else f"{result.default_seconds / outcome.time:.2f}x"
        rows.append((str(k), milliseconds(outcome.seconds), speedup, changed_fields(outcome.options, varied)))
    header = ("#", "time", "vs default", "options (differing from MappingOptions())")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(3)]
    indent = " " * (2 + sum(w + 2 for w in widths))
    lines = [f"best {len(rows)} of {len(result.outcomes)} measured ({result.pruned} pruned):"]
    for row, options in ((header[:3], [header[3]]), *((r[:3], r[3]) for r in rows)):
        head = "  " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) + "  "
        packed = _pack(options, WIDTH - len(indent))
        lines += [head + packed[0], *(indent + line for line in packed[1:])]
    return lines


def summary(result: TuningResult, name: str, backend: str, cache: Path, varied: set[str]) -> list[str]:
    """The lines that end a run of def `name` on `backend`: the table, why
    it ended, the best options, their time against the default's, and
    what later calls use (from the cache at `cache`)."""
    default = milliseconds(result.default_seconds)
    call = f"{name} with these shapes on {backend}"
    lines = [*ranking_table(result, varied), f"ended: {ENDINGS[result.stopped]}"]
    if result.best is None:
        lines += [
            f"no candidate beat a call without options ({default}{', the canonical loops' if backend == 'cpu' else ''}): "
            f"later calls of {call} keep it",
        ]
        return lines
    lines += [
        f"best options: {result.best}",
        f"  time: {milliseconds(result.best_seconds)} (a call without options: {default})",
    ]
    if result.speedup is not None:
        lines.append(f"  speedup over a call without options: {result.speedup:.2f}x")
    lines.append(f"  stored in {cache}: later calls of {call} use these options")
    return lines
