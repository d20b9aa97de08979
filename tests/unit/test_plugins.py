"""A pass that another package publishes through xDSL's `xdsl.universe`
entry point is found by `tcir.PassManager.parse`, as by `tcir-opt`."""

from __future__ import annotations

import textwrap

import pytest

import tcir
from tcir.passmanager import describe_pass, plugins

PLUGIN = textwrap.dedent(
    '''
    from dataclasses import dataclass

    from xdsl.dialects.builtin import IntAttr
    from xdsl.passes import ModulePass
    from xdsl.universe import Universe


    @dataclass(frozen=True)
    class CountOps(ModulePass):
        """Record the module's number of ops in its `ops` attribute."""

        name = "count-ops"

        offset: int = 0
        """Added to the count."""

        def apply(self, ctx, op):
            op.attributes["ops"] = IntAttr(len(list(op.walk())) + self.offset)


    UNIVERSE = Universe(all_passes={"count-ops": lambda: CountOps})
    '''
)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed package `tcir_test_plugin` with the entry point
    `[xdsl.universe] tcir_test_plugin = tcir_test_plugin:UNIVERSE`."""
    (tmp_path / "tcir_test_plugin.py").write_text(PLUGIN)
    info = tmp_path / "tcir_test_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tcir-test-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[xdsl.universe]\ntcir_test_plugin = tcir_test_plugin:UNIVERSE\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.cache_clear()
    yield
    plugins.cache_clear()


def test_the_pass_manager_finds_plugin_passes(plugin):
    module = tcir.PassManager.parse("count-ops{offset=10},cse").run(tcir.parse_ir("func.func @f() {\n func.return\n}"))
    assert module.attributes["ops"].data == 13  # module, func, return
    info = describe_pass("count-ops")
    assert info.summary == "Record the module's number of ops in its `ops` attribute."
    assert [(o.name, o.type, o.default, o.doc) for o in info.options] == [("offset", "int", "0", "Added to the count.")]


def test_without_the_plugin_the_pass_is_unknown():
    plugins.cache_clear()
    with pytest.raises(tcir.TCError, match="unknown pass 'count-ops'"):
        tcir.PassManager.parse("count-ops")
