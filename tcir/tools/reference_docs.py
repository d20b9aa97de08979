"""The generated reference pages of `docs/` (MkDocs builds them through
`docs/hooks.py`): every op of tcir's dialects, every pass, every
`MappingOptions` field and the command-line tools, read from the code so
that they cannot drift from it.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import io
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_type_hints

from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation
from xdsl.utils.hints import type_repr

from tcir.passmanager import describe_pass, field_docs
from tcir.transforms import get_all_passes
from tcir.universe import get_all_dialects

PAGES: dict[str, Callable[[], str]] = {}
"""Path under `docs/` -> the function writing that page."""

TESTS = Path(__file__).parents[2] / "tests" / "filecheck"


def page(path: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(write: Callable[[], str]) -> Callable[[], str]:
        PAGES[path] = write
        return write

    return register


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__dict__.get("__doc__") or "") if obj.__dict__.get("__doc__") else ""


def _cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


# --- dialects --------------------------------------------------------------


def dialects() -> dict[str, Dialect]:
    return {name: factory() for name, factory in get_all_dialects().items()}


def _constraint(constraint: Any) -> str:
    """An IRDL constraint in words: `index`, `i32 | index`, `variadic f32`."""
    kind = type(constraint).__name__
    if kind == "RangeLengthConstraint":
        return _constraint(constraint.constraint.constr)
    if kind == "RangeOf":
        return f"variadic {_constraint(constraint.constr)}"
    if kind == "BaseAttr":
        return getattr(constraint.attr, "name", constraint.attr.__name__)
    if kind == "AnyOf":
        return " \\| ".join(_constraint(c) for c in constraint.attr_constrs)
    if kind == "EqAttrConstraint":
        return str(constraint.attr)
    if kind == "AnyAttr":
        return "any"
    if kind == "SymbolNameConstraint":
        return "symbol name"
    if kind == "ArrayOfConstraint":
        return f"array of {_constraint(constraint.elem_range_constraint.constr)}"
    if kind == "ParamAttrConstraint":
        base = getattr(constraint.base_attr, "name", constraint.base_attr.__name__)
        params = [_constraint(p) for p in constraint.param_constrs]
        return f"{base}<{', '.join(params)}>"
    return _cell(str(constraint))


def verifier_messages(op: type[IRDLOperation]) -> list[str]:
    """The messages of the `VerifyException`s that `op`'s verifiers (its own
    and its tcir bases') raise, their f-string holes shown as `…`."""
    messages: list[str] = []
    for cls in op.__mro__:
        if not cls.__module__.startswith("tcir.") or "verify_" not in cls.__dict__:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__dict__["verify_"])))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Raise)
                and isinstance(node.exc, ast.Call)
                and getattr(node.exc.func, "id", "") == "VerifyException"
                and node.exc.args
            ):
                messages.append(_message(node.exc.args[0], op.name))
    return list(dict.fromkeys(messages))


def _message(node: ast.expr, name: str) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                source = ast.unparse(value.value)  # pyright: ignore[reportAttributeAccessIssue]
                parts.append(name if source == "self.name" else "…")
        return "".join(parts)
    return "…"


def op_section(op: type[IRDLOperation]) -> str:
    definition = op.get_irdl_definition()
    lines = [f"### `{op.name}`", "", _doc(op), ""]
    rows = [
        *(("operand", name, _constraint(d.constr)) for name, d in definition.operands),
        *(("result", name, _constraint(d.constr)) for name, d in definition.results),
        *(
            ("property" + ("" if type(d).__name__ == "PropertyDef" else " (optional)"), name, _constraint(d.constr))
            for name, d in definition.properties.items()
        ),
        *(("attribute", name, _constraint(d.constr)) for name, d in definition.attributes.items()),
        *(("region", name, type(d).__name__.removesuffix("Def")) for name, d in definition.regions),
    ]
    if rows:
        lines += ["| | name | constraint |", "| --- | --- | --- |"]
        lines += [f"| {kind} | `{name}` | {text} |" for kind, name, text in rows]
        lines.append("")
    if definition.assembly_format:
        lines += [f"Syntax: `` {definition.assembly_format} ``", ""]
    traits = sorted({type(t).__name__ for t in definition.traits})
    if traits:
        lines += [f"Traits: {', '.join(traits)}.", ""]
    messages = verifier_messages(op)
    if messages:
        lines += ["Verifier errors:", "", *(f"- `{m}`" for m in messages), ""]
    return "\n".join(lines)


