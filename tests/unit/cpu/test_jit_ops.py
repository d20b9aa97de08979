"""JIT one op at a time, elementwise over arrays, and compare with numpy/math."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from cpu_helpers import elementwise, jit

N = 64
FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
INT_DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
UINT = {np.int8: np.uint8, np.int16: np.uint16, np.int32: np.uint32, np.int64: np.uint64}


def run(body: str, inputs: list[np.ndarray], in_types: list[str], out_type: str,
        out_dtype: type) -> np.ndarray:
    f = jit(elementwise(body, in_types, out_type, len(inputs[0])))["f"]
    out = np.zeros(len(inputs[0]), out_dtype)
    f(*inputs, out)
    return out


# --------------------------------------------------------------- integers

def _wrap(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INTEGER_OPS: dict[str, Callable[[int, int, int], int]] = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "divsi": lambda a, b, w: _tdiv(a, b),
    "remsi": lambda a, b, w: a - b * _tdiv(a, b),
    "divui": lambda a, b, w: _unsigned(a, w) // _unsigned(b, w),
    "remui": lambda a, b, w: _unsigned(a, w) % _unsigned(b, w),
    "floordivsi": lambda a, b, w: a // b,
    "ceildivsi": lambda a, b, w: -(-a // b),
    "ceildivui": lambda a, b, w: -(-_unsigned(a, w) // _unsigned(b, w)),
    "minsi": lambda a, b, w: min(a, b),
    "maxsi": lambda a, b, w: max(a, b),
    "minui": lambda a, b, w: min(_unsigned(a, w), _unsigned(b, w)),
    "maxui": lambda a, b, w: max(_unsigned(a, w), _unsigned(b, w)),
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "shli": lambda a, b, w: a << b,
    "shrsi": lambda a, b, w: a >> b,
    "shrui": lambda a, b, w: _unsigned(a, w) >> b,
}


def _int_inputs(rng: np.random.Generator, dtype: type, shift: bool) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    a = rng.integers(info.min + 1, info.max, N, dtype=dtype, endpoint=True)
    a[:4] = [0, -1, 7, -7]
    if shift:
        b = rng.integers(0, info.bits, N, dtype=dtype)
    else:
        b = rng.integers(-20, 20, N, dtype=dtype)
        b[b == 0] = 3
        b[:4] = [2, 2, -2, 2]
        b[N // 2:] = rng.integers(info.min + 1, info.max, N - N // 2, dtype=dtype, endpoint=True)
        b[b == 0] = 1
    return a, b


@pytest.mark.parametrize("width", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("op", sorted(INTEGER_OPS))
def test_integer_op(rng, op, width):
    dtype = INT_DTYPES[width]
    bits = np.iinfo(dtype).bits
    a, b = _int_inputs(rng, dtype, shift=op.startswith("sh"))
    out = run(f"%r = arith.{op} %a, %b : {width}", [a, b], [width] * 2, width, dtype)
    expected = [_wrap(INTEGER_OPS[op](int(x), int(y), bits), bits) for x, y in zip(a, b)]
    np.testing.assert_array_equal(out, np.array(expected, dtype))


def test_index_arithmetic_is_64_bit(rng):
    a = rng.integers(-(2**40), 2**40, N, dtype=np.int64)
    body = """%ia = arith.index_cast %a : i64 to index
    %ib = arith.index_cast %b : i64 to index
    %p = arith.muli %ia, %ib : index
    %q = arith.floordivsi %p, %ib : index
    %s = arith.subi %p, %q : index
    %r = arith.index_cast %s : index to i64"""
    b = np.full(N, 1000, np.int64)
    out = run(body, [a, b], ["i64", "i64"], "i64", np.int64)
    np.testing.assert_array_equal(out, a * 1000 - a)


@pytest.mark.parametrize(
    "predicate", ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
)
def test_cmpi(rng, predicate):
    a = rng.integers(-4, 4, N, dtype=np.int32)
    b = rng.integers(-4, 4, N, dtype=np.int32)
    out = run(f"%r = arith.cmpi {predicate}, %a, %b : i32", [a, b], ["i32"] * 2, "i1", np.bool_)
    x, y = (a, b) if predicate[0] != "u" else (a.view(np.uint32), b.view(np.uint32))
    reference = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    np.testing.assert_array_equal(out, reference[predicate.lstrip("su") or predicate])


def test_select_and_bool_logic(rng):
    a = rng.integers(-9, 9, N, dtype=np.int32)
    b = rng.integers(-9, 9, N, dtype=np.int32)
    body = """%lt = arith.cmpi slt, %a, %b : i32
    %neg = arith.cmpi slt, %a, %b : i32
    %t = arith.constant true
    %nlt = arith.xori %lt, %t : i1
    %r = arith.select %nlt, %a, %b : i32"""
    out = run(body, [a, b], ["i32"] * 2, "i32", np.int32)
    np.testing.assert_array_equal(out, np.maximum(a, b))


# ----------------------------------------------------------------- floats

FLOAT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addf": np.add,
    "subf": np.subtract,
    "mulf": np.multiply,
    "divf": np.divide,
    "maximumf": np.maximum,  # propagates NaN
    "minimumf": np.minimum,
    "maxnumf": np.fmax,  # ignores NaN
    "minnumf": np.fmin,
}


@pytest.mark.parametrize("ftype", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", sorted(FLOAT_BINARY))
def test_float_binary(rng, op, ftype):
    dtype = FLOAT_DTYPES[ftype]
    a = rng.standard_normal(N).astype(dtype)
    b = rng.standard_normal(N).astype(dtype)
    a[0], b[1], a[2], b[2] = np.nan, np.nan, 0.0, -0.0
    out = run(f"%r = arith.{op} %a, %b : {ftype}", [a, b], [ftype] * 2, ftype, dtype)
    with np.errstate(invalid="ignore"):
        expected = FLOAT_BINARY[op](a, b)
    np.testing.assert_array_equal(out[3:], expected[3:])
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))


def test_negf(rng):
    a = rng.standard_normal(N)
    out = run("%r = arith.negf %a : f64", [a], ["f64"], "f64", np.float64)
    np.testing.assert_array_equal(out, -a)


CMPF_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


@pytest.mark.parametrize("predicate", CMPF_PREDICATES)
def test_cmpf(rng, predicate):
    a = rng.integers(-2, 2, N).astype(np.float32)
    b = rng.integers(-2, 2, N).astype(np.float32)
    a[::7] = np.nan
    b[::5] = np.nan
    out = run(f"%r = arith.cmpf {predicate}, %a, %b : f32", [a, b], ["f32"] * 2, "i1", np.bool_)
    ordered = ~np.isnan(a) & ~np.isnan(b)
    with np.errstate(invalid="ignore"):
        compare = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b,
                   "ne": (a != b) & ordered}
    reference = {"false": np.zeros(N, bool), "true": np.ones(N, bool),
                 "ord": ordered, "uno": ~ordered}
    if predicate not in reference:
        kind, rel = predicate[0], predicate[1:]
        reference[predicate] = compare[rel] & ordered if kind == "o" else compare[rel] | ~ordered
    np.testing.assert_array_equal(out, reference[predicate])


# ------------------------------------------------------------------ casts

CASTS = [
    # (op, source type, target type, inputs, expected)
    ("sitofp", "i32", "f32", np.array([-5, 0, 7, 2**24 + 1], np.int32), None),
    ("sitofp", "i64", "f64", np.array([-(2**62), 3], np.int64), None),
    ("uitofp", "i32", "f32", np.array([-1, 5], np.int32), np.array([2.0**32, 5], np.float32)),
    ("uitofp", "i64", "f64", np.array([-1, 9], np.int64), np.array([2.0**64, 9])),
    ("uitofp", "i8", "f32", np.array([-56, 3], np.int8), np.array([200, 3], np.float32)),
    ("fptosi", "f32", "i32", np.array([-2.7, 2.7, 1e6, -0.5], np.float32), np.array([-2, 2, 10**6, 0], np.int32)),
    ("fptosi", "f64", "i64", np.array([-1e15 - 0.5, 3.99]), np.array([-(10**15), 3], np.int64)),
    ("fptoui", "f64", "i64", np.array([1.5e19, 3.7]), np.array([15 * 10**18, 3], np.uint64).view(np.int64)),
    ("fptoui", "f32", "i8", np.array([255.9, 128.0], np.float32), np.array([255, 128], np.uint8).view(np.int8)),
    ("extf", "f32", "f64", np.array([0.1, -3e38], np.float32), None),
    ("extf", "f16", "f32", np.array([0.1, -6e4], np.float16), None),
    ("truncf", "f64", "f32", np.array([0.1, 1e300, 1e-50]), None),
    ("truncf", "f32", "f16", np.array([0.1, 1e5], np.float32), None),
    ("extsi", "i8", "i32", np.array([-128, 127, -1], np.int8), None),
    ("extui", "i8", "i32", np.array([-128, 127, -1], np.int8), np.array([128, 127, 255], np.int32)),
    ("extui", "i1", "i64", np.array([True, False]), np.array([1, 0], np.int64)),
    ("trunci", "i64", "i16", np.array([65537, -1, 2**40 + 5], np.int64), np.array([1, -1, 5], np.int16)),
    ("bitcast", "f32", "i32", np.array([1.0, -0.0], np.float32), np.array([0x3F800000, -(2**31)], np.int32)),
]


def _np_dtype(typ: str) -> type:
    return {**FLOAT_DTYPES, **INT_DTYPES, "i1": np.bool_}[typ]


@pytest.mark.parametrize("op, source, target, values, expected", CASTS)
def test_cast(op, source, target, values, expected):
    out = run(f"%r = arith.{op} %a : {source} to {target}", [values], [source], target, _np_dtype(target))
    if expected is None:
        with np.errstate(over="ignore"):
            expected = values.astype(_np_dtype(target))
    np.testing.assert_array_equal(out, np.asarray(expected).astype(_np_dtype(target)))


def test_index_casts():
    values = np.array([-(2**40), -3, 2**31 + 7], np.int64)
    body = """%x = arith.index_cast %a : i64 to index
    %r = arith.index_cast %x : index to i32"""
    out = run(body, [values], ["i64"], "i32", np.int32)
    np.testing.assert_array_equal(out, values.astype(np.int32))
    body = """%x = arith.index_cast %a : i8 to index
    %r = arith.index_cast %x : index to i64"""
    out = run(body, [np.array([-5, 100], np.int8)], ["i8"], "i64", np.int64)
    np.testing.assert_array_equal(out, [-5, 100])


# ------------------------------------------------------------------- math

def _vectorize(f: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    return np.vectorize(f, otypes=[np.float64])


SYMMETRIC, POSITIVE, UNIT, ABOVE_ONE = (-3.0, 3.0), (0.05, 5.0), (-0.95, 0.95), (1.05, 5.0)
UNARY_MATH: dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = {
    "absf": (np.abs, SYMMETRIC),
    "ceil": (np.ceil, SYMMETRIC),
    "floor": (np.floor, SYMMETRIC),
    "trunc": (np.trunc, SYMMETRIC),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), SYMMETRIC),
    "roundeven": (np.round, SYMMETRIC),
    "sqrt": (np.sqrt, POSITIVE),
    "rsqrt": (lambda x: 1 / np.sqrt(x), POSITIVE),
    "exp": (np.exp, SYMMETRIC),
    "exp2": (np.exp2, SYMMETRIC),
    "expm1": (np.expm1, SYMMETRIC),
    "log": (np.log, POSITIVE),
    "log2": (np.log2, POSITIVE),
    "log10": (np.log10, POSITIVE),
    "log1p": (np.log1p, (-0.9, 3.0)),
    "sin": (np.sin, SYMMETRIC),
    "cos": (np.cos, SYMMETRIC),
    "tan": (np.tan, (-1.5, 1.5)),
    "asin": (np.arcsin, UNIT),
    "acos": (np.arccos, UNIT),
    "atan": (np.arctan, SYMMETRIC),
    "sinh": (np.sinh, SYMMETRIC),
    "cosh": (np.cosh, SYMMETRIC),
    "tanh": (np.tanh, SYMMETRIC),
    "asinh": (np.arcsinh, SYMMETRIC),
    "acosh": (np.arccosh, ABOVE_ONE),
    "atanh": (np.arctanh, UNIT),
    "erf": (_vectorize(math.erf), SYMMETRIC),
    "cbrt": (np.cbrt, SYMMETRIC),
}

TOLERANCE = {"f16": 2e-3, "f32": 2e-6, "f64": 1e-13}


@pytest.mark.parametrize("ftype", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(UNARY_MATH))
def test_unary_math(rng, op, ftype):
    reference, (low, high) = UNARY_MATH[op]
    dtype = FLOAT_DTYPES[ftype]
    x = rng.uniform(low, high, N).astype(dtype)
    if op in ("round", "roundeven"):
        x[:4] = [0.5, 1.5, -2.5, 2.5]
    out = run(f"%r = math.{op} %a : {ftype}", [x], [ftype], ftype, dtype)
    tol = TOLERANCE[ftype]
    np.testing.assert_allclose(out, reference(x.astype(np.float64)), rtol=tol, atol=tol)


def test_libm_math_in_f16(rng):
    x = rng.uniform(-3, 3, N).astype(np.float16)
    out = run("%r = math.tanh %a : f16", [x], ["f16"], "f16", np.float16)
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)), rtol=2e-3, atol=2e-3)


BINARY_MATH: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], tuple[float, float]]] = {
    "powf": (np.power, POSITIVE),
    "atan2": (np.arctan2, SYMMETRIC),
    "copysign": (np.copysign, SYMMETRIC),
}


@pytest.mark.parametrize("ftype", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(BINARY_MATH))
def test_binary_math(rng, op, ftype):
    reference, (low, high) = BINARY_MATH[op]
    dtype = FLOAT_DTYPES[ftype]
    a = rng.uniform(low, high, N).astype(dtype)
    b = rng.uniform(-3, 3, N).astype(dtype)
    out = run(f"%r = math.{op} %a, %b : {ftype}", [a, b], [ftype] * 2, ftype, dtype)
    tol = TOLERANCE[ftype]
    np.testing.assert_allclose(out, reference(a.astype(np.float64), b), rtol=tol, atol=tol)


def test_fma_and_fpowi(rng):
    a, b, c = (rng.standard_normal(N) for _ in range(3))
    out = run("%r = math.fma %a, %b, %c : f64", [a, b, c], ["f64"] * 3, "f64", np.float64)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-14, atol=1e-14)
    e = rng.integers(-4, 5, N, dtype=np.int32)
    out = run("%r = math.fpowi %a, %b : f64, i32", [a, e], ["f64", "i32"], "f64", np.float64)
    np.testing.assert_allclose(out, a ** e.astype(np.float64), rtol=1e-12)


INTEGER_MATH: dict[str, Callable[[int], int]] = {
    "absi": lambda v: abs(v),
    "ctlz": lambda v: 32 - (v & 0xFFFFFFFF).bit_length(),
    "cttz": lambda v: 32 if v == 0 else ((v & -v).bit_length() - 1),
    "ctpop": lambda v: bin(v & 0xFFFFFFFF).count("1"),
}


@pytest.mark.parametrize("op", sorted(INTEGER_MATH))
def test_integer_math(rng, op):
    a = rng.integers(-(2**31) + 1, 2**31 - 1, N, dtype=np.int32)
    a[:3] = [0, -1, 1 << 20]
    out = run(f"%r = math.{op} %a : i32", [a], ["i32"], "i32", np.int32)
    np.testing.assert_array_equal(out, [INTEGER_MATH[op](int(v)) for v in a])
