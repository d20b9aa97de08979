"""The IR's 16-bit float element types, which tcir computes through f32."""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Attribute

HalfFloatType = Float16Type | BFloat16Type
"""f16 and bf16: stored as 16 bits, computed and accumulated in f32."""


def is_half(t: Attribute) -> bool:
    """Whether `t` is f16 or bf16."""
    return isinstance(t, HalfFloatType)
