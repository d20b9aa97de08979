"""`gpu-simplify-index`: fold, normalize and share the integer arithmetic of kernels.

In every `gpu.func`:

- an integer op whose operands are all constants becomes a constant (its
  value wrapped to the type's width, as the op computes it; a division by
  zero, an overflowing signed division or a shift by the width or more
  stays), and an integer `arith.select` of a constant condition or of one
  value twice becomes that value;
- a sum of `addi`, `subi` and `muli`-by-a-constant becomes a linear form
  over the values that are none of these, rebuilt as `c1 * x1 + x2 - c3 * x3 + c`
  (terms in the order their values are defined, a positive one first;
  coefficient 1, zero terms and constant 0 left out: one sum, one spelling).
  Integers modulo 2^width are a ring, so this is exact at any width:
  `(-32 * by + ty) + 8 * (4 * by + 1)` is `ty + 8`, `x * 1` and `x + 0` are
  `x`, `0 * x` is 0. i1 sums are only folded (they print as logic ops).
  The constants this makes are made once, at the kernel's start;
- then what does not change in a loop moves before it (xDSL's `licm`: pure
  ops), `cse` computes each value once, and what nothing uses goes.

The index arithmetic that `convert-poly-to-gpu` (isl's AST expressions) and
`gpu-prefetch-copies` (unrolled copy loops) build from constants so prints
as a person writes it, and the CUDA backend and the simulated GPU run the
same simplified IR.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp, Signedness
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.transforms.loop_invariant_code_motion import move_loop_invariant_code

Form = dict[SSAValue | None, int]
"""A value as leaves times coefficients plus a constant (key None), mod 2^width."""


def _width(t: Attribute) -> int | None:
    """The bit width of a signless integer or index type; None for other types."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS:
        return t.width.data
    return None


def _wrap(value: int, width: int) -> int:
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


class _Forms:
    """The form of every integer value of one kernel, from its ops in order."""

    def __init__(self) -> None:
        self.forms: dict[SSAValue, Form] = {}
        self.order: dict[SSAValue, int] = {}
        """Values in the order they are defined (block arguments before their block's ops)."""

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
        if len(op.results) != 1 or (width := _width(op.results[0].type)) is None:
            return
        form = self.form(op, width)
        if form is not None:
            self.forms[op.results[0]] = {k: c for k, c in form.items() if c} if width > 1 else form

    def form(self, op: Operation, width: int) -> Form | None:
        """The form of `op`'s result, or None if it is a leaf."""
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return {None: _wrap(op.value.value.data, width)}
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
                    return {key: _wrap(c * k, width) for key, c in self[other].items()}
        return None

    def add(self, lhs: SSAValue, rhs: SSAValue, sign: int, width: int) -> Form:
        form = dict(self[lhs])
        for key, c in self[rhs].items():
            form[key] = _wrap(form.get(key, 0) + sign * c, width)
        return form

    @staticmethod
    def fold(op: Operation, values: list[int | None], width: int) -> Form | None:
        """The constant result of `op` on constant operands, if it folds."""
        if isinstance(op, arith.CmpiOp) and len(values) == 2:
            predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            a, b = values
            assert a is not None and b is not None
            source = _width(op.lhs.type)
            if predicate[0] == "u" and source is not None:
                a, b = a & ((1 << source) - 1), b & ((1 << source) - 1)
            return {None: -1 if _COMPARE[predicate.lstrip("su")](a, b) else 0}
        if isinstance(op, _CASTS) and (source := _width(op.operands[0].type)) is not None:
            (value,) = values
            assert value is not None
            unsigned = isinstance(op, arith.ExtUIOp)
            return {None: _wrap(value & ((1 << source) - 1) if unsigned else value, width)}
        fold = _FOLD.get(type(op))
        if fold is None or len(values) != 2:
            return None
        a, b = values
        assert a is not None and b is not None
        result = fold(a, b, width)
        return None if result is None else {None: _wrap(result, width)}


def _absorbs(user: Operation, forms: _Forms) -> bool:
    """Whether `user`'s form already stands for its use of a value."""
    return len(user.results) == 1 and user.results[0] in forms.forms


class _Constants:
    """Integer constants of one kernel, each made once at its start."""

    def __init__(self, kernel: gpu.FuncOp):
        self.at = Builder(InsertPoint.at_start(kernel.body.block))
        self.values: dict[tuple[int, Attribute], SSAValue] = {}

    def get(self, value: int, t: Attribute) -> SSAValue:
        width = _width(t)
        assert width is not None
        key = (_wrap(value, width), t)
        if key not in self.values:
            self.values[key] = self.at.insert(arith.ConstantOp(IntegerAttr(key[0], t))).result
        return self.values[key]


def _build(at: Builder, form: Form, forms: _Forms, constants: _Constants, t: Attribute) -> SSAValue:
    """`form` as ops of type `t` at `at` (see the module for the shape)."""

    def constant(c: int) -> SSAValue:
        return constants.get(c, t)

    def term(leaf: SSAValue, c: int) -> SSAValue:
        return leaf if c == 1 else at.insert(arith.MuliOp(constant(c), leaf)).result

    terms = sorted(((leaf, c) for leaf, c in form.items() if leaf is not None), key=lambda t: forms.order[t[0]])
    offset = form.get(None, 0)
    if not terms:
        return constant(offset)
    first = next((k for k, (_, c) in enumerate(terms) if c > 0), None)
    if first is None:  # 2 - x, not -1 * x + 2
        total, offset = constant(offset), 0
    else:
        leaf, c = terms.pop(first)
        total = term(leaf, c)
    for leaf, c in terms:
        if c > 0:
            total = at.insert(arith.AddiOp(total, term(leaf, c))).result
        else:
            total = at.insert(arith.SubiOp(total, term(leaf, -c))).result
    if offset > 0:
        total = at.insert(arith.AddiOp(total, constant(offset))).result
    elif offset < 0:
        total = at.insert(arith.SubiOp(total, constant(-offset))).result
    return total


def simplify(kernel: gpu.FuncOp) -> None:
    """Fold, normalize and share the integer arithmetic of `kernel` (see the module)."""
    forms, constants = _Forms(), _Constants(kernel)
    for op in kernel.walk():
        forms.visit(op)
    for value, form in forms.forms.items():
        op = value.owner
        if form == {value: 1} or not isinstance(op, Operation) or all(
            _absorbs(use.operation, forms) for use in value.uses
        ):
            continue
        at = Builder(InsertPoint.before(op))
        value.replace_all_uses_with(_build(at, form, forms, constants, value.type))
    _erase_dead(kernel.walk())
    for loop in reversed([o for o in kernel.walk() if isinstance(o, scf.ForOp)]):
        move_loop_invariant_code(loop)
    cse(kernel)


def _erase_dead(ops: Iterable[Operation]) -> None:
    """Erase the ops of `ops` without regions that nothing uses and that have
    no effect, then the ops that only they used."""
    work = list(ops)
    while work:
        op = work.pop()
        if op.parent is not None and not op.regions and is_trivially_dead(op):
            work.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class GpuSimplifyIndexPass(ModulePass):
    """Fold, normalize and share the integer arithmetic of kernels."""

    name = "gpu-simplify-index"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [o for o in op.walk() if isinstance(o, gpu.FuncOp)]:
            simplify(kernel)
