"""Integer values of kernels as linear forms over their leaves, mod 2^width.

A value of a signless integer or index type whose op is `addi`, `subi` or a
`muli` by a constant is a sum of leaves (values that are none of these:
block arguments, loads, divisions...) times coefficients plus a constant;
an op on constants folds to a constant (its value wrapped to the type's
width as the op computes it; a division by zero, an overflowing signed
division or a shift by the width or more does not fold), and an
`arith.select` of a constant condition or of one value twice is that value.
Integers modulo 2^width are a ring, so the forms are exact at any width:
`(-32 * by + ty) + 8 * (4 * by + 1)` is `ty + 8`. By hand: MLIR's affine
maps and xDSL's canonicalization patterns fold neither across SSA values of
`arith` ops nor modulo the width.

`gpu-simplify-index` rebuilds every value from its form; `gpu-prefetch-copies`
and `gpu-vectorize-copies` read loop bounds and trip counts from them.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue

LAUNCH_IDS = gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp
"""Ops that read only a thread's coordinates in its launch (never negative)."""

Form = dict[SSAValue | None, int]
"""A value as leaves times coefficients plus a constant (key None), mod 2^width."""


def width_of(t: Attribute) -> int | None:
    """The bit width of a signless integer or index type; None for other types."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS:
        return t.width.data
    return None


def wrap(value: int, width: int) -> int:
    """`value` as a signed integer of `width` bits."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _signed_div(divide: Callable[[int, int], int]) -> Callable[[int, int, int], int | None]:
    """A signed division that does not fold by zero nor the overflowing MIN / -1."""
    return lambda a, b, w: None if b == 0 or (b == -1 and a == -(1 << (w - 1))) else divide(a, b)


def _unsigned(fold: Callable[[int, int], int | None]) -> Callable[[int, int, int], int | None]:
    """`fold` applied to the operands read as unsigned `w`-bit integers."""
    mask = lambda w: (1 << w) - 1  # noqa: E731
    return lambda a, b, w: fold(a & mask(w), b & mask(w))


def _shift(fold: Callable[[int, int, int], int]) -> Callable[[int, int, int], int | None]:
    """A shift that does not fold by the width or more (poison)."""
    return lambda a, b, w: fold(a, b & ((1 << w) - 1), w) if 0 <= b & ((1 << w) - 1) < w else None


