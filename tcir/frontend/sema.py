"""Semantic checks and typing: parse tree -> typed statements + facts for range inference."""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.ir.affine import AffineSymExpr

from tcir.errors import RangeError, SourceLocation, TypeError_, did_you_mean

from . import ast as A
from . import syntax as S
from .loops import check_loops
from .dtypes import INTEGER_PRESERVING, SCALAR_TYPES, BUILTINS, builtin_name, is_float, \
    is_integral, is_narrowing, promote
from .linear import Lin
from .source import Source
from .subscripts import expr_to_lin, guarded_walk, innermost_contiguous, measure, walk, zero_else

NUMPY_FLOATS = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}

#: Limits on an expression after inlining lets (deeper/larger input is a TypeError).
MAX_INLINED_DEPTH = 250
MAX_INLINED_SIZE = 20000

_ARITH = ("+", "-", "*", "/", "%")
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")


@dataclass
class Symbol:
    """A def-level name: kind is 'size', 'input', 'scalar', 'output' or 'temp'."""

    kind: str
    pos: int
    dtype: str = "int32"
    dims: list[Lin] | None = None  # known shape (inputs, typed outputs)
    rank: int | None = None


@dataclass(frozen=True)
class AccessFact:
    """A tensor access for range inference: one `Lin` per subscript (None: not
    affine), and the ternaries it sits in, with the branch (`guards`)."""

    tensor: str
    subscripts: list[Lin | None]
    loc: SourceLocation
    length: int
    guards: tuple[tuple[A.Ternary, bool], ...] = ()


@dataclass
class StmtFacts:
    """A checked statement (without ranges) and what range inference needs."""

    syntax: S.Statement
    loc: SourceLocation
    lhs: str
    lhs_indices: list[str]
    reduction_indices: list[str]
    rhs: A.Expr
    accesses: list[AccessFact]
    where_ranges: dict[str, tuple[Lin, Lin]]
    first_use: dict[str, tuple[SourceLocation, int]]
    loop: A.Loop | None = None
    scatter: list[A.Expr] | None = None
    """The left-hand side's subscripts of a scatter (see `A.Stmt.scatter`)."""


@dataclass
class DefFacts:
    """A checked def before range inference."""

    name: str
    loc: SourceLocation
    symbols: dict[str, Symbol]
    size_params: list[str]
    scalar_size_params: set[str]
    inputs: list[S.Param]
    outputs: list[S.Param]
    temporaries: list[str]
    dtypes: dict[str, str]
    stmts: list[StmtFacts] = field(default_factory=list)


class _Stmt:
    """Per-statement checking state."""

    def __init__(self, st: S.Statement):
        self.st = st
        self.lets: dict[str, A.Expr] = {}
        self.later_lets = {w.name for w in st.wheres if isinstance(w, S.WhereLet)}
        self.memo: dict[int, tuple[int, int]] = {}


