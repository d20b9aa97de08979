"""Turn errors from user input into compiler-style diagnostics, not tracebacks."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Operation
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, VerifyException
from xdsl.utils.exceptions import ParseError as IRParseError

from tcir.errors import TCError


def one_line(error: BaseException) -> str:
    """The first line of an error's message: the diagnostic itself.

    xDSL's verifier appends the whole module with the culprit underlined;
    the first line already names the op and the problem.
    """
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def verify_naming_op(root: Operation) -> None:
    """Verify `root`, innermost ops first, naming the failing op MLIR-style.

    Raises `VerifyException("'tc.read' op expected 2 subscripts ...")`.
    """
    for op in root.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            message = one_line(e)
            if not message.startswith(f"'{op.name}'"):
                message = f"'{op.name}' op {message}"
            raise VerifyException(message) from e


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
        print(e, file=sys.stderr)
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
