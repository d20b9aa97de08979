"""lit configuration: FileCheck tests run the installed tcir tools."""

import os
import shutil
import sys

import lit.formats

config.name = "tcir"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".tc"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]

# The tools live next to the Python running lit (the venv's bin directory).
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
for var in ("HOME", "TMPDIR", "CUDA_PATH", "TCIR_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%python", sys.executable))
if shutil.which("nvcc"):
    config.available_features.add("nvcc")
