"""Scalar types, C-like promotion, and the builtin function table."""

from __future__ import annotations

#: Every spelling of a scalar type, mapped to its canonical name.
SCALAR_TYPES: dict[str, str] = {
    **{t: t for t in (
        "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
        "int64", "float16", "bfloat16", "float32", "float64",
    )},
    "float": "float32",
    "double": "float64",
    "int": "int32",
    "half": "float16",
    "byte": "uint8",
}

_BITS = {
    "bool": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32,
    "uint32": 32, "int64": 64, "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64,
}

#: Builtins with their arity (CUDA math names, without the `f` suffix).
BUILTINS: dict[str, int] = {
    **{n: 1 for n in (
        "acos acosh asin asinh atan atanh cbrt ceil cos cosh cospi erf erfc erfinv "
        "erfcinv erfcx exp exp2 exp10 expm1 fabs floor lgamma log log10 log1p log2 "
        "logb normcdf normcdfinv rcbrt round rsqrt sin sinh sinpi sqrt tan tanh "
        "tgamma trunc sigmoid"
    ).split()},
    **{n: 2 for n in (
        "atan2 copysign fdim fdivide fmax fmin fmod hypot nextafter pow remainder"
    ).split()},
    "fma": 3,
    "min": 2,
    "max": 2,
}

#: Builtins whose result keeps integer types (no promotion to float).
INTEGER_PRESERVING = frozenset({"min", "max"})


def is_float(t: str) -> bool:
    """Whether `t` (canonical) is a floating-point type."""
    return t.startswith("float") or t == "bfloat16"


def is_integral(t: str) -> bool:
    """Whether `t` (canonical) is an integer or bool type."""
    return not is_float(t)


def promote(a: str, b: str) -> str:
    """The common type of `a` and `b`, as C's usual arithmetic conversions.

    A float beats any integer; otherwise the wider type wins; at equal width
    the unsigned integer wins; bool loses to everything. `float16` and
    `bfloat16` meet in `float32` (as in PyTorch: neither holds the other).
    """
    if a == b:
        return a
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    if _BITS[a] != _BITS[b]:
        return a if _BITS[a] > _BITS[b] else b
    return a if a.startswith("u") else b


def int_limits(t: str) -> tuple[int, int]:
    """The least and greatest value of integer type `t` (canonical, not bool)."""
    bits = _BITS[t]
    if t.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def is_narrowing(src: str, dst: str) -> bool:
    """Whether assigning `src` to `dst` loses the fractional part (float -> int)."""
    return is_float(src) and not is_float(dst)


def builtin_name(name: str) -> tuple[str, bool] | None:
    """Normalize a builtin name: (`name` without `f` suffix, had_suffix), or None."""
    if name in BUILTINS:
        return name, False
    if name.endswith("f") and name[:-1] in BUILTINS and name[:-1] not in INTEGER_PRESERVING:
        return name[:-1], True
    return None


HALF_TYPES = ("float16", "bfloat16")
"""The 16-bit float types: stored in half precision, computed in float32
(`tc-widen-half-precision`), contracted on the tensor cores."""
