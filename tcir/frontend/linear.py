"""Integer polynomial forms over names: the arithmetic of subscripts and bounds.

A `Lin` is a sum of integer-weighted monomials of atoms; an atom is a name (an
index, a size or an int scalar parameter) or a `Div` (floor division of a `Lin`
by a positive constant or by a size name). Products of names only appear as
a scalar parameter times an index (`sh * h`), which is semi-affine. `Lin`s are
canonical (equal forms compare equal) and convert to xDSL `AffineExpr`s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)


@dataclass(frozen=True)
class Div:
    """floor(num / den) with den a positive int or a size name (assumed >= 1)."""

    num: Lin
    den: int | str

    def __str__(self) -> str:
        num = str(self.num)
        return f"({num}) floordiv {self.den}" if len(self.num.terms) > 1 else f"{num} floordiv {self.den}"


Atom = str | Div
Mono = tuple[Atom, ...]


def _atom_key(a: Atom) -> tuple[int, str]:
    return (0, a) if isinstance(a, str) else (1, str(a))


@dataclass(frozen=True)
class Lin:
    """A canonical sum of (monomial, coefficient) terms; the empty monomial is the constant."""

    terms: tuple[tuple[Mono, int], ...] = ()

    @staticmethod
    def make(terms: Iterable[tuple[Mono, int]]) -> Lin:
        acc: dict[Mono, int] = {}
        for mono, c in terms:
            mono = tuple(sorted(mono, key=_atom_key))
            acc[mono] = acc.get(mono, 0) + c
        items = [(m, c) for m, c in acc.items() if c != 0]
        items.sort(key=lambda mc: (len(mc[0]) == 0, [_atom_key(a) for a in mc[0]]))
        return Lin(tuple(items))

    @staticmethod
    def const(c: int) -> Lin:
        return Lin.make([((), c)])

    @staticmethod
    def atom(a: Atom) -> Lin:
        return Lin((((a,), 1),))

    @property
    def const_value(self) -> int | None:
        """The value if this is a constant, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def __add__(self, other: Lin | int) -> Lin:
        other = Lin.const(other) if isinstance(other, int) else other
        return Lin.make(self.terms + other.terms)

    def __neg__(self) -> Lin:
        return self.scale(-1)

    def __sub__(self, other: Lin | int) -> Lin:
        other = Lin.const(other) if isinstance(other, int) else other
        return self + (-other)

    def scale(self, k: int) -> Lin:
        return Lin.make((m, c * k) for m, c in self.terms)

    def __mul__(self, other: Lin) -> Lin:
        return Lin.make((m1 + m2, c1 * c2) for m1, c1 in self.terms for m2, c2 in other.terms)

    def floordiv(self, den: int | str) -> Lin:
        """floor(self / den): multiples of an int `den` are pulled out of the division."""
        if isinstance(den, int):
            if den == 1:
                return self
            outside, inside = [], []
            for m, c in self.terms:
                q, r = divmod(c, den)
                if m == ():
                    outside.append((m, q))
                    inside.append((m, r))
                elif r == 0:
                    outside.append((m, q))
                else:
                    inside.append((m, c))
            rest = Lin.make(inside)
            const = rest.const_value
            if const is not None:
                return Lin.make(outside) + const // den
            return Lin.make(outside) + Lin.atom(Div(rest, den))
        if not self.terms:
            return self
        return Lin.atom(Div(self, den))

    def ceildiv(self, den: int | str) -> Lin:
        return -((-self).floordiv(den))

    def value(self, values: Mapping[str, int]) -> int:
        """The value with every name given (floor division rounds down)."""
        total = 0
        for mono, c in self.terms:
            for a in mono:
                if isinstance(a, str):
                    c *= values[a]
                else:
                    c *= a.num.value(values) // (a.den if isinstance(a.den, int) else values[a.den])
            total += c
        return total

    def names(self) -> Iterator[str]:
        """Every name occurring anywhere (including inside divisions)."""
        for m, _ in self.terms:
            for a in m:
                if isinstance(a, str):
                    yield a
                else:
                    yield from a.num.names()
                    if isinstance(a.den, str):
                        yield a.den

    def to_affine(self, dims: Sequence[str], syms: Sequence[str]) -> AffineExpr | None:
        """The AffineExpr with `dims` as d0.. and `syms` as s0..; None if a name is
        unknown or a monomial multiplies two dims (non-affine)."""
        return _to_affine(self, tuple(dims), tuple(syms))

    def __str__(self) -> str:
        names = sorted(set(self.names()))
        expr = self.to_affine((), names)
        assert expr is not None
        return format_affine(expr, (), names)


