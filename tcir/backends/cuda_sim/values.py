"""The arithmetic of simulated kernels, on uniform and per-lane values.

A value of a simulated kernel is *uniform* (the same for every active lane: a
Python `int`/`bool` for `index`/`i1`, a numpy scalar for other types) or
*per lane* (a numpy array aligned with the active lanes). These helpers give
the `arith`/`math` semantics that plain Python or numpy operators do not:
C's truncating division, unsigned views of signless integers, conversions
that wrap, and the math functions by their `math` op or C library name.
Integer division by zero raises `ZeroDivisionError` (undefined in CUDA).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np

Value = Any


def _zero(b: Value) -> bool:
    return bool(np.any(b == 0))


def divsi(a: Value, b: Value) -> Value:
    """Signed division rounding toward zero."""
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    if type(a) is int and type(b) is int:
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) == (np.asarray(b) < 0), q, -q).astype(np.result_type(a, b))[()]


def remsi(a: Value, b: Value) -> Value:
    """The remainder of `divsi`: the sign of the dividend."""
    return a - b * divsi(a, b)


def floordivsi(a: Value, b: Value) -> Value:
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    return a // b


def ceildivsi(a: Value, b: Value) -> Value:
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    return -(-a // b)


def unsigned(x: Value, bits: int) -> Value:
    """`x` read as an unsigned integer of `bits` bits."""
    if bits == 1:
        return x
    if type(x) is int:
        return x & ((1 << bits) - 1)
    return np.asarray(x).astype(np.dtype(f"uint{bits}"))[()] if bits in (8, 16, 32, 64) else x


def divui(a: Value, b: Value, bits: int) -> Value:
    a, b = unsigned(a, bits), unsigned(b, bits)
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    return a // b


def remui(a: Value, b: Value, bits: int) -> Value:
    a, b = unsigned(a, bits), unsigned(b, bits)
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    return a % b


def ceildivui(a: Value, b: Value, bits: int) -> Value:
    a, b = unsigned(a, bits), unsigned(b, bits)
    if _zero(b):
        raise ZeroDivisionError("integer division by zero")
    return (a + b - 1) // b


def minimum(a: Value, b: Value) -> Value:
    if type(a) is int and type(b) is int:
        return a if a < b else b
    return np.minimum(a, b)


def maximum(a: Value, b: Value) -> Value:
    if type(a) is int and type(b) is int:
        return a if a > b else b
    return np.maximum(a, b)


def cast(x: Value, dtype: Any) -> Value:
    """`x` converted to numpy `dtype` (integers wrap, floats truncate toward zero)."""
    if isinstance(x, np.ndarray):
        return x.astype(dtype)
    return np.asarray(x).astype(dtype)[()]


def index(x: Value) -> Value:
    """`x` as an `index` value: a Python int, or int64 per lane."""
    if isinstance(x, np.ndarray):
        return x.astype(np.int64)
    return int(x)


def to_bool(x: Value) -> Value:
    """Truncation of an integer to `i1`: its lowest bit."""
    return (x & 1) != 0


def bitcast(x: Value, dtype: Any) -> Value:
    return np.asarray(x).view(dtype)[()] if not isinstance(x, np.ndarray) else x.view(dtype)


def full(n: int, x: Value, dtype: Any) -> np.ndarray:
    """A new per-lane array of `n` lanes holding `x` (uniform or per lane)."""
    out = np.empty(n, dtype)
    out[...] = x
    return out


def shift_left(a: Value, b: Value) -> Value:
    return a << b


def shift_right_unsigned(a: Value, b: Value, bits: int) -> Value:
    result = unsigned(a, bits) >> b
    return result if type(a) is int else cast(result, np.asarray(a).dtype)


def fma(a: Value, b: Value, c: Value) -> Value:
    return a * b + c


def round_half_away(x: Value) -> Value:
    """C's `round`: halves away from zero (numpy's `round` goes to even)."""
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(np.asarray(x).dtype)[()]


def rsqrt(x: Value) -> Value:
    return np.asarray(x).dtype.type(1) / np.sqrt(x)


def _elementwise(function: Callable[..., float]) -> Callable[..., Value]:
    """A scalar Python function applied lane by lane, in the arguments' dtype."""
    def safe(*args: float) -> float:
        try:
            return function(*args)
        except OverflowError:
            return math.inf
        except ValueError:  # a pole or outside the domain
            return math.nan

    vectorized = np.vectorize(safe, otypes=[np.float64])

    def apply(*args: Value) -> Value:
        dtype = np.result_type(*args)
        return vectorized(*args).astype(dtype)[()]

    return apply


def _logb(x: float) -> float:
    if x == 0:
        return -math.inf
    if not math.isfinite(x):
        return abs(x)
    return float(math.frexp(x)[1] - 1)


def _erfinv(y: float) -> float:
    if not -1 < y < 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    return statistics.NormalDist().inv_cdf((y + 1) / 2) / math.sqrt(2)


def _normcdfinv(p: float) -> float:
    if not 0 < p < 1:
        return -math.inf if p == 0 else math.inf if p == 1 else math.nan
    return statistics.NormalDist().inv_cdf(p)


def _erfcx(x: float) -> float:
    return math.exp(x * x) * math.erfc(x) if x < 26 else 1 / (x * math.sqrt(math.pi))


#: `math` dialect ops (by name, without `math.`) and C library functions
#: (f64 names, as `func.call`s name them without the `f` of f32).
MATH: dict[str, Callable[..., Value]] = {
    "absf": np.abs, "fabs": np.abs, "acos": np.arccos, "acosh": np.arccosh,
    "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan, "atan2": np.arctan2,
    "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "copysign": np.copysign,
    "cos": np.cos, "cosh": np.cosh, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
    "floor": np.floor, "fma": fma, "log": np.log, "log10": np.log10, "log1p": np.log1p,
    "log2": np.log2, "powf": np.power, "pow": np.power, "round": round_half_away,
    "roundeven": np.rint, "rint": np.rint, "rsqrt": rsqrt, "sin": np.sin, "sinh": np.sinh,
    "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc, "fmod": np.fmod,
    "hypot": np.hypot, "nextafter": np.nextafter, "fmax": np.fmax, "fmin": np.fmin,
    "fdim": lambda a, b: np.maximum(a - b, 0).astype(np.result_type(a, b))[()],
    "remainder": lambda a, b: (a - b * np.rint(a / b)).astype(np.result_type(a, b))[()],
    "erf": _elementwise(math.erf), "erfc": _elementwise(math.erfc),
    "lgamma": _elementwise(math.lgamma), "tgamma": _elementwise(math.gamma),
    "logb": _elementwise(_logb), "erfinv": _elementwise(_erfinv),
    "erfcinv": _elementwise(lambda y: _erfinv(1 - y)), "erfcx": _elementwise(_erfcx),
    "normcdfinv": _elementwise(_normcdfinv),
    "normcdf": _elementwise(lambda x: 0.5 * math.erfc(-x / math.sqrt(2))),
}  # fmt: skip
