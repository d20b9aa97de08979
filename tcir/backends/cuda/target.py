"""The `cuda` target: CUDA C of every kernel of a gpu-level module.

`tcir-opt -t cuda` and `tcir-translate --target=cuda` use `CudaTarget` once it
is registered; `python -m tcir.backends.cuda.target FILE` prints the same from
a textual IR file (or stdin), for tests and people.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class CudaTarget(Target):
    """Print the CUDA C translation unit of all `gpu.func` kernels."""

    name = "cuda"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcir.backends.cuda.printer import print_cuda

        output.write(print_cuda(module))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tcir.backends.cuda.target [FILE]`: print CUDA C of textual IR."""
    from tcir.backends.cuda.printer import print_cuda
    from tcir.passmanager import parse_ir
    from tcir.diagnostics import report_errors

    args = list(sys.argv[1:] if argv is None else argv)
    with report_errors("tcir-cuda"):
        if args:
            with open(args[0]) as f:
                text, name = f.read(), args[0]
        else:
            text, name = sys.stdin.read(), "<stdin>"
        sys.stdout.write(print_cuda(parse_ir(text, name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