def _to_affine(lin: Lin, dims: tuple[str, ...], syms: tuple[str, ...]) -> AffineExpr | None:
    def atom(a: Atom) -> tuple[tuple[int, int, str], AffineExpr] | None:
        if isinstance(a, Div):
            num = _to_affine(a.num, dims, syms)
            den = atom(a.den) if isinstance(a.den, str) else ((3, 0, ""), AffineConstantExpr(a.den))
            if num is None or den is None:
                return None
            return (2, 0, str(a)), AffineBinaryOpExpr(AffineBinaryOpKind.FloorDiv, num, den[1])
        if a in syms:
            return (0, syms.index(a), ""), AffineSymExpr(syms.index(a))
        if a in dims:
            return (1, dims.index(a), ""), AffineDimExpr(dims.index(a))
        return None

    terms: list[tuple[list[tuple[int, int, str]], AffineExpr]] = []
    const = 0
    for mono, c in lin.terms:
        if mono == ():
            const = c
            continue
        parts = []
        for a in mono:
            part = atom(a)
            if part is None:
                return None
            parts.append(part)
        if sum(1 for a in mono if a in dims) > 1:
            return None
        parts.sort(key=lambda p: p[0])
        expr = parts[0][1]
        for _, factor in parts[1:]:
            expr = AffineBinaryOpExpr(AffineBinaryOpKind.Mul, expr, factor)
        if c != 1:
            expr = AffineBinaryOpExpr(AffineBinaryOpKind.Mul, expr, AffineConstantExpr(c))
        terms.append(([key for key, _ in parts], expr))
    terms.sort(key=lambda t: t[0])
    exprs = [e for _, e in terms]
    if const != 0 or not exprs:
        exprs.append(AffineConstantExpr(const))
    result = exprs[0]
    for e in exprs[1:]:
        result = AffineBinaryOpExpr(AffineBinaryOpKind.Add, result, e)
    return result


def from_affine(expr: AffineExpr, dims: Sequence[str], syms: Sequence[str]) -> Lin:
    """The `Lin` of an AffineExpr whose d_k / s_k name dims[k] / syms[k]."""
    if isinstance(expr, AffineConstantExpr):
        return Lin.const(expr.value)
    if isinstance(expr, AffineDimExpr):
        return Lin.atom(dims[expr.position])
    if isinstance(expr, AffineSymExpr):
        return Lin.atom(syms[expr.position])
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs = from_affine(expr.lhs, dims, syms)
    rhs = from_affine(expr.rhs, dims, syms)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return lhs + rhs
        case AffineBinaryOpKind.Mul:
            return lhs * rhs
        case AffineBinaryOpKind.FloorDiv | AffineBinaryOpKind.CeilDiv:
            den = rhs.const_value
            if den is None:
                den_name = rhs.terms[0][0][0]
                assert isinstance(den_name, str)
                return lhs.floordiv(den_name) if expr.kind == AffineBinaryOpKind.FloorDiv \
                    else lhs.ceildiv(den_name)
            return lhs.floordiv(den) if expr.kind == AffineBinaryOpKind.FloorDiv else lhs.ceildiv(den)
        case AffineBinaryOpKind.Mod:
            den = rhs.const_value
            assert den is not None
            return lhs - lhs.floordiv(den).scale(den)


def format_affine(expr: AffineExpr, dims: Sequence[str], syms: Sequence[str]) -> str:
    """Print `expr` with names, the way people write it: `M - N + 1`, `H floordiv 2`."""
    terms: list[AffineExpr] = []

    def flatten(e: AffineExpr) -> None:
        if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Add:
            flatten(e.lhs)
            flatten(e.rhs)
        else:
            terms.append(e)

    def factor(e: AffineExpr) -> str:
        text = fmt(e)
        return f"({text})" if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Add else text

    def fmt(e: AffineExpr) -> str:
        if isinstance(e, AffineConstantExpr):
            return str(e.value)
        if isinstance(e, AffineDimExpr):
            return dims[e.position] if e.position < len(dims) else f"d{e.position}"
        if isinstance(e, AffineSymExpr):
            return syms[e.position] if e.position < len(syms) else f"s{e.position}"
        assert isinstance(e, AffineBinaryOpExpr)
        if e.kind == AffineBinaryOpKind.Add:
            return format_affine(e, dims, syms)
        if e.kind == AffineBinaryOpKind.Mul and isinstance(e.rhs, AffineConstantExpr):
            return f"{e.rhs.value} * {factor(e.lhs)}"
        op = {AffineBinaryOpKind.Mul: "*", AffineBinaryOpKind.FloorDiv: "floordiv",
              AffineBinaryOpKind.CeilDiv: "ceildiv", AffineBinaryOpKind.Mod: "mod"}[e.kind]
        return f"{factor(e.lhs)} {op} {factor(e.rhs)}"

    def negated(e: AffineExpr) -> AffineExpr | None:
        if isinstance(e, AffineConstantExpr) and e.value < 0:
            return AffineConstantExpr(-e.value)
        if (isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Mul
                and isinstance(e.rhs, AffineConstantExpr) and e.rhs.value < 0):
            if e.rhs.value == -1:
                return e.lhs
            return AffineBinaryOpExpr(AffineBinaryOpKind.Mul, e.lhs, AffineConstantExpr(-e.rhs.value))
        return None

    flatten(expr)
    out = ""
    for k, t in enumerate(terms):
        neg = negated(t)
        if k == 0:
            out = f"-{factor(neg)}" if neg is not None else fmt(t)
        else:
            out += f" - {factor(neg)}" if neg is not None else f" + {fmt(t)}"
    return out


