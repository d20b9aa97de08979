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
