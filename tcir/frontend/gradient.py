"""Reverse-mode differentiation of TC defs: the backward def as TC source.

    def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }

gives the def that TC's `backward=` takes (the forward inputs, then the
gradient `d_O` of each output; it returns the gradient of each
floating-point tensor input, index tensors and scalars get none):

    def tmm_grad(float(M, K) A, float(N, K) B, float(M, N) d_C) -> (float(M, K) d_A, float(N, K) d_B) {
      d_A(m, kk) +=! d_C(m, n) * B(n, kk)
      d_B(n, kk) +=! d_C(m, n) * A(m, kk)
    }

The statements are differentiated in reverse order. Each read of a tensor
in a statement's right-hand side adds, over the statement's iteration space,
the statement's adjoint times the read's partial derivative to that
tensor's adjoint. Where every subscript of the read is an invertible affine
map of the indices (`I(b, c, h + kh, w + kw)`: `h` is solved for), the
contribution is a comprehension over the adjoint's elements, the old index
replaced and guarded by its range (`d_O(i - 1)` where `i - 1 >= 0`); where
it is not (a strided `2 * i + kw`, a gathered `E(I(b), d)`, folded
indices), a scatter-accumulate statement (`d_E(I(b), d) +=! d_O(b, d)`).
Where the old index is shifted by an index the contribution sums over (a
convolution's `h - kh`), the sum reads a copy of that tensor padded with
zeros instead of guarding each term, so that no guard cuts its reduction:

    d_out_pad(i0, i1, i2, i3) = i2 >= KH - 1 && i2 < H && ... ? d_out(i0, i1, i2 - KH + 1, i3 - KW + 1) : 0.0
    d_in(b, c, h, w) +=! d_out_pad(b, f, KH + h - kh - 1, KW + w - kw - 1) * weight(f, c, kh, kw)

- A tensor written by several statements has a value per statement (MLP1's
  `O1` before and after its ReLU). The values the adjoints read are
  recomputed at the top of the backward def, each in a temporary of its own
  (`O1`, then `O1_1`, ...) unless a later statement only updates it in place.
- `max=!` and `min=!` send the gradient to the points that reach the extreme;
  ties split it evenly (as `torch.amax`): `X(n,d) == m(n) ? d_m(n) / m_count(n) : 0`.
  So do `fmax`/`fmin`/`max`/`min` between two values.
- `exp`, `log`, `tanh`, `sqrt`, `rsqrt`, `sigmoid`, divisions, ternaries and
  the other builtins of `_PARTIALS` have their derivatives; comparisons,
  conditions and integer values carry none (a cast to an integer stops it).
- What cannot be differentiated (`*=` reductions, `max=` into an earlier
  value, a statement that overwrites part of an earlier value, a builtin
  without a derivative) is a `TCError` naming the statement and why.

Every index gets a `where` range unless its range is inferred from a plain
subscript of its own; the source is parsed again before it is returned, and
any statement whose ranges would be inferred otherwise keeps all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from xdsl.ir.affine import AffineConstantExpr, AffineSymExpr

from tcir.errors import SourceLocation, TCError

from . import ast as A
from .dtypes import is_float
from .linear import Lin, interval, provably_le
from .rewrite import DefRewriter, Range, Statement, binary, conjunction, const, neg, select
from .subscripts import accesses, expr_to_lin, rebuild, zero_else
from .unparse import expr_text, lin_text, param_text, type_text

GRADIENT_PREFIX = "d_"
"""The gradient of tensor `X` is `d_X` (a suffix is added where that name is taken)."""


@dataclass(eq=False)
class _Value:
    """A tensor's value: an input's, or the one a statement leaves."""

    tensor: str
    param: A.Param
    stmt: int | None
    """The statement that writes it (None: an input)."""
    placeholder: str
    """Its name in expressions until the recomputed values get their names."""
    start: _Value | None = None
    """The value a statement accumulating into the tensor (`+=`) starts from."""
    contributions: list[Statement] = field(default_factory=list)
    """Statements adding to its adjoint, in the order they were derived."""
    given: str | None = None
    """The gradient input of an output's final value."""


def _mul(a: A.Expr, b: A.Expr) -> A.Expr:
    return binary("*", a, b)


def _div(a: A.Expr, b: A.Expr) -> A.Expr:
    return binary("/", a, b)