def interval(
    lin: Lin, ranges: Mapping[str, tuple[Lin, Lin]], indices: Iterable[str] | None = None
) -> tuple[Lin, Lin] | None:
    """The least and greatest value of `lin` where each of `indices` (default:
    the names of `ranges`) takes the values of its range `[lo, hi)` (sizes
    are positive); None where an index is multiplied by another or divided."""
    indices = set(ranges if indices is None else indices)
    low, high = Lin(), Lin()
    for mono, c in lin.terms:
        idx = [a for a in mono if isinstance(a, str) and a in indices]
        if any(isinstance(a, Div) and set(a.num.names()) & indices for a in mono) or len(idx) > 1:
            return None
        if not idx:
            term = Lin(((mono, c),))
            low, high = low + term, high + term
            continue
        lo, hi = ranges[idx[0]]
        k = Lin.make([(tuple(a for a in mono if a != idx[0]), c)])
        least, most = (k * lo, k * (hi - 1)) if c > 0 else (k * (hi - 1), k * lo)
        low, high = low + least, high + most
    return low, high


# -- deciding inequalities between bounds, with isl ------------------------------------

Derived = Mapping[str, tuple[str, list[Lin]]]
"""Sizes defined as the min or max of others: name -> ("min" | "max", candidates)."""
Facts = tuple[tuple[str, str, tuple[Lin, ...]], ...]


def provably_le(a: Lin, b: Lin, derived: Derived | None = None) -> bool:
    """Whether a <= b for every value >= 1 of the names (sizes are positive),
    the names of `derived` being the min or max of their candidates."""
    diff = b - a
    const = diff.const_value
    if const is not None:
        return const >= 0
    return _nonnegative(diff, _facts(diff, derived or {}))


def _facts(e: Lin, derived: Derived) -> Facts:
    """The definitions of the derived sizes `e` depends on (also through others)."""
    needed: set[str] = set()
    stack = [n for n in e.names() if n in derived]
    while stack:
        name = stack.pop()
        if name not in needed:
            needed.add(name)
            stack += [m for c in derived[name][1] for m in c.names() if m in derived]
    return tuple((n, kind, tuple(cands)) for n, (kind, cands) in derived.items() if n in needed)


def _conditions(
    facts: Facts, names: dict[str, str], opaque: dict[Mono, str], free: Iterable[str] = ()
) -> list[str]:
    """isl conditions for `facts` (each derived size is one of its candidates,
    and the least or greatest), then every other name but `free` >= 1."""
    conditions = []
    for name, kind, candidates in facts:
        size = _isl_text(Lin.atom(name), names, opaque)
        texts = [_isl_text(c, names, opaque) for c in candidates]
        conditions += [f"{size} {'<=' if kind == 'min' else '>='} {t}" for t in texts]
        conditions.append("(" + " or ".join(f"{size} = {t}" for t in texts) + ")")
    defined = {name for name, _, _ in facts} | set(free)
    return conditions + [f"{p} >= 1" for n, p in names.items() if n not in defined]


@lru_cache(maxsize=4096)
def _nonnegative(e: Lin, facts: Facts = ()) -> bool:
    import islpy as isl

    names: dict[str, str] = {}
    opaque: dict[Mono, str] = {}
    text = _isl_text(e, names, opaque)
    cond = " and ".join([f"({text}) < 0", *_conditions(facts, names, opaque)])
    params = [*names.values(), *opaque.values()]
    return bool(isl.Set(f"[{', '.join(params)}] -> {{ : {cond} }}").is_empty())


