"""The two pictures: a roofline from `tools/bench.py` results and the tuning
curve of `tcir-tune --plot` (matplotlib is part of the test extra)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tcir.tools.tcir_tune import main as tcir_tune

ROOT = Path(__file__).parents[2]


def _svg_text(path: Path) -> str:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return path.read_text()


def test_bench_draws_a_roofline_from_its_results(tmp_path):
    """Results as `bench.py --json` writes them (H100 figures of tmm and 1LUT)."""
    results = {
        "peaks": [51.8e12, 2.99e12],
        "rows": [
            {"config": "tmm 128x1024x1024", "flops": 2 * 128 * 1024 * 1024, "bytes": 4 * (128 * 1024 * 2 + 1024 * 1024),
             "tcir_device_ms": 0.0318, "eager_device_ms": 0.0273},
            {"config": "1LUT", "flops": 128 * 50 * 64, "bytes": 128 * 50 * 260 + 128 * 64 * 4,
             "tcir_device_ms": 0.1585, "eager_device_ms": 0.0623},
        ],
    }  # fmt: skip
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(results))
    plot = tmp_path / "roofline.svg"
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench.py"), "--from-json", str(source), "--plot", str(plot)],
        check=True, cwd=ROOT,
    )  # fmt: skip
    text = _svg_text(plot)
    for label in ("tmm 128x1024x1024", "1LUT", "PyTorch eager", "51.8 TFLOP/s", "2.99 TB/s"):
        assert label in text, label


def test_tcir_tune_plots_the_best_time_against_candidates(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TCIR_CACHE_DIR", str(tmp_path / "cache"))
    plot = tmp_path / "tuning.svg"
    argv = [str(ROOT / "examples" / "tmm.tc"), "--entry", "tmm", "--sizes", "M=16,K=16,N=16"]
    argv += ["--candidates", "6", "--population", "3", "--workers", "2", "--max-unroll", "4"]
    assert tcir_tune([*argv, "--plot", str(plot)]) == 0
    assert f"plot: {plot}" in capsys.readouterr().out
    text = _svg_text(plot)
    for label in ("candidates measured", "best so far", "default options", "tuning tmm(M=16, K=16, N=16) on cpu"):
        assert label in text, label
