"""Diagnostics: user errors, warnings and remarks as compilers print them,
never tracebacks.

An error about an op is an `OpError` at the op's source location (see
`tcir.ir.locations`). Passes report warnings and remarks with `emit`; the
tools print them, the library turns warnings into Python warnings and drops
remarks. An exception escaping a pass is reported at the op that the pass
was working on: the one `anchored` last handed it.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from xdsl.ir import Operation
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, VerifyException
from xdsl.utils.exceptions import ParseError as IRParseError

from tcir.errors import IRError, SourceLocation, TCError
from tcir.ir.locations import op_location

SEVERITIES = ("error", "warning", "remark", "note")


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: severity, message, location and attached notes."""

    severity: str
    message: str
    loc: SourceLocation | None = None
    notes: tuple[Diagnostic, ...] = ()
    length: int = 1

    def render(self, sources: Mapping[str, str] | None = None) -> str:
        """`file:line:col: severity: message`, the source line and a caret
        under the culprit where `sources` has the file's text, then the notes."""
        head = f"{self.loc}: " if self.loc is not None else ""
        lines = [f"{head}{self.severity}: {self.message}"]
        source = (sources or {}).get(self.loc.file) if self.loc is not None else None
        if source is not None and self.loc is not None:
            text = source.splitlines()
            if 1 <= self.loc.line <= len(text):
                lines.append(text[self.loc.line - 1].expandtabs(1))
                lines.append(" " * (self.loc.col - 1) + "^" + "~" * (self.length - 1))
        return "\n".join([*lines, *(note.render(sources) for note in self.notes)])


def diagnostic_of(error: TCError) -> Diagnostic:
    """The diagnostic a `TCError` stands for (its notes included)."""
    notes = tuple(Diagnostic("note", m, loc, length=n) for m, loc, n in error.notes)
    return Diagnostic("error", error.message, error.loc, notes, error.length)


class OpError(IRError):
    """An error about one op, reported at its location. `op` is kept for
    MLIR's "see current operation" note."""

    def __init__(self, op: Operation, message: str, loc: SourceLocation | None = None):
        self.op = op
        super().__init__(message, loc or op_location(op))


class InternalError(OpError):
    """An exception that escaped a pass unexpected (isl's, or a bug of the
    pass): one line for a user, the exception itself in `__cause__` for a
    developer (and for the options fuzz, which counts it as a crash)."""


def one_line(error: BaseException) -> str:
    """The first line of an error's message: the diagnostic itself.

    xDSL's verifier appends the whole module with the culprit underlined;
    the first line already names the op and the problem. isl's messages end
    with the isl source file they come from, which says nothing to a user.
    """
    text = str(error).strip()
    first = text.splitlines()[0] if text else type(error).__name__
    return re.sub(r" in \S+\.c:\d+$", "", first)


def verify(root: Operation) -> None:
    """Verify `root`, innermost ops first; the first failure is an `OpError`
    naming the op MLIR-style (`'tc.read' op expected 2 subscripts ...`)."""
    for op in root.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            message = one_line(e)
            if not message.startswith(f"'{op.name}'"):
                message = f"'{op.name}' op {message}"
            raise OpError(op, message) from None


# --- warnings and remarks -------------------------------------------------

_handler: ContextVar[Callable[[Diagnostic], None] | None] = ContextVar("tcir_diagnostics", default=None)


def emit(op: Operation, severity: str, message: str) -> None:
    """Report a warning or remark about `op` (an error is an `OpError` raised).

    Under `handling(f)`, `f` receives it; elsewhere a warning becomes a
    Python warning and a remark is dropped, as a library should.
    """
    assert severity in ("warning", "remark")
    diagnostic = Diagnostic(severity, message, op_location(op))
    handler = _handler.get()
    if handler is not None:
        handler(diagnostic)
    elif severity == "warning":
        warnings.warn(diagnostic.render(), stacklevel=2)


@contextmanager
def handling(handler: Callable[[Diagnostic], None]) -> Iterator[None]:
    """Send the warnings and remarks emitted inside the block to `handler`."""
    token = _handler.set(handler)
    try:
        yield
    finally:
        _handler.reset(token)


# --- errors escaping a pass ------------------------------------------------

_anchor: ContextVar[Operation | None] = ContextVar("tcir_anchor", default=None)

OpT = TypeVar("OpT", bound=Operation)


def anchored(ops: Iterable[OpT]) -> Iterator[OpT]:
    """Iterate `ops`; an error escaping a pass while it works on one is
    reported at that op (a pass's loop over scops, defs or kernels)."""
    for op in ops:
        _anchor.set(op)
        yield op


def run_pass(name: str, apply: Callable[[], None], module: Operation) -> None:
    """Run a pass's `apply`; whatever escapes it becomes one `OpError`
    `<name>: <what>` at the op it was working on (else the module)."""
    token = _anchor.set(None)
    try:
        apply()
    except OpError as e:
        raise _in_pass(name, e.op, e) from None
    except TCError as e:
        raise _in_pass(name, _anchor.get() or module, e) from None
    except Exception as e:  # noqa: BLE001  (isl errors and pass bugs alike: one line, no traceback)
        raise InternalError(_anchor.get() or module, f"{name}: {one_line(e)}") from e
    finally:
        _anchor.reset(token)


def _in_pass(name: str, op: Operation, error: TCError) -> OpError:
    message = error.message if error.message.startswith(f"{name}: ") else f"{name}: {error.message}"
    located = OpError(op, message, None if isinstance(error, OpError) else error.loc)
    for note in error.notes:
        located.note(*note)
    return located


# --- the tools' top level ------------------------------------------------


def format_parse_error(error: IRParseError) -> str:
    """`file:line:col: error: message`, then the source line and a caret."""
    location = error.span.get_location()
    context = error.span.print_with_context().splitlines()[1:3]
    return "\n".join([f"{location}: error: {error.msg}", *context])


@contextmanager
def report_errors(tool: str) -> Iterator[None]:
    """Print user errors as `tool: error: ...` and exit with status 1.

    Set `TCIR_DEBUG=1` to get Python tracebacks instead.
    """
    if os.environ.get("TCIR_DEBUG"):
        yield
        return
    try:
        yield
    except TCError as e:
        print(e if e.loc is not None else f"{tool}: {e}", file=sys.stderr)
        sys.exit(1)
    except IRParseError as e:
        print(format_parse_error(e), file=sys.stderr)
        sys.exit(1)
    except DiagnosticException as e:
        print(f"{tool}: error: {one_line(e)}", file=sys.stderr)
        sys.exit(1)
    except ArgSpecParseError as e:  # a malformed -p pipeline: xDSL shows where
        print(f"{tool}: error: {str(e).strip()}", file=sys.stderr)
        sys.exit(1)
    except (OSError, ValueError, NotImplementedError) as e:
        print(f"{tool}: error: {one_line(e)}", file=sys.stderr)
        sys.exit(1)
