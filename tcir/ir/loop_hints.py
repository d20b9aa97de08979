"""Hints that loops carry to the code generators, as discardable attributes."""

from __future__ import annotations

UNROLL_HINT = "tcir.unroll"
"""A unit attribute of an `scf.for` whose trip count is small: the target
compiler should unroll it fully (CUDA's `#pragma unroll`, where the trip
count is a constant), a hint that keeps the IR one loop."""
