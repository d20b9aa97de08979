"""Imports go one way (docs/architecture.md): tools -> api -> tuner ->
compiler -> pass manager -> transforms -> polyhedral -> backends -> runtime
-> frontend -> dialects -> ir -> errors. Read from the sources: every import
statement, at module level or inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "tcir"

ABOVE_THE_API = {"tcir.api", "tcir.torch", "tcir"}
"""The user API and what is built on it (tcir/__init__ loads the API lazily)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The tcir modules `path` imports, relative imports resolved."""
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            for alias in node.names:  # `from pkg import module` names the module only
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in NAMES else base)
    return {name for name in found if name == "tcir" or name.startswith("tcir.")}


NAMES = {module_name(p) for p in PACKAGE.rglob("*.py")}
MODULES = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def importers_of(prefix: str) -> dict[str, set[str]]:
    return {
        module: {i for i in targets if i == prefix or i.startswith(prefix + ".")}
        for module, targets in MODULES.items()
        if any(i == prefix or i.startswith(prefix + ".") for i in targets)
    }


def test_the_tuner_never_imports_the_api():
    offenders = {m: i for m, i in importers_of("tcir.api").items() if m.startswith("tcir.tuner")}
    bare = {m for m, targets in MODULES.items() if m.startswith("tcir.tuner") and "tcir" in targets}
    assert not offenders and not bare, (offenders, bare)


@pytest.mark.parametrize("upper", ["tcir.api", "tcir.tuner"])
def test_nothing_below_the_api_imports_it_or_the_tuner(upper):
    allowed = lambda m: m in ABOVE_THE_API or m.startswith(("tcir.tuner", "tcir.tools"))  # noqa: E731
    offenders = {m: i for m, i in importers_of(upper).items() if not allowed(m)}
    assert not offenders, offenders


def test_only_the_tools_import_the_tools():
    offenders = {m: i for m, i in importers_of("tcir.tools").items() if not m.startswith("tcir.tools")}
    assert not offenders, offenders


def test_no_import_circles():
    modules = set(MODULES)
    edges = {m: {t for t in MODULES[m] if t in modules and t != m} for m in modules}
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] if target in stack else [target]
                raise AssertionError(f"import circle: {' -> '.join([*cycle, target])}")
            if target not in state:
                visit(target, [*stack, target])
        state[node] = 2

    for module in sorted(modules):
        if module not in state and module != "tcir":
            visit(module, [module])


LAYERS = [
    ["tcir.errors"],
    ["tcir.ir"],
    ["tcir.dialects", "tcir.diagnostics"],
    ["tcir.frontend", "tcir.lowering", "tcir.plotting"],
    ["tcir.runtime"],
    ["tcir.backends"],
    ["tcir.polyhedral"],
    ["tcir.transforms"],
    ["tcir.universe"],
    ["tcir.passmanager"],
    ["tcir.compiler"],
    ["tcir.tuner"],
    ["tcir.api"],
    ["tcir.torch", "tcir"],
    ["tcir.tools"],
]
"""Every package of tcir, lowest first: a module imports only its own
package and packages of lower layers."""


def package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def layer(module: str) -> int:
    return next(k for k, names in enumerate(LAYERS) if package(module) in names)


def test_every_package_has_a_layer():
    assert {package(m) for m in MODULES} == {p for names in LAYERS for p in names}


def test_no_import_runs_back_up():
    """Not from the backends to the passes or the compile layer, not from the
    frontend to the runtime: every import stays in its package or goes down."""
    offenders = {
        m: sorted(t for t in targets if package(t) != package(m) and layer(t) >= layer(m))
        for m, targets in MODULES.items()
    }
    assert not {m: t for m, t in offenders.items() if t}