def _call(name: str, *args: A.Expr) -> A.Expr:
    return A.Call(name=name, args=list(args), type=args[0].type, loc=args[0].loc)


def _split_extreme(x: A.Expr, y: A.Expr, a: A.Expr, larger: bool) -> A.Expr:
    """The part of adjoint `a` of `max(x, y)` (`min` unless `larger`) that
    goes to `x`: all of it where `x` wins, half on a tie."""
    wins = binary(">" if larger else "<", x, y)
    zero = const(0.0, a.type, a.loc)
    return select(wins, a, select(binary("==", x, y), _mul(const(0.5, a.type, a.loc), a), zero))


Partial = Callable[[A.Call, A.Expr], list[A.Expr]]
"""The adjoints of a call's arguments, given the call and its adjoint."""


def _c(value: float, like: A.Expr) -> A.Const:
    return const(value, like.type, like.loc)


_PARTIALS: dict[str, Partial] = {
    "exp": lambda e, a: [_mul(a, e)],
    "exp2": lambda e, a: [_mul(a, _mul(e, _c(math.log(2.0), e)))],
    "expm1": lambda e, a: [_mul(a, binary("+", e, _c(1.0, e)))],
    "log": lambda e, a: [_div(a, e.args[0])],
    "log2": lambda e, a: [_div(a, _mul(e.args[0], _c(math.log(2.0), e)))],
    "log10": lambda e, a: [_div(a, _mul(e.args[0], _c(math.log(10.0), e)))],
    "log1p": lambda e, a: [_div(a, binary("+", _c(1.0, e), e.args[0]))],
    "sqrt": lambda e, a: [_div(_mul(_c(0.5, e), a), e)],
    "rsqrt": lambda e, a: [_div(_mul(_c(-0.5, e), _mul(a, e)), e.args[0])],
    "cbrt": lambda e, a: [_div(_mul(a, e), _mul(_c(3.0, e), e.args[0]))],
    "tanh": lambda e, a: [_mul(a, binary("-", _c(1.0, e), _mul(e, e)))],
    "sigmoid": lambda e, a: [_mul(a, _mul(e, binary("-", _c(1.0, e), e)))],
    "sin": lambda e, a: [_mul(a, _call("cos", e.args[0]))],
    "cos": lambda e, a: [neg(_mul(a, _call("sin", e.args[0])))],
    "atan": lambda e, a: [_div(a, binary("+", _c(1.0, e), _mul(e.args[0], e.args[0])))],
    "erf": lambda e, a: [
        _mul(_mul(a, _c(2.0 / math.sqrt(math.pi), e)), _call("exp", neg(_mul(e.args[0], e.args[0]))))
    ],
    "fabs": lambda e, a: [
        select(binary(">", e.args[0], _c(0.0, e)), a,
                select(binary("<", e.args[0], _c(0.0, e)), neg(a), _c(0.0, e)))
    ],
    "pow": lambda e, a: [
        _mul(a, _mul(e.args[1], _call("pow", e.args[0], binary("-", e.args[1], _c(1.0, e))))),
        _mul(a, _mul(e, _call("log", e.args[0]))),
    ],
    "fma": lambda e, a: [_mul(a, e.args[1]), _mul(a, e.args[0]), a],
    "fdivide": lambda e, a: [_div(a, e.args[1]), neg(_div(_mul(a, e), e.args[1]))],
    **{
        name: (lambda larger: lambda e, a: [
            _split_extreme(e.args[0], e.args[1], a, larger),
            _split_extreme(e.args[1], e.args[0], a, larger),
        ])(name.endswith("max"))
        for name in ("fmax", "fmin", "max", "min")
    },
}
"""How each differentiable builtin passes its adjoint `a` to its arguments
(`e` is the call itself: `exp`'s derivative is `e`)."""


