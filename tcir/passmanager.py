"""The Python pass-manager API for compiler developers, thin over xDSL's.

    module = tcir.parse_ir(text)
    pm = tcir.PassManager.parse("tc-specialize{sizes=M=128},convert-tc-to-loops")
    pm.run(module)
    print(tcir.print_ir(module))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.transforms import get_all_passes as get_xdsl_passes
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.exceptions import ParseError as IRParseError

from tcir.errors import IRError, SourceLocation, TCError
from tcir.diagnostics import one_line, verify_naming_op
from tcir.transforms import get_all_passes
from tcir.universe import get_all_dialects

IRCallback = Callable[[str, ModuleOp], None]
"""Called after each pass with the pass's name and the module."""


def make_context() -> Context:
    """A context knowing xDSL's dialects and tcir's (loaded lazily)."""
    ctx = Context()
    for name, factory in {**get_xdsl_dialects(), **get_all_dialects()}.items():
        ctx.register_dialect(name, factory)
    return ctx


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes and tcir's, by name."""
    return {**get_xdsl_passes(), **get_all_passes()}


def parse_ir(text: str, name: str = "<string>") -> ModuleOp:
    """Parse and verify textual IR; bad IR raises `tcir.IRError`."""
    try:
        module = Parser(make_context(), text, name).parse_module()
        verify_naming_op(module)
    except IRParseError as e:
        where = e.span.get_location()
        loc = SourceLocation(name, where.line, where.col)
        raise IRError(e.msg, loc, text, len(e.span)) from None
    except DiagnosticException as e:
        raise IRError(one_line(e)) from None
    return module


def print_ir(op: Operation, generic: bool = False) -> str:
    """The textual IR of `op` (custom syntax unless `generic`)."""
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue()


class PassManager:
    """Runs a sequence of passes on a module, verifying after each one (or,
    with `verify_each=False`, once after the last: what a compile that only
    needs the result, a tuning candidate's, pays).

    With `collect_ir=True`, `ir_after` records `(pass name, IR text)` after
    every pass; `callback` is called after every pass.
    """

    def __init__(
        self,
        passes: Sequence[ModulePass] = (),
        *,
        collect_ir: bool = False,
        callback: IRCallback | None = None,
        verify_each: bool = True,
    ):
        self.passes: list[ModulePass] = list(passes)
        self.collect_ir = collect_ir
        self.callback = callback
        self.verify_each = verify_each
        self.ir_after: list[tuple[str, str]] = []

    @classmethod
    def parse(
        cls,
        pipeline: str,
        *,
        collect_ir: bool = False,
        callback: IRCallback | None = None,
        verify_each: bool = True,
    ) -> PassManager:
        """Build from `pass-a,pass-b{opt=1}`; unknown passes or options raise TCError."""
        try:
            passes = PassPipeline.parse_spec(available_passes(), pipeline).passes
        except Exception as e:  # xDSL raises ValueError and friends for bad specs
            raise TCError(f"invalid pass pipeline '{pipeline}': {one_line(e)}") from None
        return cls(passes, collect_ir=collect_ir, callback=callback, verify_each=verify_each)

    def add(self, pass_: ModulePass) -> PassManager:
        self.passes.append(pass_)
        return self

    @property
    def pipeline(self) -> str:
        """The `tcir-opt -p` string of this pass manager."""
        return ",".join(str(p.pipeline_pass_spec()) for p in self.passes)

    def run(self, module: ModuleOp) -> ModuleOp:
        """Apply the passes in order, in place; returns `module`."""
        ctx = make_context()
        self.ir_after.clear()
        for k, p in enumerate(self.passes):
            try:
                p.apply(ctx, module)
                if self.verify_each or k == len(self.passes) - 1:
                    verify_naming_op(module)
            except DiagnosticException as e:
                raise IRError(f"{p.name}: {one_line(e)}") from None
            if self.collect_ir:
                self.ir_after.append((p.name, print_ir(module)))
            if self.callback is not None:
                self.callback(p.name, module)
        return module

    def __str__(self) -> str:
        return self.pipeline