@page("reference/dialects.md")
def dialects_page() -> str:
    lines = [
        "# Dialects",
        "",
        "tcir's own dialects, generated from the op definitions (`tcir/dialects/`): each op's",
        "description and syntax from its docstring, its operands, results, properties and regions",
        "with their constraints, and the errors its verifier reports. The IR also uses xDSL's",
        "`builtin`, `func`, `scf`, `memref`, `arith`, `math`, `vector`, `gpu` and `llvm` dialects.",
        "",
    ]
    for name, dialect in dialects().items():
        module = inspect.getmodule(next(iter(dialect.operations)))
        lines += [f"## `{name}`", "", inspect.cleandoc(module.__doc__ or ""), ""]
        lines += [op_section(op) for op in dialect.operations]  # pyright: ignore[reportArgumentType]
    return "\n".join(lines)


# --- passes ----------------------------------------------------------------


@functools.cache
def run_lines() -> dict[str, list[str]]:
    """The RUN lines of every FileCheck test, by path from the repository root."""
    return {
        str(path.relative_to(TESTS.parents[1])): re.findall(r"RUN:(.*)", path.read_text())
        for path in sorted(TESTS.rglob("*"))
        if path.suffix in (".mlir", ".tc") and "Inputs" not in path.parts
    }


def filecheck_tests(pass_name: str) -> list[str]:
    """The FileCheck tests whose RUN lines run `pass_name`."""
    pattern = re.compile(rf"[\s'\",]{re.escape(pass_name)}(?![\w-])")
    return [path for path, lines in run_lines().items() if any(pattern.search(line) for line in lines)]


def pass_section(name: str) -> str:
    info = describe_pass(name)
    lines = [f"### `{name}`", "", info.summary, ""]
    if info.description:
        lines += [info.description, ""]
    if info.options:
        lines += ["| option | type | default | meaning |", "| --- | --- | --- | --- |"]
        for option in info.options:
            default = "required" if option.default is None else f"`{option.default}`"
            lines.append(f"| `{option.name}` | `{option.type}` | {default} | {_cell(option.doc)} |")
        lines.append("")
    example = re.match(r"`([^`]+)`", info.description)
    spec = example.group(1) if example and example.group(1).startswith(name) else name
    lines += ["Example:", "", "```", f"tcir-opt input.mlir -p '{spec}'", "```", ""]
    tests = filecheck_tests(name)
    if tests:
        lines += ["Tests: " + ", ".join(f"`{t}`" for t in tests), ""]
    return "\n".join(lines)


@page("reference/passes.md")
def passes_page() -> str:
    from xdsl.transforms import get_all_passes as xdsl_passes

    lines = [
        "# Passes",
        "",
        "Every pass `tcir-opt -p` and `tcir.PassManager.parse` know, generated from the code:",
        "a tcir pass's summary is its class docstring, its description its module's docstring,",
        "its options the dataclass fields (kebab-case on the command line) with their types,",
        "defaults and docstrings. `tcir-opt --list-passes` and `tcir-opt --help-pass NAME`",
        "print the same. Passes of other packages arrive through the `xdsl.universe` entry",
        "point ([writing a pass](../tutorials/compiler-developers.md)).",
        "",
        "## tcir's passes",
        "",
    ]
    lines += [pass_section(name) for name in get_all_passes()]
    lines += [
        "## xDSL's passes",
        "",
        "xDSL's own passes run in the same pipelines (`tcir-opt --help-pass NAME` describes one):",
        "",
        ", ".join(f"`{name}`" for name in sorted(xdsl_passes())),
    ]
    return "\n".join(lines) + "\n"


# --- mapping options -------------------------------------------------------