class _Differentiate:
    """The reads of an expression with the partial derivative of the
    expression with respect to each (reads of integers and conditions have
    none); `error` names the statement for what has no derivative."""

    def __init__(self, error: Callable[[str], TCError]):
        self.error = error
        self.reads: list[tuple[A.Access, A.Expr]] = []
        self.branches: list[tuple[A.Expr, bool]] = []
        """The ternaries around the node visited, with the branch taken: a
        read in a branch is made (and differentiated) only where it is taken."""

    def run(self, e: A.Expr, adjoint: A.Expr) -> list[tuple[A.Access, A.Expr]]:
        self.visit(e, adjoint)
        return self.reads

    def visit(self, e: A.Expr, a: A.Expr) -> None:
        if not is_float(e.type):
            return
        match e:
            case A.Access():
                for c, taken in reversed(self.branches):
                    zero = const(0.0, a.type, a.loc)
                    a = select(c, a, zero) if taken else select(c, zero, a)
                self.reads.append((e, a))
            case A.Unary(op="-", x=x):
                self.visit(x, neg(a))
            case A.Binary(op="+", a=x, b=y):
                self.visit(x, a)
                self.visit(y, a)
            case A.Binary(op="-", a=x, b=y):
                self.visit(x, a)
                self.visit(y, neg(a))
            case A.Binary(op="*", a=x, b=y):
                self.visit(x, _mul(a, y))
                self.visit(y, _mul(a, x))
            case A.Binary(op="/", a=x, b=y):
                self.visit(x, _div(a, y))
                self.visit(y, neg(_div(_mul(a, e), y)))
            case A.Binary(op=op):
                raise self.error(f"the float '{op}' has no derivative here")
            case A.Ternary(c=c, a=x, b=y):
                for branch, taken in ((x, True), (y, False)):
                    self.branches.append((c, taken))
                    self.visit(branch, a)
                    self.branches.pop()
            case A.Cast(x=x):
                if is_float(x.type):
                    self.visit(x, a if x.type == e.type else A.Cast(type=x.type, x=a, loc=a.loc))
            case A.Call(name=name, args=args):
                if name not in _PARTIALS:
                    raise self.error(f"'{name}' has no derivative in tcir")
                for arg, partial in zip(args, _PARTIALS[name](e, a)):
                    self.visit(arg, partial)
            case _:  # constants, scalar inputs, sizes
                pass


