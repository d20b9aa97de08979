"""The documentation builds with warnings as errors (CI runs only the test
suite, so the build is a test), its generated reference names everything the
registries hold, and the compiler developers' tutorial's pass does what the
tutorial says."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site_dir = tmp_path_factory.mktemp("site")
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site_dir), strict=True))
    return site_dir


def test_the_docs_build_with_warnings_as_errors(site):
    pages = {p.parent.relative_to(site).as_posix() for p in site.rglob("index.html")}
    assert {"reference/passes", "reference/dialects", "reference/mapping-options", "reference/cli", "language"} <= pages


def headings(site: Path, page: str, level: int) -> set[str]:
    html = (site / page / "index.html").read_text()
    return set(re.findall(rf"<h{level}[^>]*><code>([^<]+)</code>", html))


def test_the_reference_names_every_pass_op_and_option(site):
    from xdsl.transforms import get_all_passes as xdsl_passes

    from tcir.compiler.options import MappingOptions
    from tcir.transforms import get_all_passes
    from tcir.universe import get_all_dialects

    assert headings(site, "reference/passes", 3) == set(get_all_passes())
    passes = (site / "reference/passes/index.html").read_text()
    assert all(f"<code>{name}</code>" in passes for name in xdsl_passes())
    ops = {op.name for factory in get_all_dialects().values() for op in factory().operations}
    assert {"tc.def", "poly.band", "nvgpu.mma.sync", "check.index"} <= ops
    assert headings(site, "reference/dialects", 3) == ops
    fields = {f.name for f in dataclasses.fields(MappingOptions) if f.init}
    assert headings(site, "reference/mapping-options", 2) == fields


def test_the_tutorial_pass_reports_bands_and_its_precondition():
    import tcir
    from tcir.diagnostics import handling

    text = (ROOT / "docs/tutorials/compiler-developers.md").read_text()
    code = next(block for block in re.findall(r"```python\n(.*?)```", text, re.S) if "class PolyReportBands" in block)
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102  (the tutorial's own code)
    chunks = re.search(r"```mlir\n(// RUN: tcir-opt %s --split-input-file --verify-diagnostics.*?)```", text, re.S)
    scop, no_scop = chunks.group(1).split("// -----")
    remarks = []
    with handling(remarks.append):
        tcir.PassManager([namespace["PolyReportBands"]()]).run(tcir.parse_ir(scop, "t.mlir"))
    band_line = 1 + next(k for k, line in enumerate(scop.splitlines()) if "poly.band" in line)
    assert [(r.severity, r.message, r.loc.line) for r in remarks] == [("remark", "band of 1 members, 1 parallel", band_line)]
    expected = re.search(r"\{\{(.*)\}\}", no_scop).group(1)
    with pytest.raises(tcir.IRError, match=re.escape(expected)):
        tcir.PassManager([namespace["PolyReportBands"]()]).run(tcir.parse_ir(no_scop))
