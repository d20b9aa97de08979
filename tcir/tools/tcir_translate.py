"""`tcir-translate FILE --target=T`: print a program in another language.

Targets are xDSL targets registered by tcir (`mlir` for now; `llvm` and
`cuda` arrive with the backends). It is `tcir-opt -t T` with no passes, so it
accepts the same inputs (`.mlir`, `.tc`, stdin).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tcir.diagnostics import report_errors
from tcir.tools.tcir_opt import TcirOptMain


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tcir-translate", description="Translate tcir IR or TC source."
    )
    parser.add_argument("input_file", nargs="?", help="path to input file")
    parser.add_argument("--target", default="mlir", help="output language")
    parser.add_argument("-o", "--output-file", help="path to output file")
    parser.add_argument("-f", "--frontend", help="input kind (mlir or tc)")
    known = parser.parse_args(args)
    forwarded = ["-t", known.target]
    if known.input_file is not None:
        forwarded.insert(0, known.input_file)
    if known.output_file is not None:
        forwarded += ["-o", known.output_file]
    if known.frontend is not None:
        forwarded += ["-f", known.frontend]
    with report_errors("tcir-translate"):
        return TcirOptMain(forwarded).run()


if __name__ == "__main__":
    sys.exit(main())