class _Derivation(DefRewriter):
    """Derives the backward def of one checked def (see the module)."""

    label = "gradient of"

    def __init__(self, definition: A.CheckedDef):
        super().__init__(definition)
        self.values: dict[str, _Value] = {}
        """By placeholder."""
        self.written: list[_Value] = []
        """The value each statement leaves."""
        self.rhs: list[A.Expr] = []
        self.scatter: list[list[A.Expr] | None] = []
        """Per statement, its right-hand side and scatter subscripts reading values by placeholder."""

    # -- errors and helpers ---------------------------------------------------------
    def error(self, stmt: A.Stmt, why: str) -> TCError:
        return TCError(f"cannot differentiate '{self.d.name}': the statement writing "
                       f"'{stmt.lhs}' at {stmt.loc} {why}", stmt.loc)

    def invalid(self) -> str:
        return f"cannot differentiate '{self.d.name}': its derived backward is not valid TC"

    def extents(self, tensor: str) -> list[Lin]:
        """The extents of a tensor of the backward def or of a forward value (by placeholder)."""
        return self.shapes.get(tensor) or self.dims(self.values[tensor].param)

    def stored(self, tensor: str) -> str:
        return self.values[tensor].tensor if tensor in self.values else tensor

    def full(self, stmt: A.Stmt) -> bool:
        """Whether `stmt` writes every element of its tensor."""
        if stmt.scatter is not None:
            return True
        dims = self.dims(self.d.tensor(stmt.lhs))
        return all(
            self.ranges(stmt)[i] == (Lin.const(0), dim) for i, dim in zip(stmt.lhs_indices, dims)
        )

    # -- the forward values ------------------------------------------------------------
    def forward(self) -> None:
        current: dict[str, _Value] = {}
        for param in self.d.inputs:
            if not param.is_scalar:
                current[param.name] = self.values[param.name] = _Value(param.name, param, None, param.name)
                self.shapes[param.name] = self.dims(param)
        for k, stmt in enumerate(self.d.stmts):
            def by_value(e: A.Expr) -> A.Expr | None:
                if isinstance(e, A.Access) and e.tensor in current:
                    return replace(e, tensor=current[e.tensor].placeholder,
                                   subscripts=[rebuild(s, by_value, memo) for s in e.subscripts])
                return None

            memo: dict[int, A.Expr] = {}
            self.rhs.append(rebuild(stmt.rhs, by_value, memo))
            self.scatter.append(None if stmt.scatter is None else [rebuild(s, by_value, memo) for s in stmt.scatter])
            before = current.get(stmt.lhs)
            accumulates = not stmt.initializes and stmt.op != "="
            if before is not None and not self.full(stmt):
                raise self.error(stmt, "writes part of the tensor that an earlier statement wrote")
            if accumulates and stmt.reduction_kind != "+":
                raise self.error(stmt, f"accumulates with '{stmt.op}' into what the tensor holds: only "
                                 f"'+=' and '{stmt.op}!' are differentiated")
            value = _Value(stmt.lhs, self.d.tensor(stmt.lhs), k, f"{stmt.lhs}\0{k}",
                           before if accumulates else None)
            current[stmt.lhs] = self.values[value.placeholder] = value
            self.written.append(value)
        self.final = current

    # -- adjoints ------------------------------------------------------------------------
    def backward(self, gradients: dict[str, str]) -> None:
        for k in reversed(range(len(self.d.stmts))):
            stmt, value = self.d.stmts[k], self.written[k]
            adjoint = self.finish(value, None)
            if adjoint is not None and is_float(value.param.dtype):
                self.statement(k, stmt, value, adjoint)
        for param in self.d.inputs:
            if not param.is_scalar and is_float(param.dtype):
                self.finish(self.values[param.name], gradients[param.name])

    def statement(self, k: int, stmt: A.Stmt, value: _Value, adjoint: str) -> None:
        """The contributions of statement `k` to the adjoints of what it reads."""
        rhs, loc = self.rhs[k], stmt.loc
        scatter = self.scatter[k]
        point = scatter if scatter is not None else [A.IndexVar(name=i, loc=loc) for i in stmt.lhs_indices]
        factor: A.Expr = A.Access(tensor=adjoint, subscripts=point, type=rhs.type, loc=loc)
        if value.start is not None:  # `+=` into what the tensor held
            value.start.contributions.append(self.copy(value.start.param, adjoint, loc))
        kind = None if stmt.effective_op == "=" else stmt.reduction_kind
        if kind in ("max", "min"):
            factor = self.extreme(stmt, value, rhs, factor)
        elif kind not in (None, "+"):
            raise self.error(stmt, f"reduces with '{stmt.op}': only sums, 'max=!' and 'min=!' are differentiated")
        root = A.Access(tensor=value.placeholder, subscripts=point, type=rhs.type, loc=loc)

        def own_value(e: A.Expr) -> A.Expr | None:  # a pointwise statement's value: read it back
            return root if e is rhs and kind is None and scatter is None else None

        reads = _Differentiate(lambda why: self.error(stmt, why)).run(rhs, const(1.0, rhs.type, loc))
        merged: dict[tuple[str, str], tuple[A.Access, A.Expr]] = {}
        for read, partial in reads:
            target = self.values.get(read.tensor)
            if target is None or not is_float(target.param.dtype):
                continue
            partial = rebuild(partial, own_value)
            key = (read.tensor, expr_text(read, self.sizes))
            if key in merged:
                partial = binary("+", merged[key][1], partial)
            merged[key] = (read, partial)
        for read, partial in merged.values():
            self.values[read.tensor].contributions.append(self.contribution(stmt, read, _mul(factor, partial)))

    def extreme(self, stmt: A.Stmt, value: _Value, rhs: A.Expr, factor: A.Expr) -> A.Expr:
        """The adjoint of a `max=!`/`min=!` reduction at each point: the
        statement's, split evenly among the points that reach the extreme."""
        loc = stmt.loc
        lhs = [A.IndexVar(name=i, loc=loc) for i in stmt.lhs_indices]
        reached = binary("==", rhs, A.Access(tensor=value.placeholder, subscripts=lhs, type=rhs.type, loc=loc))
        count = self.names.fresh(f"{stmt.lhs}_count")
        self.shapes[count] = self.dims(value.param)
        one, zero = const(1.0, rhs.type, loc), const(0.0, rhs.type, loc)
        self.out.append(Statement(count, lhs, "+=!", select(reached, one, zero), self.ranges(stmt)))
        share = A.Access(tensor=count, subscripts=lhs, type=rhs.type, loc=loc)
        return select(reached, _div(factor, share), zero)

    def copy(self, param: A.Param, source: str, loc: SourceLocation) -> Statement:
        """`target(i0, ...) = source(i0, ...)` over the whole tensor (the target named later)."""
        indices = [self.names.index(f"i{k}") for k in range(len(param.dims))]
        point = [A.IndexVar(name=i, loc=loc) for i in indices]
        rhs = A.Access(tensor=source, subscripts=point, type=param.dtype, loc=loc)
        ranges = {i: (Lin.const(0), dim) for i, dim in zip(indices, self.dims(param))}
        return Statement("", point, "=", rhs, ranges, copy_of=source)

    def contribution(self, stmt: A.Stmt, read: A.Access, value: A.Expr) -> Statement:
        """`value` added at the element `read` reads, over the statement's
        points: over the adjoint's elements where the subscripts can be
        solved for indices, else scattered (the target named later)."""
        ranges = self.ranges(stmt)
        lins = [expr_to_lin(s, self.sizes) for s in read.subscripts]
        pivots = self.pivots(stmt, lins)
        if pivots is None:  # the guard of a guarded read outside its products: the scatter's too
            return Statement("", list(read.subscripts), "+=", _guard_outside(value), ranges, scatter=True)
        dims = self.dims(self.values[read.tensor].param)
        solved: dict[str, Lin] = {}
        for pivot, lin in zip(pivots, lins):
            assert lin is not None
            coefficient = dict(lin.terms)[(pivot,)]
            rest = lin - Lin.atom(pivot).scale(coefficient)
            solved[pivot] = (Lin.atom(pivot) - rest).scale(coefficient)  # coefficient is 1 or -1
        box = {**ranges, **{p: (Lin.const(0), dim) for p, dim in zip(pivots, dims)}}
        loc = stmt.loc
        guards: list[A.Expr] = []
        guarded: set[str] = set()
        """The pivots whose old index runs out of its range."""
        for pivot, lin in solved.items():
            lo, hi = ranges[pivot]
            least, most = interval(lin, box) or (None, None)
            old = self.integer(lin, loc)
            below = least is None or not provably_le(lo, least, self.derived)
            above = most is None or not provably_le(most, hi - 1, self.derived)
            if below:
                guards.append(binary(">=", old, self.integer(lo, loc)))
            if above:
                guards.append(binary("<", old, self.integer(hi, loc)))
            if below or above:
                guarded.add(pivot)
        value = self.decided(self.substitute(value, solved), box)
        padded = self.padded(value, {p: solved[p] for p in guarded}, ranges, box, set(pivots))
        if padded is not None:
            value, guards = padded, []
        value = self.guarded_reads_padded(value, box, set(ranges) - set(pivots))
        if guards:
            value = select(conjunction(guards), value, const(0.0, value.type, loc))
        order = [*pivots, *(i for i in ranges if i not in pivots)]
        point = [A.IndexVar(name=p, loc=loc) for p in pivots]
        copied = isinstance(value, A.Access) and value.subscripts == point and len(order) == len(pivots)
        return Statement("", point, "+=", value, {i: box[i] for i in order},
                          copy_of=value.tensor if copied and value.tensor not in self.values else None)

    def padded(
        self, value: A.Expr, guarded: dict[str, Lin], ranges: dict[str, Range], box: dict[str, Range], pivots: set[str],
    ) -> A.Expr | None:
        """`value` reading a zero-padded copy (`pad_read`) of the tensor
        whose reads the guards of pivots would bound, instead of guarding
        them (`guarded`: those pivots' old indices, which the guards keep in
        the pivots' `ranges`). A convolution's input gradient then reads
        `d_out_pad(b, f, h - kh + KH - 1, ...)`, a convolution with no guard
        inside its reduction. None unless every guarded old index is
        shifted by a reduction index (`h - kh`) and is a subscript of one
        read, the same wherever it occurs."""
        if not guarded or any(set(lin.names()) <= pivots for lin in guarded.values()):
            return None
        by_lin = {lin: p for p, lin in guarded.items()}
        reads = [r for r in accesses(value) if any(expr_to_lin(s, self.sizes) in by_lin for s in r.subscripts)]
        wanted = {expr_text(r, self.sizes) for r in reads}
        if len(wanted) != 1:
            return None
        read = reads[0]
        found = {by_lin[lin]: k for k, s in enumerate(read.subscripts) if (lin := expr_to_lin(s, self.sizes)) in by_lin}
        if set(found) != set(guarded):
            return None
        replacement = self.pad_read(read, {k: ranges[p] for p, k in found.items()}, box)
        if replacement is None:
            return None
        text = wanted.pop()
        return rebuild(value, lambda node: replacement if isinstance(node, A.Access) and expr_text(node, self.sizes) == text else None)

    def pivots(self, stmt: A.Stmt, lins: list[Lin | None]) -> list[str] | None:
        """The index each subscript can be solved for (see the module), or None."""
        indices = set(stmt.ranges)
        used = [set() if lin is None else set(lin.names()) & indices for lin in lins]
        pivots: list[str] = []
        for lin, names in zip(lins, used):
            if lin is None or not names:
                return None
            single = {a for mono, c in lin.terms if len(mono) == 1 and abs(c) == 1 for a in mono}
            others = [other for other in used if other is not names]
            candidates = [i for i in names if i in single and not any(i in o for o in others)]
            if len(names) > 1:  # an output index shifted by reduction indices (`h + kh`)
                candidates = [i for i in candidates if i in stmt.lhs_indices]
                rest = names - set(candidates[:1])
                if len(candidates) != 1 or any(i in stmt.lhs_indices for i in rest):
                    return None
                if any(len(mono) > 1 and set(mono) & indices for mono, _ in lin.terms):
                    return None
            if not candidates or candidates[0] in pivots:
                return None
            pivots.append(candidates[0])
        return pivots

    def substitute(self, e: A.Expr, solved: dict[str, Lin]) -> A.Expr:
        """`e` with each solved index replaced by its expression, and integer
        subexpressions of indices written in their simplest form."""
        def leaf(node: A.Expr) -> A.Expr | None:
            if node.type == "int32" and not isinstance(node, A.Const | A.SizeRef | A.Access):
                lin = expr_to_lin(node, self.sizes)
                if lin is not None and set(lin.names()) & solved.keys():
                    new = _substituted(lin, solved)
                    return node if new == lin else self.integer(new, node.loc)
            return None

        return rebuild(e, leaf)

    def decided(self, e: A.Expr, box: dict[str, Range]) -> A.Expr:
        """`e` without the conditions that hold (or fail) at every point of
        `box`, the ranges of its indices (`h - kh + 1 >= 0` where `h >= kh`)."""
        true, false = A.Const(value=True, type="bool", loc=e.loc), A.Const(value=False, type="bool", loc=e.loc)

        def truth(node: A.Expr) -> bool | None:
            if not (isinstance(node, A.Binary) and node.op in ("<", "<=", ">", ">=")):
                return None
            a, b = expr_to_lin(node.a, self.sizes), expr_to_lin(node.b, self.sizes)
            bounds = None if a is None or b is None else interval(a - b, box)
            if bounds is None:
                return None
            least, most = bounds
            strict = node.op in ("<", ">")
            if node.op in ("<", "<="):  # a - b < 0, a - b <= 0
                if provably_le(most, Lin.const(-1 if strict else 0), self.derived):
                    return True
                return False if provably_le(Lin.const(0 if strict else 1), least, self.derived) else None
            if provably_le(Lin.const(1 if strict else 0), least, self.derived):
                return True
            return False if provably_le(most, Lin.const(0 if strict else -1), self.derived) else None

        def leaf(node: A.Expr) -> A.Expr | None:
            known = truth(node)
            if known is not None:
                return true if known else false
            if isinstance(node, A.Binary) and node.op in ("&&", "||"):
                a, b = rebuild(node.a, leaf, memo), rebuild(node.b, leaf, memo)
                absorbing = node.op == "||"  # true || x, false && x
                for one, other in ((a, b), (b, a)):
                    if isinstance(one, A.Const):
                        return one if bool(one.value) == absorbing else other
                return replace(node, a=a, b=b)
            if isinstance(node, A.Ternary):
                c = rebuild(node.c, leaf, memo)
                if isinstance(c, A.Const):
                    return rebuild(node.a if c.value else node.b, leaf, memo)
                return replace(node, c=c, a=rebuild(node.a, leaf, memo), b=rebuild(node.b, leaf, memo))
            return None

        memo: dict[int, A.Expr] = {}
        return rebuild(e, leaf, memo)

    def finish(self, value: _Value, output: str | None) -> str | None:
        """Emit the statements that make `value`'s adjoint; returns its name
        (`output` for an input's gradient), None if nothing flows to it."""
        parts = list(value.contributions)
        if value.given is not None:
            parts.insert(0, self.copy(value.param, value.given, value.param.loc))
        if output is None:
            if not parts:
                return None
            if len(parts) == 1 and parts[0].copy_of is not None:
                return parts[0].copy_of  # the adjoint of what it was copied from
        if not parts:  # an input nothing reads
            parts = [self.copy(value.param, "", value.param.loc)]
            parts[0].rhs = const(0.0, value.param.dtype, value.param.loc)
        name = output or self.names.fresh(GRADIENT_PREFIX + value.tensor)
        self.shapes[name] = self.dims(value.param)
        for k, part in enumerate(parts):
            part.lhs = name
            if k == 0 and part.scatter and output is None:  # a temporary's shape: set it first
                zero = self.copy(value.param, "", value.param.loc)
                self.out.append(replace(zero, lhs=name, rhs=const(0.0, value.param.dtype, value.param.loc)))
            elif k == 0:
                part.op = "+=!" if part.reduces else "="
            else:
                part.op = "+="
            self.out.append(part)
        return name


