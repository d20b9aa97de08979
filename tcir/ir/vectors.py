"""The widths of the vector accesses of tcir's kernels."""

from __future__ import annotations

VECTOR_WIDTHS = (1, 2, 4, 8)
"""Elements of a thread's vector load or copy: CUDA's float, float2 and
float4 of 32-bit types; 8 for the 16-bit types (16 bytes: a uint4)."""