def implied_nonnegative(
    e: Lin,
    conditions: Sequence[Lin],
    ranges: Mapping[str, tuple[Lin, Lin]],
    free: Iterable[str] = (),
    derived: Derived | None = None,
) -> bool:
    """Whether `e >= 0` wherever every one of `conditions` is >= 0, for all
    values of the indices of `ranges` (`lo <= i < hi`), any values of the
    `free` names and all sizes >= 1 (the derived ones as defined)."""
    import islpy as isl

    names: dict[str, str] = {}
    opaque: dict[Mono, str] = {}
    constraints = _within(conditions, ranges, names, opaque)
    constraints.append(f"{_isl_text(e, names, opaque)} < 0")
    used = Lin.make([*e.terms, *(t for c in conditions for t in c.terms),
                     *(t for lo, hi in ranges.values() for t in (*lo.terms, *hi.terms))])
    valid = _conditions(_facts(used, derived or {}), names, opaque, free=[*ranges, *free])
    params = [*names.values(), *opaque.values()]
    return bool(isl.Set(f"[{', '.join(params)}] -> {{ : {' and '.join([*constraints, *valid])} }}").is_empty())


@dataclass(frozen=True)
class OutOfBounds:
    """The sizes for which a subscript leaves its bounds (`out_of_bounds_sizes`)."""

    bad: str
    """isl set text over placeholder parameters."""
    names: dict[str, str]
    """The size name of each placeholder."""
    derived: dict[str, Lin]
    """Placeholders for what isl cannot express (`N * N`, `N floordiv M`): the
    value of each is computed from the sizes when they are bound."""
    always: bool
    """Whether every size >= 1 is bad (never where `derived` is not empty)."""


def out_of_bounds_sizes(
    sub: Lin,
    extent: Lin,
    ranges: dict[str, tuple[Lin, Lin]],
    guards: Sequence[Lin] = (),
    derived: Derived | None = None,
) -> OutOfBounds | None:
    """The sizes for which `sub` leaves `[0, extent)` for some values of the
    indices of `ranges` (`lo <= i < hi`) where every one of `guards` is >= 0
    (the conditions a read is made under); None when `sub` stays within
    bounds for all sizes >= 1 (and any values of the non-affine parts), the
    sizes of `derived` being the min or max of their candidates.
    ValueError when a non-affine part involves an index of `ranges`."""
    import islpy as isl

    names: dict[str, str] = {}
    opaque: dict[Mono, str] = {}
    conditions = _within(guards, ranges, names, opaque)
    text = _isl_text(sub, names, opaque)
    conditions.append(f"({text} < 0 or {text} >= {_isl_text(extent, names, opaque)})")
    used = Lin.make([*sub.terms, *extent.terms, *(t for g in guards for t in g.terms),
                     *(t for lo, hi in ranges.values() for t in (*lo.terms, *hi.terms))])
    valid = _conditions(_facts(used, derived or {}), names, opaque, free=ranges.keys())
    placeholders = {q: Lin(((mono, 1),)) for mono, q in opaque.items()}
    if any(set(d.names()) & ranges.keys() for d in placeholders.values()):
        raise ValueError(f"'{sub}' is not affine in the indices")
    sizes = [names[n] for n in names if n not in ranges]
    bad = isl.Set(f"[{', '.join([*names.values(), *placeholders])}] -> {{ : {' and '.join([*conditions, *valid])} }}")
    for index in ranges:
        bad = bad.project_out(isl.dim_type.param, bad.find_dim_by_name(isl.dim_type.param, names[index]), 1)
    if bad.is_empty():
        return None
    always = not placeholders and (
        isl.Set(f"[{', '.join(sizes)}] -> {{ : {' and '.join(valid) or 'true'} }}")
        .align_params(bad.get_space()).subtract(bad).is_empty()
    )
    return OutOfBounds(str(bad), {names[n]: n for n in names if n not in ranges}, placeholders, always)


def _within(
    conditions: Sequence[Lin], ranges: dict[str, tuple[Lin, Lin]], names: dict[str, str], opaque: dict[Mono, str]
) -> list[str]:
    """isl constraints: every one of `conditions` >= 0, and each index of
    `ranges` within `lo <= i < hi`."""
    constraints = [f"{_isl_text(c, names, opaque)} >= 0" for c in conditions]
    for index, (lo, hi) in ranges.items():
        i = _isl_text(Lin.atom(index), names, opaque)
        constraints.append(f"{_isl_text(lo, names, opaque)} <= {i} < {_isl_text(hi, names, opaque)}")
    return constraints


def _isl_text(e: Lin, names: dict[str, str], opaque: dict[Mono, str]) -> str:
    parts = []
    for mono, c in e.terms:
        if mono == ():
            parts.append(str(c))
        elif len(mono) == 1 and isinstance(mono[0], str):
            parts.append(f"{c}*{names.setdefault(mono[0], f'p{len(names)}')}")
        elif len(mono) == 1 and isinstance(mono[0], Div) and isinstance(mono[0].den, int):
            inner = _isl_text(mono[0].num, names, opaque)
            parts.append(f"{c}*floor(({inner})/{mono[0].den})")
        else:
            parts.append(f"{c}*{opaque.setdefault(mono, f'q{len(opaque)}')}")
    return " + ".join(parts) if parts else "0"
