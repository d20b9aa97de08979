"""Runs the whole lit/FileCheck suite, so that `pytest` alone runs everything."""

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"
LIT = Path(sys.executable).parent / "lit"


def test_filecheck_suite():
    result = subprocess.run(
        [str(LIT), "-q", "-j2", str(SUITE)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_pass_has_a_filecheck_test_on_hand_written_ir():
    """Each tcir pass runs, in some test, on the IR written in the test file
    itself (`tcir-opt %s -p ...` of a `.mlir` file), not only on TC sources
    through a long pipeline."""
    import re

    from tcir.tools.reference_docs import run_lines
    from tcir.transforms import get_all_passes

    def on_own_ir(line: str, name: str) -> bool:
        return re.search(r"tcir-opt %s\b", line) is not None and re.search(rf"[\s'\",]{re.escape(name)}(?![\w-])", line) is not None

    missing = [
        name
        for name in get_all_passes()
        if not any(path.endswith(".mlir") and any(on_own_ir(line, name) for line in lines) for path, lines in run_lines().items())
    ]
    assert not missing, missing
