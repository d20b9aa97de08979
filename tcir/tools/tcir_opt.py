"""`tcir-opt`: the modular optimizer driver, as `mlir-opt` behaves.

It reads textual IR (`.mlir`, or stdin: no file or `-`) or TC source
(`.tc`, or `-f tc`), runs a `-p` pass pipeline and prints the result with a
target (`-t mlir|llvm|cuda`). With `--split-input-file` every `// -----`
chunk is processed on its own and every failing one reported. Diagnostics
read `file:line:col: error: ...` with the source line, a caret and, for an
op, MLIR's "see current operation" note; `--verify-diagnostics` checks them
against `expected-*` annotations instead (`tcir.tools.expected_diagnostics`).
`--print-ir-after-all` dumps the IR after every pass and `--time-passes`
MLIR's timing table, both on stderr. `--list-passes` and `--help-pass NAME`
describe the passes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from io import BytesIO
from typing import IO, TextIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.exceptions import ParseError as IRParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from tcir.diagnostics import Diagnostic, diagnostic_of, handling, one_line, report_errors, verify
from tcir.errors import IRError, SourceLocation, TCError
from tcir.ir.locations import LocatedParser, op_location
from tcir.passmanager import PassManager, available_passes, describe_pass, print_ir
from tcir.tools.expected_diagnostics import check, expectations


class Timer:
    """Wall time per named step, summed over chunks, in first-seen order."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.steps: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        self.steps[name] = self.steps.get(name, 0.0) + seconds

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def report(self) -> str:
        """MLIR's execution time report (`--mlir-timing`, list display)."""
        total = time.perf_counter() - self.start
        rows = sorted(self.steps.items(), key=lambda item: -item[1])
        rest = total - sum(self.steps.values())
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "... Execution time report ...".center(79).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for name, seconds in [*rows, ("Rest", max(rest, 0.0)), ("Total", total)]:
            lines.append(f"  {seconds:10.4f} ({100 * seconds / total if total else 0:5.1f}%)  {name}")
        return "\n".join(lines)


