"""`tcir-opt`: xDSL's opt driver with tcir's dialects, passes and TC frontend.

It reads textual IR (`.mlir`, stdin) or TC source (`.tc`, or `-f tc`), runs a
`-p` pass pipeline and prints the result, like `mlir-opt`/`xdsl-opt`.
`--print-ir-after-all` prints the IR after every pass to stderr, as MLIR does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from io import BytesIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from tcir.diagnostics import report_errors, verify_naming_op


class TcirOptMain(xDSLOptMain):
    """The `tcir-opt` driver."""

    version_format = "tcir-opt built on xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="tcir modular optimizer driver", args=args)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            default=False,
            action="store_true",
            help="Print the IR after every pass to stderr",
        )

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_tc(io: IO[bytes]) -> ModuleOp:
            from tcir.errors import TCError
            from tcir.frontend.emit import emit_module

            try:
                return emit_module(io.read().decode(), self.get_input_name())
            except TCError as e:
                if self.args.verify_diagnostics:  # report it and go on to the next chunk
                    raise DiagnosticException(str(e)) from None
                raise

        self.available_frontends["tc"] = parse_tc

    def register_all_targets(self):
        super().register_all_targets()
        # tcir's own `llvm` target lowers loops all the way to LLVM IR; xDSL's
        # only prints modules already in the llvm dialect. Registered here, not
        # in the universe, where the name would clash with xDSL's.
        from tcir.backends.cpu.target import CpuLLVMTarget
        from tcir.backends.cuda.target import CudaTarget

        self.available_targets["llvm"] = lambda: CpuLLVMTarget
        self.available_targets["cuda"] = lambda: CudaTarget

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        if file_extension == "tc" and start_offset:
            # TC diagnostics count lines from the start of the whole file.
            chunk = BytesIO(b"\n" * start_offset + chunk.read())
        return super().parse_chunk(chunk, file_extension, start_offset)

    def setup_pipeline(self):
        super().setup_pipeline()
        inner = self.pipeline.callback
        assert inner is not None

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            try:
                inner(previous, module, following)
            except VerifyException:
                verify_naming_op(module)
                raise
            if self.args.print_ir_after_all and previous is not None:
                print(f"// -----// IR Dump After {previous.name} //----- //", file=sys.stderr)
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)

        self.pipeline = PassPipeline(self.pipeline.passes, callback)


def main(args: Sequence[str] | None = None) -> int:
    with report_errors("tcir-opt"):
        TcirOptMain(args).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
