"""Test-wide setup: a private compilation cache, so tests never touch ~/.cache/tcir."""

import os
import tempfile

os.environ.setdefault("TCIR_CACHE_DIR", tempfile.mkdtemp(prefix="tcir-test-cache-"))