def _guard_outside(e: A.Expr) -> A.Expr:
    """`c ? a * b : 0` for a product `a * (c ? b : 0)` (either factor, at any
    depth of products): a scatter under the guard of a read it multiplies
    writes only where the guard holds (which keeps a padded convolution's
    input gradient in bounds)."""
    if not isinstance(e, A.Binary) or e.op != "*":
        return e
    a, b = _guard_outside(e.a), _guard_outside(e.b)
    for guarded, other, first in ((b, a, False), (a, b, True)):
        if zero_else(guarded):
            product = binary("*", guarded.a, other) if first else binary("*", other, guarded.a)
            return select(guarded.c, product, guarded.b)
    return replace(e, a=a, b=b)


def _substituted(lin: Lin, solved: dict[str, Lin]) -> Lin:
    total = Lin()
    for mono, c in lin.terms:
        term = Lin.const(c)
        for atom in mono:
            term = term * (solved.get(atom, Lin.atom(atom)) if isinstance(atom, str) else Lin.atom(atom))
        total = total + term
    return total


def _placeholders(e: A.Expr) -> Iterator[str]:
    for node in accesses(e):
        yield node.tensor


def _reads(statements: list[Statement]) -> Iterator[str]:
    for stmt in statements:
        for e in (stmt.rhs, *stmt.subscripts):
            yield from _placeholders(e)