class TcirOptMain(xDSLOptMain):
    """The `tcir-opt` driver."""

    version_format = "tcir-opt built on xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="tcir modular optimizer driver", args=args)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        helps = {
            "input_file": "input file: .mlir or .tc (stdin if absent or '-')",
            "--passes": "pass pipeline, e.g. 'cse,poly-tile{sizes=32,32}' (--list-passes lists the passes)",
            "--verify-diagnostics": "check diagnostics against the input's expected-* annotations (as mlir-opt)",
            "--time-passes": "print the time of each pass as MLIR's timing table on stderr",
            "--parsing-diagnostics": "an alias of --verify-diagnostics for parse errors (xDSL's flag)",
        }
        for action in arg_parser._actions:  # argparse has no public way to reword an inherited help
            for name in (action.dest, *action.option_strings):
                if name in helps:
                    action.help = helps[name]
        arg_parser.add_argument(
            "--print-ir-after-all",
            default=False,
            action="store_true",
            help="print the IR after every pass to stderr",
        )
        arg_parser.add_argument(
            "--list-passes",
            default=False,
            action="store_true",
            help="list every pass with its description and options, then exit",
        )
        arg_parser.add_argument("--help-pass", metavar="NAME", help="describe one pass in full, then exit")

    def register_all_targets(self):
        super().register_all_targets()
        from tcir.backends.cuda.target import CudaTarget
        from tcir.tools.targets import LLVMTarget

        self.available_targets["llvm"] = lambda: LLVMTarget
        self.available_targets["cuda"] = lambda: CudaTarget

    def register_all_frontends(self):
        super().register_all_frontends()
        self.available_frontends["tc"] = lambda io: self.parse_text(io.read().decode(), "tc")

    def setup_pipeline(self):
        if self.args.shrink:
            raise TCError("--shrink (xDSL's, for shrinkray) is not supported by tcir-opt")
        self.pass_manager = PassManager.parse(
            self.args.passes,
            callback=self.after_pass if self.args.print_ir_after_all or self.args.print_between_passes else None,
            verify_each=not self.args.disable_verify,
        )

    def after_pass(self, name: str, module: ModuleOp) -> None:
        if self.args.print_ir_after_all:
            print(f"// -----// IR Dump After {name} //----- //", file=sys.stderr)
            Printer(stream=sys.stderr).print_op(module)
            print(file=sys.stderr)
        done = sum(1 for step, _ in self.pass_manager.timings if step != "verifier")
        if self.args.print_between_passes and done < len(self.pass_manager.passes):
            print(f"IR after {name}:")  # xDSL's flag: between passes, on stdout
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")

    def get_input_name(self) -> str:
        return "<stdin>" if self.args.input_file in (None, "-") else self.args.input_file

    def read_input(self) -> tuple[str, str]:
        """The input's text and its kind (a frontend name)."""
        if self.args.input_file in (None, "-"):
            text, kind = sys.stdin.read(), "mlir"
        else:
            with open(self.args.input_file, encoding="utf-8") as f:
                text = f.read()
            kind = self.args.input_file.rsplit(".", 1)[-1] if "." in self.args.input_file else "mlir"
        kind = self.args.frontend or kind
        if kind not in self.available_frontends:
            raise TCError(f"unrecognized file extension '{kind}' (use -f {' or -f '.join(self.available_frontends)})")
        return text, kind

    def parse_text(self, text: str, kind: str) -> ModuleOp:
        """Parse one chunk (padded with newlines, so that lines count from
        the start of the file); a malformed one raises TCError."""
        name = self.get_input_name()
        if kind == "tc":
            from tcir.frontend.emit import emit_module

            return emit_module(text, name)
        if kind != "mlir":
            return self.available_frontends[kind](BytesIO(text.encode()))
        try:
            return LocatedParser(self.ctx, text, name).parse_module(not self.args.no_implicit_module)
        except IRParseError as e:
            where = e.span.get_location()
            raise IRError(e.msg, SourceLocation(name, where.line, where.col), text, len(e.span)) from None
        except DiagnosticException as e:
            raise IRError(one_line(e)) from None

    def chunks(self, text: str) -> list[tuple[str, int]]:
        """The chunks to process and the line each starts on."""
        if not self.args.split_input_file:
            return [(text, 1)]
        found, line = [], 1
        for chunk in text.split("// -----"):
            found.append((chunk, line))
            line += chunk.count("\n")
        return found

    def process(self, chunk: str, first_line: int, kind: str, timer: Timer) -> str:
        """The output of one chunk; a failure raises TCError."""
        with timer.step("Parser"):
            module = self.parse_text("\n" * (first_line - 1) + chunk, kind)
        if not self.args.disable_verify:
            with timer.step("Verifier"):
                verify(module)
        try:
            self.pass_manager.run(module)
        finally:
            for name, seconds in self.pass_manager.timings:
                timer.add("Verifier" if name == "verifier" else name, seconds)
        with timer.step("Output"):
            try:
                return self.output_resulting_program(module)
            except TCError:
                raise
            except Exception as e:  # noqa: BLE001  (a target that cannot print this module)
                raise TCError(f"target '{self.args.target}': {one_line(e)}") from e

    def diagnostic(self, error: TCError) -> Diagnostic:
        """`error` as a diagnostic; about an op, with MLIR's "see current
        operation" note (left out when verifying diagnostics, as mlir-opt does)."""
        diagnostic = diagnostic_of(error)
        op = getattr(error, "op", None)
        if op is None or self.args.verify_diagnostics:
            return diagnostic
        try:
            text = print_ir(op, generic=True)
        except Exception:  # noqa: BLE001  (an op too broken to print gets no note)
            return diagnostic
        note = Diagnostic("note", f"see current operation: {text}", op_location(op))
        return Diagnostic("error", diagnostic.message, diagnostic.loc, (*diagnostic.notes, note), diagnostic.length)

    def run(self) -> int:  # type: ignore[override]
        """Process every chunk; 1 if any failed (or, verifying diagnostics,
        if any diagnostic was unexpected or any expectation unmet)."""
        text, kind = self.read_input()
        name = self.get_input_name()
        sources = {name: text}
        timer = Timer()
        output: IO[str] = self.prepare_output()
        failed = False
        try:
            for index, (chunk, first_line) in enumerate(self.chunks(text)):
                diagnostics: list[Diagnostic] = []
                result = None
                with handling(diagnostics.append):
                    try:
                        result = self.process(chunk, first_line, kind, timer)
                    except TCError as e:
                        diagnostics.append(self.diagnostic(e))
                if self.args.verify_diagnostics or self.args.parsing_diagnostics:
                    expected, problems = expectations(chunk, name, first_line)
                    problems += check(diagnostics, expected, name)
                else:
                    problems = diagnostics
                for problem in problems:
                    prefix = "tcir-opt: " if problem.loc is None else ""
                    print(prefix + problem.render(sources), file=sys.stderr)
                failed |= any(p.severity == "error" for p in problems)
                if index > 0:
                    output.write("// -----\n")
                if result is not None:
                    output.write(result)
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        if self.args.time_passes:
            print(timer.report(), file=sys.stderr)
        return 1 if failed else 0


def list_passes(out: TextIO, name: str | None = None) -> None:
    """Each pass's name, summary and options (`name`: that pass, in full)."""
    names = sorted(available_passes()) if name is None else [name]
    for pass_name in names:
        info = describe_pass(pass_name)
        print(f"{info.name}  -  {info.summary}" if name is None else info.name, file=out)
        if name is not None and info.description:
            print("\n" + info.description + "\n", file=out)
        for option in info.options:
            default = f" (default: {option.default})" if option.default is not None else " (required)"
            doc = f": {option.doc}" if option.doc else ""
            print(f"    {option.name}={option.type}{default}{doc}", file=out)


def main(args: Sequence[str] | None = None) -> int:
    with report_errors("tcir-opt"):
        driver = TcirOptMain(args)
        if driver.args.list_passes or driver.args.help_pass:
            list_passes(sys.stdout, driver.args.help_pass)
            return 0
        return driver.run()


if __name__ == "__main__":
    sys.exit(main())