class DefChecker:
    """Checks one `def`: names, types, statements; collects facts for range inference."""

    def __init__(self, src: Source, d: S.Def):
        self.src = src
        self.d = d
        self.symbols: dict[str, Symbol] = {}
        self.sizes: list[str] = []
        self.scalar_sizes: set[str] = set()
        self.dtypes: dict[str, str] = {}
        self.written: set[str] = set()
        self.loops: dict[S.Loop, A.Loop] = {}
        """The stepped loops (`tcir.frontend.loops`), labeled."""
        self.bound_names: dict[str, tuple[int, int]] = {}
        """Where each name that may be an index occurs in `where` range bounds."""

    def error(self, message: str, pos: int, length: int = 1) -> TypeError_:
        err = self.src.error(TypeError_, message, pos, length)
        assert isinstance(err, TypeError_)
        return err

    def loc_error(self, message: str, loc: SourceLocation, length: int) -> TypeError_:
        return TypeError_(message, loc, self.src.text, length)

    # -- declarations ------------------------------------------------------------
    def declare(self, name: str, sym: Symbol, length: int) -> None:
        if name in self.symbols:
            raise self.error(f"redefinition of '{name}'", sym.pos, length)
        self.symbols[name] = sym

    def dims(self, ty: S.TensorType, declare_sizes: bool) -> list[Lin]:
        out = []
        for dim in ty.dims or ():
            if isinstance(dim, S.Num):
                out.append(Lin.const(int(dim.value)))
                continue
            sym = self.symbols.get(dim.name)
            if sym is None and declare_sizes:
                self.declare(dim.name, Symbol("size", dim.pos), dim.length)
                self.sizes.append(dim.name)
            elif sym is None or sym.kind != "size":
                what = "is not a size" if sym else "is not an input size"
                raise self.error(f"'{dim.name}' {what}", dim.pos, dim.length)
            out.append(Lin.atom(dim.name))
        return out

    def declare_params(self) -> None:
        for p in self.d.inputs:
            assert p.type is not None
            if not p.type.dims:
                self.declare(p.name, Symbol("scalar", p.pos, p.type.dtype, [], 0), p.length)
                continue
            dims = self.dims(p.type, declare_sizes=True)
            self.declare(p.name, Symbol("input", p.pos, p.type.dtype, dims, len(dims)), p.length)
        for p in self.d.outputs:
            if p.type is None:
                self.declare(p.name, Symbol("output", p.pos), p.length)
                continue
            dims = self.dims(p.type, declare_sizes=False)
            self.declare(p.name, Symbol("output", p.pos, p.type.dtype, dims, len(dims)), p.length)
            self.dtypes[p.name] = p.type.dtype

    def declare_temporaries(self) -> list[str]:
        temps = []
        for st in self.d.stmts:
            sym = self.symbols.get(st.lhs)
            if sym is None:
                self.symbols[st.lhs] = sym = Symbol("temp", st.pos)
                temps.append(st.lhs)
            if sym.kind in ("input", "scalar"):
                raise self.error(f"cannot assign to input '{st.lhs}': inputs are immutable",
                                 st.pos, st.length)
            if sym.kind == "size":
                raise self.error(f"cannot assign to size '{st.lhs}'", st.pos, st.length)
            if sym.rank is None:
                sym.rank = len(st.args)
            elif sym.rank != len(st.args):
                raise self.error(f"'{st.lhs}' has {sym.rank} dimension(s) but is written with "
                                 f"{len(st.args)} subscript(s)", st.pos, st.length)
        for p in self.d.outputs:
            if self.symbols[p.name].rank is None:
                raise self.error(f"output '{p.name}' is never written", p.pos, p.length)
        return temps

    # -- the def -----------------------------------------------------------------
    def check(self) -> DefFacts:
        self.loops = self.stepped_loops(check_loops(self.src, self.d))
        self.declare_params()
        temps = self.declare_temporaries()
        while True:
            before = dict(self.dtypes)
            self.written = set()
            facts = [self.statement(st) for st in self.d.stmts]
            if self.dtypes == before:
                break
        scalar_sizes = [p.name for p in self.d.inputs if p.name in self.scalar_sizes]
        return DefFacts(self.d.name, self.src.loc(self.d.pos), self.symbols,
                        self.sizes + scalar_sizes, set(scalar_sizes), list(self.d.inputs),
                        list(self.d.outputs), temps, self.dtypes, facts)

    def stepped_loops(self, stepped: set[S.Loop]) -> dict[S.Loop, A.Loop]:
        """A label for each stepped loop: its index, numbered where another
        stepped loop has the same index."""
        labels: dict[S.Loop, A.Loop] = {}
        for st in self.d.stmts:
            if st.loop in stepped and st.loop not in labels:
                label, k = st.loop.name, 1
                while any(loop.label == label for loop in labels.values()):
                    k += 1
                    label = f"{st.loop.name}{k}"
                labels[st.loop] = A.Loop(label=label, index=st.loop.name)
        return labels

    def written_by_loop(self, st: S.Statement, tensor: str) -> bool:
        """Whether a stepped loop around `st` writes `tensor` (which it may
        then read at an earlier step before the statement writing it)."""
        return st.loop in self.loops and any(s.loop is st.loop and s.lhs == tensor for s in self.d.stmts)

    # -- statements --------------------------------------------------------------
    def statement(self, st: S.Statement) -> StmtFacts:
        ctx = _Stmt(st)
        scatters = self.scatters(st)
        lhs_indices = [] if scatters else self.lhs_indices(st)
        where_ranges: dict[str, tuple[Lin, Lin]] = {}
        range_pos: dict[str, S.WhereRange] = {}
        for w in st.wheres:
            if isinstance(w, S.WhereRange):
                if w.name in self.symbols or w.name in range_pos or w.name in ctx.later_lets:
                    raise self.error(f"redefinition of '{w.name}' in where clause", w.pos, w.length)
                range_pos[w.name] = w
                where_ranges[w.name] = (self.bound(w.lo, True), self.bound(w.hi, True))
        for w in st.wheres:
            if isinstance(w, S.WhereLet):
                if w.name in self.symbols or w.name in lhs_indices or w.name in ctx.lets:
                    raise self.error(f"redefinition of '{w.name}' in where clause", w.pos, w.length)
                ctx.later_lets.discard(w.name)
                ctx.lets[w.name] = self.limited(self.expr(w.expr, ctx, False), ctx, w)
        scatter = [self.subscript(st.lhs, arg, ctx) for arg in st.args] if scatters else None
        rhs = self.limited(self.expr(st.rhs, ctx, False), ctx, st.rhs)
        exists = [self.limited(self.expr(w.expr, ctx, False), ctx, w)
                  for w in st.wheres if isinstance(w, S.WhereExists)]

        first_use: dict[str, tuple[SourceLocation, int]] = {}
        for k, name in enumerate(lhs_indices):
            arg = st.args[k]
            first_use[name] = (self.src.loc(arg.pos), arg.length)
        for e in (node for sub in scatter or () for node in walk(sub)):
            if isinstance(e, A.IndexVar) and e.name not in first_use:
                first_use[e.name] = (e.loc, len(e.name))
        for e in walk(rhs):
            if isinstance(e, A.IndexVar) and e.name not in first_use:
                first_use[e.name] = (e.loc, len(e.name))
        reduction = [n for n in first_use if n not in lhs_indices]
        for x in exists:
            for e in walk(x):
                if isinstance(e, A.IndexVar) and e.name not in first_use:
                    raise self.loc_error(f"index '{e.name}' is only used in 'exists'", e.loc, len(e.name))
        for name, w in range_pos.items():
            if name not in first_use:
                raise self.error(f"index '{name}' of the where clause is not used in the statement"
                                 f"{did_you_mean(name, [n for n in first_use if n not in range_pos])}",
                                 w.pos, w.length)
            self.check_dependent_range(name, where_ranges[name], w, first_use, lhs_indices)
        target = [A.Access(tensor=st.lhs, subscripts=scatter, type=rhs.type, loc=self.src.loc(st.pos))] if scatter else []
        self.check_declared(reduction, range_pos, first_use, [rhs, *exists, *target])
        if st.op == "=" and reduction:
            loc, length = first_use[reduction[0]]
            raise self.loc_error(
                f"index '{reduction[0]}' is only on the right-hand side, so it is a reduction "
                f"index, but '=' does not reduce; use a reduction such as '+=!'"
                f"{did_you_mean(reduction[0], lhs_indices)}", loc, length)
        self.check_causality(st, lhs_indices, reduction, [rhs, *exists, *(scatter or ())])
        rhs = self.assign(st, rhs, bool(reduction))
        for e in (rhs, *exists):
            self.check_literals(e)
        self.written.add(st.lhs)
        accesses = [self.access_fact(e, guards) for x in (rhs, *exists, *(scatter or ()))
                    for e, guards in guarded_walk(x) if isinstance(e, A.Access)]
        if target:  # a scatter's bounds are checked (and inferred) like a read's, under the guard of its value
            accesses.append(self.access_fact(target[0], _guard_of_increment(st.op, rhs)))
        reduction = innermost_contiguous(reduction, rhs)
        return StmtFacts(st, self.src.loc(st.pos), st.lhs, lhs_indices, reduction, rhs, accesses,
                         where_ranges, first_use, self.loops.get(st.loop) if st.loop else None, scatter)

    def check_declared(self, reduction: list[str], ranged: dict[str, S.WhereRange],
                       first_use: dict[str, tuple[SourceLocation, int]], exprs: list[A.Expr]) -> None:
        """A name that is only used as a value (no subscript, no left-hand
        side, no `where` range) is no index but a size or scalar that was not
        declared (`X(b, n) / D`)."""
        subscripted = {
            e.name for x in exprs for access in walk(x) if isinstance(access, A.Access)
            for sub in access.subscripts for e in walk(sub) if isinstance(e, A.IndexVar)
        }
        for name in reduction:
            if name in subscripted or name in ranged:
                continue
            declared = [n for n, sym in self.symbols.items() if sym.kind in ("size", "scalar")]
            loc, length = first_use[name]
            raise self.loc_error(
                f"'{name}' is used as a value but is not declared: a size must appear in an "
                f"input's type (as in 'float(..., {name}) X') or be an int scalar input "
                f"('int32 {name}'), and an index used only as a value needs a range "
                f"('where {name} in 0:N'){did_you_mean(name, declared)}", loc, length)

    def check_literals(self, e: A.Expr) -> None:
        """Every floating-point constant fits its final type (`1e40` is no float32)."""
        for node in walk(e):
            if isinstance(node, A.Const) and is_float(node.type):
                value = float(node.value)
                largest = float(ml_dtypes.finfo(NUMPY_FLOATS[node.type]).max)  # numpy's has no bfloat16
                if not abs(value) <= largest:
                    raise self.loc_error(
                        f"floating-point constant {value:g} is out of range for {node.type} "
                        f"(largest {largest:.7g})", node.loc, 1)

    def scatters(self, st: S.Statement) -> bool:
        """Whether `st` is a scatter: a left-hand side subscript is not an
        index of its own (`gE(I(b), d) += gO(b, d)`, `gI(i + k) += ...`).
        Several instances may then update one element, so it must accumulate."""
        names: list[str] = []
        for arg in st.args:
            if not isinstance(arg, S.Name) or arg.name in self.symbols or arg.name in names:
                if st.op in ("+=", "+=!"):
                    return True
                what = f"'{arg.name}'" if isinstance(arg, S.Name) else "this subscript"
                raise self.error(f"left-hand side subscripts of '{st.lhs}' must be distinct index "
                                 f"variables, or the statement is a scatter, which accumulates with "
                                 f"'+=' or '+=!' (not '{st.op}'); {what} is not", arg.pos, arg.length)
            names.append(arg.name)
        return False

    def subscript(self, tensor: str, arg: S.Node, ctx: _Stmt) -> A.Expr:
        """A subscript of `tensor`: an integer expression."""
        s = self.expr(arg, ctx, True)
        if not is_integral(s.type):
            raise self.error(f"subscript of '{tensor}' must be an integer, not {s.type}",
                             arg.pos, arg.length)
        return s

    @staticmethod
    def lhs_indices(st: S.Statement) -> list[str]:
        """The left-hand side's indices of a statement that is no scatter."""
        return [arg.name for arg in st.args if isinstance(arg, S.Name)]

    def limited(self, e: A.Expr, ctx: _Stmt, node: S.Node) -> A.Expr:
        depth, size = measure(e, ctx.memo)
        if depth > MAX_INLINED_DEPTH or size > MAX_INLINED_SIZE:
            raise self.error("expression too large after inlining where-clause lets",
                             node.pos, node.length)
        return e

    def check_causality(self, st: S.Statement, lhs: list[str], reduction: list[str],
                        exprs: list[A.Expr]) -> None:
        """A statement reads the tensor it writes at the point it writes only,
        without reducing; or, in a stepped loop, at an earlier step."""
        loop = self.loops.get(st.loop) if st.loop else None
        for x in exprs:
            for e in walk(x):
                if not (isinstance(e, A.Access) and e.tensor == st.lhs):
                    continue
                if st.args and not lhs:
                    raise self.loc_error(f"a scatter reads '{st.lhs}', the tensor it updates",
                                         e.loc, len(e.tensor))
                if loop is not None and self.earlier_step(e, lhs.index(loop.index), loop.index):
                    continue  # a recurrence: written by an earlier step
                pointwise = [s.name if isinstance(s, A.IndexVar) else None for s in e.subscripts]
                if pointwise != lhs:
                    raise self.loc_error(
                        f"in-place update of '{st.lhs}' reads it at other points than the one "
                        f"written; only pointwise in-place updates are allowed"
                        f"{self.recurrence_advice(e, lhs)}", e.loc, len(e.tensor))
                if reduction:
                    raise self.loc_error(
                        f"'{st.lhs}' is read by a reduction that writes it (reduction index "
                        f"'{reduction[0]}')", e.loc, len(e.tensor))

    def earlier_step(self, e: A.Access, position: int, index: str) -> bool:
        """Whether `e`'s subscript at `position` is `index - c` with `c >= 1`."""
        lin = expr_to_lin(e.subscripts[position], self.sizes)
        back = None if lin is None else (Lin.atom(index) - lin).const_value
        return back is not None and back >= 1

    def recurrence_advice(self, e: A.Access, lhs: list[str]) -> str:
        """How to write a read of the written tensor at `i - c` as a recurrence."""
        for position, index in enumerate(lhs):
            if self.earlier_step(e, position, index):
                return (f"; a recurrence along '{index}' runs step by step in a loop: "
                        f"'for {index} in lo:hi {{ ... }}' around the statement (and a guard "
                        f"such as '{index} > 0 ? ... : ...' for the first step)")
        return ""

    def assign(self, st: S.Statement, rhs: A.Expr, reduces: bool) -> A.Expr:
        sym = self.symbols[st.lhs]
        if sym.kind == "temp" and st.lhs not in self.written and reduces and not st.op.endswith("!"):
            raise self.error(f"temporary '{st.lhs}' is reduced into with '{st.op}' before it is "
                             f"written; use '{st.op}!'", st.op_pos, len(st.op))
        if sym.dims is not None:
            target = sym.dtype
            if is_narrowing(rhs.type, target):
                raise self.error(f"cannot assign {rhs.type} to '{st.lhs}' of type {target} without "
                                 f"a cast; write {target}(...)", st.op_pos, len(st.op))
        else:
            target = promote(self.dtypes.get(st.lhs, rhs.type), rhs.type)
            self.dtypes[st.lhs] = target
        return self.conv(rhs, target)

    def access_fact(self, e: A.Access, guards: tuple[tuple[A.Ternary, bool], ...] = ()) -> AccessFact:
        return AccessFact(e.tensor, [expr_to_lin(s, self.sizes) for s in e.subscripts], e.loc,
                          len(e.tensor), guards)

    # -- range bounds ------------------------------------------------------------
    def check_dependent_range(self, name: str, bounds: tuple[Lin, Lin], w: S.WhereRange,
                              first_use: dict[str, tuple[SourceLocation, int]],
                              lhs_indices: list[str]) -> None:
        """A `where` range may depend on other indices of its statement (`k in
        i:N`, a triangular reduction) only for a reduction index: its values
        then count only within the bounds."""
        indices = sorted({n for b in bounds for n in b.names() if n not in self.symbols})
        for index in indices:
            if index not in first_use or index == name:
                raise self.error(f"'{index}' in a range bound is not a size, an int scalar input "
                                 f"or another index of the statement", *self.bound_names[index])
        if indices and name in lhs_indices:
            raise self.src.error(
                RangeError, f"the range of '{name}' depends on index '{indices[0]}', but '{name}' "
                f"indexes the left-hand side; only a reduction index's range may depend on "
                f"other indices", w.pos, w.length)

    def bound(self, n: S.Node, indices: bool = False) -> Lin:
        """A `where` range bound: an integer expression of sizes and int scalars
        (and of other indices, where `indices`: checked with the statement).
        Products and divisions of sizes (`0:N*N`) are fine: the JIT specializes
        the sizes before the polyhedral passes, which need affine sets."""
        if isinstance(n, S.Num):
            if n.is_float:
                raise self.error("range bounds must be integers", n.pos, n.length)
            return Lin.const(int(n.value))
        if isinstance(n, S.Name):
            sym = self.symbols.get(n.name)
            if sym is not None and sym.kind == "scalar" and is_integral(sym.dtype):
                self.scalar_sizes.add(n.name)
                return Lin.atom(n.name)
            if sym is None and indices:
                self.bound_names[n.name] = (n.pos, n.length)
                return Lin.atom(n.name)
            if sym is None or sym.kind != "size":
                raise self.error(f"'{n.name}' in a range bound is not a size or an int scalar input",
                                 n.pos, n.length)
            return Lin.atom(n.name)
        if isinstance(n, S.Dim):
            return self.dim_size(n)
        if isinstance(n, S.Apply):
            sym = self.symbols.get(n.name)
            if sym is not None and sym.kind in ("input", "output", "temp", "scalar"):
                raise self.error(f"tensor '{n.name}' read inside a range bound", n.pos, n.length)
        if isinstance(n, S.Unary) and n.op == "-":
            return -self.bound(n.x, indices)
        if isinstance(n, S.Binary) and n.op in ("+", "-", "*", "/"):
            a, b = self.bound(n.a, indices), self.bound(n.b, indices)
            if n.op == "+":
                return a + b
            if n.op == "-":
                return a - b
            if n.op == "*":
                return a * b
            den = b.const_value
            if n.op == "/" and den is not None and den > 0:
                return a.floordiv(den)
            size = next((s for s in (*self.sizes, *self.scalar_sizes) if b == Lin.atom(s)), None)
            if n.op == "/" and size is not None:
                return a.floordiv(size)
        raise self.error("a range bound must be an integer expression of sizes and int scalars "
                         "(+, -, *, and / by a positive constant or a size)", n.pos, n.length)

    def dim_size(self, n: S.Dim) -> Lin:
        sym = self.symbols.get(n.tensor)
        if sym is None or sym.dims is None or sym.kind == "scalar":
            raise self.error(f"'{n.tensor}.{n.dim}': '{n.tensor}' is not an input or typed output "
                             f"tensor", n.pos, len(n.tensor))
        if n.dim >= len(sym.dims):
            raise self.error(f"'{n.tensor}' has {len(sym.dims)} dimension(s); '{n.tensor}.{n.dim}' "
                             f"does not exist", n.pos, n.length)
        return sym.dims[n.dim]

    # -- expressions -------------------------------------------------------------
    def conv(self, e: A.Expr, t: str) -> A.Expr:
        """`e` converted to `t`: constants are folded, otherwise a `Cast` is inserted."""
        if e.type == t:
            return e
        if isinstance(e, A.Const) and not (is_float(e.type) and not is_float(t)):
            value = float(e.value) if is_float(t) else (bool(e.value) if t == "bool" else int(e.value))
            return A.Const(value=value, type=t, loc=e.loc)
        return A.Cast(type=t, x=e, loc=e.loc)

    def expr(self, n: S.Node, ctx: _Stmt, sub: bool) -> A.Expr:
        loc = self.src.loc(n.pos)
        if isinstance(n, S.Num):
            return A.Const(value=n.value, type="float32" if n.is_float else "int32", loc=loc)
        if isinstance(n, S.Name):
            return self.name(n, ctx, sub, loc)
        if isinstance(n, S.Dim):
            lin = self.dim_size(n)
            expr = lin.to_affine((), self.sizes)
            assert expr is not None
            return A.SizeRef(expr=expr, text=f"{n.tensor}.{n.dim}", loc=loc)
        if isinstance(n, S.Apply):
            return self.apply(n, ctx, sub, loc)
        if isinstance(n, S.Unary):
            x = self.expr(n.x, ctx, sub)
            if n.op == "!":
                return A.Unary(op="!", x=self.conv(x, "bool"), type="bool", loc=loc)
            x = self.conv(x, "int32") if x.type == "bool" else x
            if isinstance(x, A.Const):
                return A.Const(value=-x.value, type=x.type, loc=loc)
            return A.Unary(op="-", x=x, type=x.type, loc=loc)
        if isinstance(n, S.Binary):
            a, b = self.expr(n.a, ctx, sub), self.expr(n.b, ctx, sub)
            if n.op in ("&&", "||"):
                return A.Binary(op=n.op, a=self.conv(a, "bool"), b=self.conv(b, "bool"),
                                type="bool", loc=loc)
            t = promote(a.type, b.type)
            if n.op in _ARITH and t == "bool":
                t = "int32"
            result = "bool" if n.op in _COMPARE else t
            return A.Binary(op=n.op, a=self.conv(a, t), b=self.conv(b, t), type=result, loc=loc)
        assert isinstance(n, S.Ternary)
        c = self.conv(self.expr(n.c, ctx, sub), "bool")
        a, b = self.expr(n.a, ctx, sub), self.expr(n.b, ctx, sub)
        t = promote(a.type, b.type)
        return A.Ternary(c=c, a=self.conv(a, t), b=self.conv(b, t), type=t, loc=loc)

    def name(self, n: S.Name, ctx: _Stmt, sub: bool, loc: SourceLocation) -> A.Expr:
        if n.name in ctx.lets:
            return ctx.lets[n.name]
        if n.name in ctx.later_lets:
            raise self.error(f"'{n.name}' is used before its where-clause definition", n.pos, n.length)
        sym = self.symbols.get(n.name)
        if sym is None:
            return A.IndexVar(name=n.name, loc=loc)
        if sym.kind == "scalar":
            if sub and is_integral(sym.dtype) and sym.dtype != "bool":
                self.scalar_sizes.add(n.name)
            return A.ScalarParam(name=n.name, type=sym.dtype, loc=loc)
        if sym.kind == "size":
            return A.SizeRef(expr=AffineSymExpr(self.sizes.index(n.name)), text=n.name, loc=loc)
        if sym.rank == 0:  # a 0-d tensor read without `()`, as TC allows
            return self.access(S.Apply(n.pos, n.length, n.name, ()), sym, ctx, loc)
        raise self.error(f"tensor '{n.name}' needs subscripts: write {n.name}(...)", n.pos, n.length)

    def apply(self, n: S.Apply, ctx: _Stmt, sub: bool, loc: SourceLocation) -> A.Expr:
        sym = self.symbols.get(n.name)
        if n.name in SCALAR_TYPES:
            self.arity(n, 1)
            return A.Cast(type=SCALAR_TYPES[n.name], x=self.expr(n.args[0], ctx, sub), loc=loc)
        if sym is not None and sym.kind == "scalar":
            self.arity(n, 0)
            return self.name(S.Name(n.pos, n.length, n.name), ctx, sub, loc)
        if sym is not None and sym.kind in ("input", "output", "temp"):
            return self.access(n, sym, ctx, loc)
        if sym is not None and sym.kind == "size":
            raise self.error(f"size '{n.name}' is not a tensor or builtin", n.pos, n.length)
        builtin = builtin_name(n.name)
        if builtin is None:
            known = [name for name, sym in self.symbols.items() if sym.kind != "size"]
            hint = did_you_mean(n.name, [*known, *BUILTINS, *SCALAR_TYPES])
            raise self.error(f"undefined tensor or builtin '{n.name}'{hint}", n.pos, n.length)
        name, f_suffix = builtin
        self.arity(n, BUILTINS[name])
        args = [self.expr(a, ctx, sub) for a in n.args]
        t = args[0].type
        for a in args[1:]:
            t = promote(t, a.type)
        if f_suffix:
            t = "float32"
        elif name not in INTEGER_PRESERVING and not is_float(t):
            t = "float32"
        return A.Call(name=name, args=[self.conv(a, t) for a in args], type=t, loc=loc)

    def arity(self, n: S.Apply, expected: int) -> None:
        if len(n.args) != expected:
            raise self.error(f"'{n.name}' takes {expected} argument(s), got {len(n.args)}",
                             n.pos, n.length)

    def access(self, n: S.Apply, sym: Symbol, ctx: _Stmt, loc: SourceLocation) -> A.Expr:
        if sym.kind != "input" and n.name not in self.written and not self.written_by_loop(ctx.st, n.name):
            raise self.error(f"'{n.name}' is read before it is written", n.pos, n.length)
        if len(n.args) != sym.rank:
            raise self.error(f"'{n.name}' has {sym.rank} dimension(s) but is accessed with "
                             f"{len(n.args)} subscript(s)", n.pos, n.length)
        subs = [self.subscript(n.name, arg, ctx) for arg in n.args]
        # A tensor a later statement of the loop writes, read at an earlier
        # step: "bool" (promoted by anything) until that statement gives its type.
        dtype = sym.dtype if sym.dims is not None else self.dtypes.get(n.name, "bool")
        return A.Access(tensor=n.name, subscripts=subs, type=dtype, loc=loc)


def _guard_of_increment(op: str, rhs: A.Expr) -> tuple[tuple[A.Ternary, bool], ...]:
    """The guard a scatter's target is written under: that of a sum's value
    `c ? v : 0` (it adds nothing where `c` fails, so it writes nothing)."""
    return ((rhs, True),) if op.startswith("+=") and zero_else(rhs) else ()