class _Backward(_Derivation):
    """The whole backward def: adjoints, the values they read, the text."""

    def run(self) -> str:
        d = self.d
        self.forward()
        gradient_inputs = self.gradient_inputs()
        gradients = {
            p.name: self.names.fresh(GRADIENT_PREFIX + p.name)
            for p in d.inputs
            if not p.is_scalar and is_float(p.dtype)
        }
        for p in d.inputs:
            if p.name in gradients:
                self.shapes[gradients[p.name]] = self.dims(p)
        if not gradients:
            raise TCError(f"cannot differentiate '{d.name}': it has no floating-point tensor input", d.loc)
        self.backward(gradients)
        adjoints = self.out
        recomputed, storage = self.recompute(adjoints)
        statements = [*recomputed, *adjoints]
        for stmt in statements:
            stmt.rhs = self.renamed(stmt.rhs, storage)
            stmt.subscripts = [self.renamed(s, storage) for s in stmt.subscripts]
        outputs = [
            f"{type_text(p.dtype)}({', '.join(lin_text(x) for x in self.dims(p))}) {gradients[p.name]}"
            for p in d.inputs
            if p.name in gradients
        ]
        head = (
            f"def {d.name}_grad({', '.join([*(param_text(p, self.sizes) for p in d.inputs), *gradient_inputs])})"
            f" -> ({', '.join(outputs)}) {{"
        )
        known = {p.name for p in d.inputs} | set(gradients.values()) | {self.final[p.name].given or "" for p in d.outputs}
        for every in (set[int](), set(range(len(statements)))):
            lines, defined = [head], set(known)
            for k, stmt in enumerate(statements):
                lines.append(self.line(stmt, k in every, defined))
                defined.add(stmt.lhs)
            text = "\n".join([*lines, "}", ""])
            if self.verify(text, statements, final=bool(every)):
                return text
        raise AssertionError("unreachable: the second attempt raises")

    def gradient_inputs(self) -> list[str]:
        """`float(M, N) d_C` for each output (a dimension that is no size nor
        number gets a size of its own), the sizes renamed where needed."""
        params = []
        for p in self.d.outputs:
            dims = []
            for k, dim in enumerate(p.dims):
                if isinstance(dim, AffineSymExpr):
                    dims.append(self.sizes[dim.position])
                elif isinstance(dim, AffineConstantExpr):
                    dims.append(str(dim.value))
                else:
                    dims.append(self.names.fresh(f"{p.name}_{k}"))
            name = self.final[p.name].given = self.names.fresh(GRADIENT_PREFIX + p.name)
            self.shapes[name] = [Lin.const(int(x)) if x.isdigit() else Lin.atom(x) for x in dims]
            shape = f"({', '.join(dims)})" if dims else ""
            params.append(f"{type_text(p.dtype)}{shape} {name}")
        return params

    def recompute(self, adjoints: list[Statement]) -> tuple[list[Statement], dict[str, str]]:
        """The statements that compute the values the adjoints read, and the
        name of each (a value that only its next statement reads is updated
        in place, as the forward def does)."""
        consumers: dict[str, set[int | None]] = {}
        work: list[_Value] = []

        def consume(placeholder: str, by: int | None) -> None:
            value = self.values.get(placeholder)
            if value is None or value.stmt is None:
                return
            if placeholder not in consumers:
                consumers[placeholder] = set()
                work.append(value)
            consumers[placeholder].add(by)

        for placeholder in _reads(adjoints):
            consume(placeholder, None)
        while work:
            value = work.pop()
            k = value.stmt
            assert k is not None
            for e in (self.rhs[k], *(self.scatter[k] or ())):
                for placeholder in _placeholders(e):
                    consume(placeholder, k)
            if value.start is not None:
                consume(value.start.placeholder, k)
        storage: dict[str, str] = {}
        named: set[str] = set()
        statements: list[Statement] = []
        for value in sorted((self.values[p] for p in consumers), key=lambda v: v.stmt or 0):
            k = value.stmt
            assert k is not None
            stmt = self.d.stmts[k]
            prior = next((w for w in reversed(self.written[:k]) if w.tensor == value.tensor), None)
            shared = prior is not None and consumers.get(prior.placeholder) == {k}
            if shared:
                assert prior is not None
                name = storage[prior.placeholder]
            else:
                name = value.tensor if value.tensor not in named else self.names.fresh(value.tensor)
                named.add(value.tensor)
            storage[value.placeholder] = name
            self.shapes[name] = self.dims(value.param)
            op = stmt.op
            if not shared and (value.start is not None or stmt.scatter is not None):
                start = value.start.placeholder if value.start is not None else ""
                first = self.copy(value.param, start, stmt.loc)
                if value.start is None:
                    first.rhs = const(0.0 if is_float(value.param.dtype) else 0, value.param.dtype, stmt.loc)
                statements.append(replace(first, lhs=name))
                op = op.rstrip("!")
            elif value.start is None and op != "=" and not stmt.initializes:
                op += "!"  # accumulates into the zeros a fresh output starts as
            scatter = self.scatter[k]
            point = scatter if scatter is not None else [A.IndexVar(name=i, loc=stmt.loc) for i in stmt.lhs_indices]
            statements.append(Statement(name, point, op, self.rhs[k], self.ranges(stmt), scatter=scatter is not None))
        return statements, storage

    @staticmethod
    def renamed(e: A.Expr, storage: dict[str, str]) -> A.Expr:
        def leaf(node: A.Expr) -> A.Expr | None:
            if isinstance(node, A.Access) and node.tensor in storage:
                return replace(node, tensor=storage[node.tensor],
                               subscripts=[rebuild(s, leaf, memo) for s in node.subscripts])
            return None

        memo: dict[int, A.Expr] = {}
        return rebuild(e, leaf, memo)

def gradient_source(definition: A.CheckedDef) -> str:
    """The backward def of `definition` as TC source (see the module); a
    `TCError` names the statement that cannot be differentiated and why."""
    return _Backward(definition).run()
