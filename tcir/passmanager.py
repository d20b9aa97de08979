"""The Python pass-manager API for compiler developers, thin over xDSL's.

    module = tcir.parse_ir(text)
    pm = tcir.PassManager.parse('tc-specialize{sizes="M=128"},convert-tc-to-loops')
    pm.run(module)
    print(tcir.print_ir(module))

Passes come from xDSL, from tcir and from every plugin that publishes an
`xdsl.universe` entry point (as `xdsl-opt` and `tcir-opt` find them). Every
mistake in a pipeline, its options or the IR raises a `tcir.TCError`.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from io import StringIO
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect, Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.transforms import get_all_passes as get_xdsl_passes
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.exceptions import ParseError as IRParseError
from xdsl.utils.hints import isa, type_repr

from tcir.diagnostics import OpError, one_line, run_pass, verify
from tcir.errors import IRError, SourceLocation, TCError
from tcir.ir.locations import LocatedParser
from tcir.transforms import get_all_passes
from tcir.universe import get_all_dialects

IRCallback = Callable[[str, ModuleOp], None]
"""Called after each pass with the pass's name and the module."""

PassFactory = Callable[[], type[ModulePass]]


@cache
def plugins() -> tuple[dict[str, Callable[[], Dialect]], dict[str, PassFactory]]:
    """Dialects and passes of the other packages' `xdsl.universe` entry points
    (looked up once: reading the entry points costs ~0.1 s)."""
    from importlib.metadata import entry_points

    from xdsl.universe import Universe

    dialects: dict[str, Callable[[], Dialect]] = {}
    passes: dict[str, PassFactory] = {}
    for point in entry_points(group="xdsl.universe"):
        if point.name in ("xdsl", "tcir"):
            continue
        universe = point.load()
        if isinstance(universe, Universe):
            dialects |= universe.all_dialects
            passes |= universe.all_passes
    return dialects, passes


def make_context() -> Context:
    """A context knowing xDSL's dialects, tcir's and the plugins' (loaded lazily)."""
    ctx = Context()
    for name, factory in {**plugins()[0], **get_xdsl_dialects(), **get_all_dialects()}.items():
        ctx.register_dialect(name, factory)
    return ctx


def available_passes() -> dict[str, PassFactory]:
    """xDSL's passes, tcir's and the plugins', by name."""
    return {**plugins()[1], **get_xdsl_passes(), **get_all_passes()}


@cache
def _tcir_pass(name: str) -> type[ModulePass] | None:
    """tcir's pass `name`, None if tcir has none. Cached: tcir's passes are
    the package's modules, fixed for the process, and listing them globs
    their folder (~20 ms a lowering of 50 passes). The plugins' are not
    cached here: `plugins` may be cleared to read them again."""
    factory = get_all_passes().get(name)
    return None if factory is None else factory()


def find_pass(name: str) -> type[ModulePass]:
    """The pass class registered as `name`; an unknown name raises TCError."""
    tcir_pass = _tcir_pass(name)
    if tcir_pass is not None:
        return tcir_pass
    factory = get_xdsl_passes().get(name) or plugins()[1].get(name)
    if factory is None:
        close = difflib.get_close_matches(name, available_passes(), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise TCError(f"unknown pass '{name}'{hint}")
    return factory()


def parse_ir(text: str, name: str = "<string>") -> ModuleOp:
    """Parse and verify textual IR; bad IR raises `tcir.IRError` at its location."""
    try:
        module = LocatedParser(make_context(), text, name).parse_module()
    except IRParseError as e:
        where = e.span.get_location()
        loc = SourceLocation(name, where.line, where.col)
        raise IRError(e.msg, loc, text, len(e.span)) from None
    except DiagnosticException as e:
        raise IRError(one_line(e)) from None
    verify(module)
    return module


def print_ir(op: Operation, generic: bool = False) -> str:
    """The textual IR of `op` (custom syntax unless `generic`)."""
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue()


def option_type(hint: Any) -> str:
    """An option's type in words: `tuple[int, ...]` -> "a list of integers"."""
    words = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    plural = {int: "integers", float: "numbers", bool: "booleans", str: "strings"}
    args = [a for a in get_args(hint) if a is not NoneType]
    if get_origin(hint) in (Union, UnionType) and len(args) == 1:
        return option_type(args[0])
    if get_origin(hint) is tuple and args:
        return f"a list of {plural.get(args[0], type_repr(args[0]))}"
    return words.get(hint, type_repr(hint))


def _accepts(hint: Any, value: Any) -> bool:
    """Whether an option of type `hint` takes `value` (a bool is no integer here)."""
    origin = get_origin(hint)
    if origin in (Union, UnionType):
        return any(_accepts(arg, value) for arg in get_args(hint))
    if origin is tuple:
        return isinstance(value, tuple) and all(_accepts(get_args(hint)[0], v) for v in value)
    if hint in (int, float) and isinstance(value, bool):
        return False
    if hint is float:
        return isinstance(value, int | float)
    return isa(value, hint)


def _option_value(pass_name: str, option: str, value: tuple[Any, ...], hint: Any) -> Any:
    if not value and get_origin(hint) in (Union, UnionType) and NoneType in get_args(hint):
        return None
    if len(value) == 1 and _accepts(hint, value[0]):
        return value[0]
    if value and _accepts(hint, value):
        return value
    given = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in value)
    raise TCError(
        f"{pass_name}: option '{option}' expects {option_type(hint)} "
        f"({type_repr(hint)}), got '{given}'"
    )


