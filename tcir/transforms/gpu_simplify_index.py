"""`gpu-simplify-index`: fold, normalize and share the integer arithmetic of kernels.

In every `gpu.func`:

- an integer op whose operands are all constants becomes a constant, and an
  integer `arith.select` of a constant condition or of one value twice
  becomes that value (`tcir.ir.integer_forms` says when they fold);
- a sum of `addi`, `subi` and `muli`-by-a-constant becomes its linear form
  over the values that are none of these (exact modulo 2^width), rebuilt as
  `c1 * x1 + x2 - c3 * x3 + c` (terms in the order their values are defined,
  a positive one first; coefficient 1, zero terms and constant 0 left out:
  one sum, one spelling): `(-32 * by + ty) + 8 * (4 * by + 1)` is `ty + 8`,
  `x * 1` and `x + 0` are `x`, `0 * x` is 0. i1 sums are only folded (they
  print as logic ops).
  The constants this makes are made once, at the kernel's start;
- then what does not change in a loop moves before it (xDSL's `licm`: pure
  ops), `cse` computes each value once, and what nothing uses goes.

The index arithmetic that `convert-poly-to-gpu` (isl's AST expressions) and
`gpu-prefetch-copies` (unrolled copy loops) build from constants so prints
as a person writes it, and the CUDA backend and the simulated GPU run the
same simplified IR.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.transforms.loop_invariant_code_motion import move_loop_invariant_code

from tcir.ir.integer_forms import Form, IntegerForms, width_of, wrap


def _absorbs(user: Operation, forms: IntegerForms) -> bool:
    """Whether `user`'s form already stands for its use of a value."""
    return len(user.results) == 1 and user.results[0] in forms.forms


class _Constants:
    """Integer constants of one kernel, each made once at its start."""

    def __init__(self, kernel: gpu.FuncOp):
        self.at = Builder(InsertPoint.at_start(kernel.body.block))
        self.values: dict[tuple[int, Attribute], SSAValue] = {}

    def get(self, value: int, t: Attribute) -> SSAValue:
        width = width_of(t)
        assert width is not None
        key = (wrap(value, width), t)
        if key not in self.values:
            self.values[key] = self.at.insert(arith.ConstantOp(IntegerAttr(key[0], t))).result
        return self.values[key]


def _build(at: Builder, form: Form, forms: IntegerForms, constants: _Constants, t: Attribute) -> SSAValue:
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
    forms, constants = IntegerForms(), _Constants(kernel)
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