#: Binary integer ops on constants: (lhs, rhs, width) -> result (None: keep the op).
_FOLD: dict[type[Operation], Callable[[int, int, int], int | None]] = {
    arith.AddiOp: lambda a, b, w: a + b,
    arith.SubiOp: lambda a, b, w: a - b,
    arith.MuliOp: lambda a, b, w: a * b,
    arith.DivSIOp: _signed_div(_trunc_div),
    arith.RemSIOp: _signed_div(lambda a, b: a - b * _trunc_div(a, b)),
    arith.FloorDivSIOp: _signed_div(lambda a, b: a // b),
    arith.CeilDivSIOp: _signed_div(lambda a, b: -(-a // b)),
    arith.DivUIOp: _unsigned(lambda a, b: a // b if b else None),
    arith.RemUIOp: _unsigned(lambda a, b: a % b if b else None),
    arith.CeilDivUIOp: _unsigned(lambda a, b: -(-a // b) if b else None),
    arith.MinSIOp: lambda a, b, w: min(a, b),
    arith.MaxSIOp: lambda a, b, w: max(a, b),
    arith.MinUIOp: _unsigned(min),
    arith.MaxUIOp: _unsigned(max),
    arith.AndIOp: lambda a, b, w: a & b,
    arith.OrIOp: lambda a, b, w: a | b,
    arith.XOrIOp: lambda a, b, w: a ^ b,
    arith.ShLIOp: _shift(lambda a, b, w: a << b),
    arith.ShRSIOp: _shift(lambda a, b, w: a >> b),
    arith.ShRUIOp: _shift(lambda a, b, w: (a & ((1 << w) - 1)) >> b),
}
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
#: Casts of constants: sign-extending, zero-extending or truncating.
_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)


class IntegerForms:
    """The form of every integer value of one kernel, from its ops in order."""

    def __init__(self) -> None:
        self.forms: dict[SSAValue, Form] = {}
        self.order: dict[SSAValue, int] = {}
        """Values in the order they are defined (block arguments before their block's ops)."""

    def of(self, value: SSAValue) -> Form:
        """The form of `value`, visiting first the ops it is computed from
        (for a use on demand, not over a whole kernel)."""
        op = value.owner
        if isinstance(op, Operation) and value not in self.order:
            for operand in op.operands:
                self.of(operand)
            self.visit(op)
        return self[value]

    def __getitem__(self, value: SSAValue) -> Form:
        return self.forms[value] if value in self.forms else {value: 1}

    def constant(self, value: SSAValue) -> int | None:
        """The constant `value` always has, if it has one."""
        form = self[value]
        return form.get(None, 0) if set(form) <= {None} else None

    def visit(self, op: Operation) -> None:
        for value in [arg for region in op.regions for block in region.blocks for arg in block.args]:
            self.order[value] = len(self.order)
        for value in op.results:
            self.order[value] = len(self.order)
        if len(op.results) != 1 or (width := width_of(op.results[0].type)) is None:
            return
        form = self.form(op, width)
        if form is not None:
            self.forms[op.results[0]] = {k: c for k, c in form.items() if c} if width > 1 else form

    def form(self, op: Operation, width: int) -> Form | None:
        """The form of `op`'s result, or None if it is a leaf."""
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return {None: wrap(op.value.value.data, width)}
        if isinstance(op, arith.SelectOp):
            condition = self.constant(op.cond)
            if op.lhs == op.rhs or condition is not None:
                return self[op.lhs if op.lhs == op.rhs or condition else op.rhs]
            return None
        values = [self.constant(v) for v in op.operands]
        if None not in values:
            return self.fold(op, values, width)
        if width > 1 and isinstance(op, arith.AddiOp | arith.SubiOp):
            return self.add(op.lhs, op.rhs, 1 if isinstance(op, arith.AddiOp) else -1, width)
        if width > 1 and isinstance(op, arith.MuliOp):
            for factor, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                if (k := self.constant(factor)) is not None:
                    return {key: wrap(c * k, width) for key, c in self[other].items()}
        return None

    def add(self, lhs: SSAValue, rhs: SSAValue, sign: int, width: int) -> Form:
        form = dict(self[lhs])
        for key, c in self[rhs].items():
            form[key] = wrap(form.get(key, 0) + sign * c, width)
        return form

    @staticmethod
    def fold(op: Operation, values: list[int | None], width: int) -> Form | None:
        """The constant result of `op` on constant operands, if it folds."""
        if isinstance(op, arith.CmpiOp) and len(values) == 2:
            predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            a, b = values
            assert a is not None and b is not None
            source = width_of(op.lhs.type)
            if predicate[0] == "u" and source is not None:
                a, b = a & ((1 << source) - 1), b & ((1 << source) - 1)
            return {None: -1 if _COMPARE[predicate.lstrip("su")](a, b) else 0}
        if isinstance(op, _CASTS) and (source := width_of(op.operands[0].type)) is not None:
            (value,) = values
            assert value is not None
            unsigned = isinstance(op, arith.ExtUIOp)
            return {None: wrap(value & ((1 << source) - 1) if unsigned else value, width)}
        fold = _FOLD.get(type(op))
        if fold is None or len(values) != 2:
            return None
        a, b = values
        assert a is not None and b is not None
        result = fold(a, b, width)
        return None if result is None else {None: wrap(result, width)}


def constant_of(value: SSAValue) -> int | None:
    """The constant `value` always has, if it has one."""
    forms = IntegerForms()
    forms.of(value)
    return forms.constant(value)


def trip_count(loop: scf.ForOp) -> int | None:
    """The number of iterations of `loop` when it is the same for every thread."""
    forms = IntegerForms()
    for bound in (loop.lb, loop.ub, loop.step):
        forms.of(bound)
    step = forms.constant(loop.step)
    width = width_of(loop.ub.type)
    if step is None or step <= 0 or width is None:
        return None
    span = forms.add(loop.ub, loop.lb, -1, width)
    if any(c != 0 for key, c in span.items() if key is not None):
        return None
    return max(0, -(-span.get(None, 0) // step))


def max_trip_count(loop: scf.ForOp) -> int | None:
    """The most iterations of `loop`: its trip count where that is the same
    for every thread, else where its upper bound is the least of values (plus
    a constant) one of which is a constant distance from its lower bound (a
    copy loop cut by a ragged edge: `for (c = 4 * k; c < min(124, 4 * k + 3) + 1; ...)`),
    the iterations up to that one; a distance that is a constant less values
    never negative (`for (c = 60; c < 63 - (ty + 4) / 8; ...)`, or one of
    such a min) counts as the constant; None otherwise."""
    exact = trip_count(loop)
    if exact is not None:
        return exact
    forms = IntegerForms()
    forms.of(loop.ub)
    forms.of(loop.lb)
    step, width = forms.of(loop.step).get(None), width_of(loop.ub.type)
    if step is None or step <= 0 or width is None or set(forms[loop.step]) - {None}:
        return None
    bound, offset = loop.ub, 0
    if isinstance(bound.owner, arith.AddiOp):
        for term, other in ((bound.owner.lhs, bound.owner.rhs), (bound.owner.rhs, bound.owner.lhs)):
            if (k := forms.constant(term)) is not None:
                bound, offset = other, k
                break
    if not isinstance(bound.owner, arith.MinSIOp):
        most = _most_below(forms.add(loop.ub, loop.lb, -1, width), step)
        return None if most is None else max(0, most)
    spans = []
    for operand in bound.owner.operands:
        forms.of(operand)
        most = _most_below(forms.add(operand, loop.lb, -1, width), 1)
        if most is not None:
            spans.append(most + offset)
    return max(0, -(-min(spans) // step)) if spans else None


def _most_below(span: Form, step: int) -> int | None:
    """The most iterations of steps of `step` over `span` (upper less lower
    bound) where it is a constant less multiples of values never negative."""
    if not all(key is None or c == 0 or c < 0 and _never_negative(key) for key, c in span.items()):
        return None
    return -(-span.get(None, 0) // step)


def _never_negative(value: SSAValue) -> bool:
    """Whether `value` is a block or thread id, a non-negative constant, or
    a sum, product, quotient or remainder of such values (by a positive
    constant for the last two)."""
    op = value.owner
    if isinstance(op, LAUNCH_IDS):
        return True
    if isinstance(op, arith.ConstantOp):
        return isinstance(op.value, IntegerAttr) and op.value.value.data >= 0
    if isinstance(op, arith.AddiOp | arith.MuliOp | arith.MinSIOp | arith.MaxSIOp):
        return _never_negative(op.lhs) and _never_negative(op.rhs)
    if isinstance(op, arith.DivSIOp | arith.FloorDivSIOp | arith.RemSIOp):
        divisor = constant_of(op.rhs)
        return divisor is not None and divisor > 0 and _never_negative(op.lhs)
    return False