@cache
def _type_hints(cls: type[ModulePass]) -> dict[str, Any]:
    """The type hints of a pass class's fields (evaluated once per class: read only)."""
    return get_type_hints(cls)


def pass_from_spec(spec: ArgSpec) -> ModulePass:
    """The pass `spec` names with its options; an unknown option or a value
    of the wrong type raises a TCError naming the pass, the option and the
    type it expects."""
    cls = find_pass(spec.name)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    hints = _type_hints(cls)
    values: dict[str, Any] = {}
    for option, value in spec.parameters.items():
        field = option.replace("-", "_")
        if field not in fields:
            known = [f.replace("_", "-") for f in fields]
            close = difflib.get_close_matches(option, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"options: {', '.join(known) or 'none'}"
            raise TCError(f"{spec.name}: unknown option '{option}' ({hint})")
        values[field] = _option_value(spec.name, option, value, hints[field])
    for field, f in fields.items():
        if field not in values and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            name = field.replace("_", "-")
            raise TCError(f"{spec.name}: option '{name}' ({option_type(hints[field])}) is required")
    try:
        return cls(**values)
    except TCError as e:
        raise TCError(e.message if e.message.startswith(f"{spec.name}: ") else f"{spec.name}: {e.message}") from None
    except (TypeError, ValueError) as e:
        raise TCError(f"{spec.name}: {one_line(e)}") from None


def _spec_error(pipeline: str, error: ArgSpecParseError) -> TCError:
    """A malformed pipeline as one line: where, which pass, and a hint."""
    lines = str(error).splitlines()
    column = next((len(line) - len(line.lstrip()) + 1 for line in lines[3:4]), 0)
    problem = lines[4].strip() if len(lines) > 4 else one_line(error)
    before = pipeline[: max(column - 1, 0)]
    owner = before[: before.rfind("{")].rsplit(",", 1)[-1].strip() if "{" in before else ""
    where = f"{owner}: " if owner and before.count("{") > before.count("}") else ""
    hint = ""
    if column and pipeline[column - 1 : column] == "=":
        option = before.rsplit("{", 1)[-1].split(" ")[-1].split("=")[0]
        hint = f" (quote a value that holds '=': {option}=\"...\")"
    message = problem[0].lower() + problem[1:] if problem else "malformed pipeline"
    return TCError(f"{where}{message} at column {column} of pipeline '{pipeline}'{hint}")


class PassManager:
    """Runs a sequence of passes on a module, verifying after each one (or,
    with `verify_each=False`, once after the last: what a compile that only
    needs the result, a tuning candidate's, pays).

    With `collect_ir=True`, `ir_after` records `(pass name, IR text)` after
    every pass; `callback` is called after every pass; `timings` holds each
    run's `(pass name, seconds)` and `("verifier", seconds)` entries.
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
        self.timings: list[tuple[str, float]] = []

    @classmethod
    def parse(
        cls,
        pipeline: str,
        *,
        collect_ir: bool = False,
        callback: IRCallback | None = None,
        verify_each: bool = True,
    ) -> PassManager:
        """Build from `pass-a,pass-b{opt=1}`; an unknown pass or option, a
        value of the wrong type or a malformed pipeline raises TCError."""
        try:
            specs = list(parse_pipeline(pipeline))
        except ArgSpecParseError as e:  # a BaseException in xDSL
            raise _spec_error(pipeline, e) from None
        passes = [pass_from_spec(spec) for spec in specs]
        return cls(passes, collect_ir=collect_ir, callback=callback, verify_each=verify_each)

    def add(self, pass_: ModulePass) -> PassManager:
        self.passes.append(pass_)
        return self

    @property
    def pipeline(self) -> str:
        """The `tcir-opt -p` string of this pass manager."""
        return ",".join(str(p.pipeline_pass_spec()) for p in self.passes)

    def run(self, module: ModuleOp) -> ModuleOp:
        """Apply the passes in order, in place; returns `module`. A pass that
        fails, or leaves IR that does not verify, raises an `IRError` (an
        `OpError` at the op concerned) whose message starts with its name."""
        ctx = make_context()
        self.ir_after.clear()
        self.timings.clear()
        for k, p in enumerate(self.passes):
            start = time.perf_counter()
            run_pass(p.name, lambda: p.apply(ctx, module), module)
            self.timings.append((p.name, time.perf_counter() - start))
            if self.verify_each or k == len(self.passes) - 1:
                start = time.perf_counter()
                try:
                    verify(module)
                except OpError as e:
                    raise OpError(e.op, f"{p.name}: {e.message}") from None
                finally:
                    self.timings.append(("verifier", time.perf_counter() - start))
            if self.collect_ir:
                self.ir_after.append((p.name, print_ir(module)))
            if self.callback is not None:
                self.callback(p.name, module)
        return module

    def __str__(self) -> str:
        return self.pipeline



@dataclass(frozen=True)
class OptionInfo:
    """One option of a pass: kebab-case name, type, default (None: required)
    and the field's docstring."""

    name: str
    type: str
    default: str | None
    doc: str


@dataclass(frozen=True)
class PassInfo:
    """What the code says about a pass: its summary (the class docstring's
    first line), its description (a tcir pass's module docstring, else the
    rest of the class docstring) and its options."""

    name: str
    summary: str
    description: str
    options: tuple[OptionInfo, ...]


def describe_pass(name: str) -> PassInfo:
    """The documentation of pass `name`, read from its code."""
    cls = find_pass(name)
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(f"{cls.__name__}("):  # dataclass's stand-in for a missing docstring
        doc = ""
    doc = inspect.cleandoc(doc)
    summary, _, rest = doc.partition("\n\n")
    description = rest.strip()
    if cls.__module__.startswith("tcir.transforms."):
        description = inspect.cleandoc(sys.modules[cls.__module__].__doc__ or "")
    return PassInfo(name, " ".join(summary.split()), description, _options(cls))


def _options(cls: type[ModulePass]) -> tuple[OptionInfo, ...]:
    hints = get_type_hints(cls)
    docs = field_docs(cls)
    options = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "name":
            continue
        if f.default is not dataclasses.MISSING:
            default: str | None = _spec_value(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _spec_value(f.default_factory())
        else:
            default = None
        options.append(OptionInfo(f.name.replace("_", "-"), type_repr(hints[f.name]), default, docs.get(f.name, "")))
    return tuple(options)


def _spec_value(value: Any) -> str:
    """A default as a pipeline would spell it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(map(_spec_value, value)) or "(empty)"
    if isinstance(value, str):
        return f'"{value}"'
    return "none" if value is None else str(value)


def field_docs(cls: type) -> dict[str, str]:
    """The docstrings under a dataclass's fields (xDSL's style), from the
    source of `cls` and of the classes it derives from."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if not base.__dict__.get("__annotations__"):
            continue
        body = next(
            (n.body for n in ast.walk(_module_tree(base.__module__)) if isinstance(n, ast.ClassDef) and n.name == base.__name__),
            [],
        )
        for field, doc in zip(body, body[1:]):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                docs[field.target.id] = " ".join(inspect.cleandoc(doc.value.value).split())
    return docs


@cache
def _module_tree(module: str) -> ast.Module:
    try:
        return ast.parse(inspect.getsource(sys.modules[module]))
    except (OSError, TypeError, SyntaxError, KeyError):
        return ast.Module(body=[], type_ignores=[])