def _sample(value: Any) -> Any:
    """A value other than the default, to see what a field changes."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return "min"
    if isinstance(value, list):
        return [2, 2]
    return {1: 4, 32: 64, 49152: 98304}.get(value, value * 2 or 1)


NEEDS = {"async_copies": {"num_stages": 3}, "warps": {"threads": [4, 8]}, "size_per_thread": {"threads": [16, 16]}}
"""What a field needs set beside it to take effect."""


def driven_passes(name: str) -> str:
    """The passes a field changes: the GPU pipelines of the options with the
    field at its default and at another value, compared pass by pass."""
    from tcir.compiler.options import MappingOptions
    from tcir.passmanager import PassManager

    base = MappingOptions(**NEEDS.get(name, {}))
    changed = dataclasses.replace(base, **{name: _sample(getattr(base, name))})
    sizes = {"M": 128, "N": 128, "K": 128}
    before, after = (
        [_kebab(str(p.pipeline_pass_spec())) for p in PassManager.parse(o.pipeline(sizes, "cuda")).passes]
        for o in (base, changed)
    )
    added = [f"`{p}`" for p in after if p not in before]
    names = {p.split("{")[0] for p in after}
    removed = [f"no `{p.split('{')[0]}`" for p in before if p.split("{")[0] not in names]
    return ", ".join([*added, *removed])


def _kebab(spec: str) -> str:
    """A pass spec with kebab-case option names, as the command line spells them."""
    return re.sub(r"(?<=[{ ])(\w+)=", lambda m: m.group(1).replace("_", "-") + "=", spec)


def tuner_values() -> dict[str, str]:
    """The values the tuner's search space gives each field, for a
    1024x1024x1024 matmul on the GPU."""
    from tcir.frontend import parse
    from tcir.tuner.space import SearchSpace

    definition = parse("def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }")[0]
    space = SearchSpace.build(definition, {"M": 1024, "N": 1024, "K": 1024}, "cuda")
    values: dict[str, list[Any]] = {}
    for gene in space.genes:
        field = re.sub(r"_\d+$", "", gene.name)
        values.setdefault(field, [])
        values[field] += [v for v in gene.values if v not in values[field]]
    return {field: _values(["none" if v is None else str(v) for v in found]) for field, found in values.items()}


def _values(values: list[str]) -> str:
    if len(values) <= 12:
        return ", ".join(values)
    return f"{', '.join(values[:6])}, …, {', '.join(values[-2:])} ({len(values)} values)"


@page("reference/mapping-options.md")
def mapping_options_page() -> str:
    from tcir.compiler.options import MappingOptions

    docs = field_docs(MappingOptions)
    hints = get_type_hints(MappingOptions)
    tuned = tuner_values()
    lines = [
        "# Mapping options",
        "",
        "`tcir.MappingOptions` drives the polyhedral pipeline: `options.pipeline(sizes, backend)` prints",
        "it as a `tcir-opt -p` string. Generated from `tcir/compiler/options.py`: each field's meaning",
        "is its docstring; *tuner values* are what the search space (`tcir/tuner/space.py`) offers for a",
        "1024x1024x1024 matmul on the GPU (list fields: per element; none ends the list; sizes come",
        "from the problem's extents); *drives* is the pass option the field changes, found by comparing",
        "the pipelines with the field at its default and at another value.",
        "",
    ]
    for f in dataclasses.fields(MappingOptions):
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # pyright: ignore
        lines += [
            f"## `{f.name}`",
            "",
            docs.get(f.name, ""),
            "",
            f"- type: `{type_repr(hints[f.name])}`, default: `{default!r}`",
            f"- tuner values: {tuned.get(f.name, 'not searched (a choice of the user)')}",
        ]
        passes = driven_passes(f.name)
        if passes:
            lines.append(f"- drives: {passes}")
        lines.append("")
    return "\n".join(lines)


# --- command-line tools ----------------------------------------------------


@contextlib.contextmanager
def _captured() -> Iterator[io.StringIO]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        yield out


def tool_help(tool: str) -> str:
    """`TOOL --help`, as the tool prints it."""
    import importlib

    main = importlib.import_module(f"tcir.tools.{tool.replace('-', '_')}").main
    with _captured() as out:
        main(["--help"])
    return re.sub(r"^usage: \S+", f"usage: {tool}", out.getvalue())


@page("reference/cli.md")
def cli_page() -> str:
    lines = [
        "# Command-line tools",
        "",
        "Installed as console scripts (`pyproject.toml`); each page below is the tool's `--help`.",
        "",
    ]
    for tool in ("tcir-opt", "tcir-translate", "tcir-run", "tcir-tune", "tcir-cache"):
        lines += [f"## `{tool}`", "", "```", tool_help(tool).rstrip(), "```", ""]
    return "\n".join(lines)
