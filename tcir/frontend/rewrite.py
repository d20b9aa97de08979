"""Rewriting a checked def as TC source: statements, names, padded copies.

A `DefRewriter` holds what a rewrite of a def builds (`Statement`s with
`Lin` ranges, fresh names, the extents of new tensors) and writes it back
as TC source that the frontend parses again (`line`, `verify`): derived
gradients (`tcir.frontend.gradient`) and zero-padded reads
(`tcir.frontend.padding`) are both such rewrites. Its `pad_read` replaces
a read that a guard keeps inside its tensor by a read of a copy padded with
zeros (`X_pad`), so that no guard is left inside a sum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.ir.affine import AffineSymExpr

from tcir.errors import SourceLocation, TCError

from . import ast as A
from .dtypes import HALF_TYPES
from .linear import Derived, Div, Lin, from_affine, interval, provably_le
from .subscripts import accesses, expr_to_lin, index_names, rebuild, walk, zero_else
from .unparse import expr_text, lin_text

Range = tuple[Lin, Lin]


class Names:
    """Names not yet used in the rewritten def: tensors and sizes (which no
    index may be called), and indices (one statement's own)."""

    def __init__(self, indices: set[str], tensors: set[str]):
        self.taken = indices | tensors
        self.tensors = set(tensors)

    def fresh(self, base: str) -> str:
        """A new tensor or size name."""
        name = self._free(base, self.taken)
        self.taken.add(name)
        self.tensors.add(name)
        return name

    def index(self, base: str) -> str:
        """An index name for a statement of its own."""
        return self._free(base, self.tensors)

    @staticmethod
    def _free(base: str, taken: set[str]) -> str:
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        return name


@dataclass
class Statement:
    """A statement of the rewritten def; `ranges` in loop order, as `Lin`s of sizes."""

    lhs: str
    subscripts: list[A.Expr]
    op: str
    rhs: A.Expr
    ranges: dict[str, Range]
    scatter: bool = False
    copy_of: str | None = None
    """For the copy of another tensor over the whole tensor (a gradient's
    adjoint): that tensor's name."""

    @property
    def lhs_indices(self) -> list[str]:
        return [] if self.scatter else [s.name for s in self.subscripts if isinstance(s, A.IndexVar)]

    @property
    def reduces(self) -> bool:
        return any(i not in self.lhs_indices for i in self.ranges)


def const(value: float, dtype: str, loc: SourceLocation) -> A.Const:
    return A.Const(value=value, type=dtype, loc=loc)


def is_const(e: A.Expr, value: float) -> bool:
    return isinstance(e, A.Const) and not isinstance(e.value, bool) and e.value == value


def neg(x: A.Expr) -> A.Expr:
    if isinstance(x, A.Unary) and x.op == "-":
        return x.x
    if isinstance(x, A.Const):
        return replace(x, value=-x.value)
    return A.Unary(op="-", x=x, type=x.type, loc=x.loc)


def binary(op: str, a: A.Expr, b: A.Expr) -> A.Expr:
    """`a op b` with the operand type of `a` (`b` converted by the parser)."""
    if op == "*":
        if is_const(a, 1):
            return b
        if is_const(b, 1):
            return a
        if is_const(a, -1):
            return neg(b)
        if is_const(b, -1):
            return neg(a)
    if op in ("+", "-") and is_const(b, 0):
        return a
    if op == "+" and is_const(a, 0):
        return b
    if op == "/" and is_const(b, 1):
        return a
    result = "bool" if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||") else a.type
    return A.Binary(op=op, a=a, b=b, type=result, loc=a.loc)


def select(c: A.Expr, a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Ternary(c=c, a=a, b=b, type=a.type, loc=a.loc)


def conjunction(conditions: list[A.Expr]) -> A.Expr:
    """`c0 && c1 && ...` of at least one condition."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = binary("&&", result, condition)
    return result


class DefRewriter:
    """What a rewrite of `definition` builds: statements (`out`), the
    extents of the tensors it adds (`shapes`), names not yet taken."""

    label = "rewrite of"
    """How the result's source is named where it is parsed (`<label name>`)."""

    def __init__(self, definition: A.CheckedDef):
        self.d = definition
        self.sizes = definition.size_params
        self.derived: Derived = {
            s.name: (s.kind, [from_affine(c, (), self.sizes) for c in s.candidates])
            for s in definition.derived_sizes
        }
        indices = {i for s in definition.stmts for i in s.ranges}
        tensors = {p.name for p in (*definition.inputs, *definition.outputs, *definition.temporaries)}
        self.names = Names(indices, {*tensors, *self.sizes, definition.name})
        self.out: list[Statement] = []
        self.shapes: dict[str, list[Lin]] = {}
        """The extent of each tensor of the result, by name."""

    def lin(self, expr: object) -> Lin:
        return from_affine(expr, (), self.sizes)  # pyright: ignore[reportArgumentType]

    def ranges(self, stmt: A.Stmt) -> dict[str, Range]:
        return {i: (self.lin(stmt.ranges[i][0]), self.lin(stmt.ranges[i][1])) for i in stmt.loop_order}

    def dims(self, param: A.Param) -> list[Lin]:
        return [self.lin(d) for d in param.dims]

    def extents(self, tensor: str) -> list[Lin]:
        """The extents of a tensor of the result or of the def."""
        return self.shapes.get(tensor) or self.dims(self.d.tensor(tensor))

    def stored(self, tensor: str) -> str:
        """The tensor's name in the result (the base of its padded copy's)."""
        return tensor

    def invalid(self) -> str:
        """What `verify`'s error says where the result is not valid TC."""
        return f"the {self.label} '{self.d.name}' is not valid TC"

    def integer(self, lin: Lin, loc: SourceLocation) -> A.Expr:
        """An int32 expression of indices and sizes with the value of `lin`."""
        total: A.Expr | None = None
        for mono, c in sorted(lin.terms, key=lambda t: t[1] < 0):  # `w - kw`
            if mono == ():
                continue
            term: A.Expr | None = None
            for atom in mono:
                factor = self.atom(atom, loc)
                term = factor if term is None else binary("*", term, factor)
            assert term is not None
            magnitude = abs(c)
            if magnitude != 1:
                term = binary("*", A.Const(value=magnitude, type="int32", loc=loc), term)
            if total is None:
                total = term if c > 0 else neg(term)
            else:
                total = binary("+" if c > 0 else "-", total, term)
        const = lin.const_value if lin.const_value is not None else dict(lin.terms).get((), 0)
        if total is None:
            return A.Const(value=const, type="int32", loc=loc)
        if const:
            total = binary("+" if const > 0 else "-", total, A.Const(value=abs(const), type="int32", loc=loc))
        return total

    def atom(self, atom: str | Div, loc: SourceLocation) -> A.Expr:
        if isinstance(atom, Div):
            den = atom.den if isinstance(atom.den, str) else None
            divisor = self.atom(den, loc) if den is not None else A.Const(value=atom.den, type="int32", loc=loc)
            return binary("/", self.integer(atom.num, loc), divisor)
        if atom in self.sizes:
            return A.SizeRef(expr=AffineSymExpr(self.sizes.index(atom)), text=atom, loc=loc)
        return A.IndexVar(name=atom, loc=loc)

    def windows(self, condition: A.Expr, read: A.Access) -> dict[int, tuple[Lin, Lin]] | None:
        """The range `[lo, hi)` that `condition`, a conjunction of bounds on
        subscripts of `read`, keeps each bounded subscript in (by its
        position; the other end its tensor's extent); None where a conjunct
        bounds anything else or a range is not inside the tensor's."""
        conjuncts, stack = [], [condition]
        while stack:
            node = stack.pop()
            if isinstance(node, A.Binary) and node.op == "&&":
                stack += [node.a, node.b]
            else:
                conjuncts.append(node)
        lins = [expr_to_lin(s, self.sizes) for s in read.subscripts]
        extents = self.extents(read.tensor)
        bounds: dict[int, list[Lin | None]] = {}
        for node in conjuncts:
            if not (isinstance(node, A.Binary) and node.op in ("<", "<=", ">", ">=")):
                return None
            a, b = expr_to_lin(node.a, self.sizes), expr_to_lin(node.b, self.sizes)
            if a is None or b is None:
                return None
            difference = a - b
            for k, lin in enumerate(lins):
                if lin is None or not lin.names():
                    continue
                for sign in (1, -1):  # difference = sign * subscript + rest, rest free of indices
                    rest = difference - lin.scale(sign)
                    if set(rest.names()) <= set(self.sizes):
                        break
                else:
                    continue
                # sign * s + rest (op) 0: a lower or an upper bound of s.
                upper = (node.op in ("<", "<=")) == (sign == 1)
                strict = node.op in ("<", ">")
                limit = rest.scale(-sign)  # s (op') limit
                if upper:
                    bound = limit if strict else limit + Lin.const(1)
                else:
                    bound = limit + Lin.const(1) if strict else limit
                window = bounds.setdefault(k, [None, None])
                if window[int(upper)] is not None:
                    return None
                window[int(upper)] = bound
                break
            else:
                return None
        result = {}
        for k, (lo, hi) in bounds.items():
            lo, hi = lo or Lin.const(0), hi or extents[k]
            if not (provably_le(Lin.const(0), lo, self.derived) and provably_le(hi, extents[k], self.derived)):
                return None
            result[k] = (lo, hi)
        return result

    def pad_read(self, read: A.Access, windows: dict[int, tuple[Lin, Lin]], box: dict[str, Range]) -> A.Access | None:
        """A read of a copy of `read`'s tensor padded with zeros (the copy
        emitted here, `X_pad`) that gives `read` where each subscript at a
        position of `windows` is in its `[lo, hi)` and 0 elsewhere, over the
        values those subscripts take in `box` (None where they are not
        known): the copy starts at each such subscript's least value.
        `read` itself where the windows hold all those values."""
        lins = [expr_to_lin(s, self.sizes) for s in read.subscripts]
        extents = list(self.extents(read.tensor))
        spans: dict[int, tuple[Lin, Lin]] = {}
        for k in windows:
            span = None if lins[k] is None else interval(lins[k], box)  # type: ignore[arg-type]
            if span is None:
                return None
            spans[k] = span
        loc = read.loc
        indices = [self.names.index(f"i{k}") for k in range(len(extents))]
        inner: list[A.Expr] = [A.IndexVar(name=i, loc=loc) for i in indices]
        bounds: list[A.Expr] = []
        for k, (lo, hi) in windows.items():
            least, most = spans[k]
            at = inner[k]
            inner[k] = self.integer(Lin.atom(indices[k]) + least, loc)
            extents[k] = most - least + Lin.const(1)
            if not provably_le(lo, least, self.derived):
                bounds.append(binary(">=", at, self.integer(lo - least, loc)))
            if not provably_le(most + Lin.const(1), hi, self.derived):
                bounds.append(binary("<", at, self.integer(hi - least, loc)))
        if not bounds:
            return read  # the window holds every value the subscripts take: no guard, no copy
        zero: A.Expr = const(0.0, read.type, loc)
        if read.type in HALF_TYPES:  # `half(0.0)`: a bare `0.0` would make the copy float
            zero = A.Cast(x=const(0.0, "float32", loc), type=read.type, loc=loc)
        copy: A.Expr = select(conjunction(bounds), replace(read, subscripts=inner), zero)
        name = self.names.fresh(f"{self.stored(read.tensor)}_pad")
        self.shapes[name] = extents
        point = [A.IndexVar(name=i, loc=loc) for i in indices]
        self.out.append(Statement(name, point, "=", copy, {i: (Lin.const(0), e) for i, e in zip(indices, extents)}))
        shifted = [
            self.integer(lin - spans[k][0], loc) if k in spans and lin is not None else s
            for k, (s, lin) in enumerate(zip(read.subscripts, lins))
        ]
        return replace(read, tensor=name, subscripts=shifted)

    def guarded_reads_padded(
        self, value: A.Expr, box: dict[str, Range], summed: set[str], reused: bool = False
    ) -> A.Expr:
        """`value` with each `c ? X(...) : 0` or `c ? X(...) * y * ... : 0`
        whose condition `c` bounds subscripts of `X` that `summed` indices
        shift (a padded convolution's `h + kh >= 1 && h + kh <= H ? I(n, c,
        h + kh - 1, ...) * Wt(f, c, kh, kw) : 0`) replaced by a read of a
        copy of `X` padded with zeros (`pad_read`) times the other factors:
        no guard is left inside the sum. With `reused`, only reads that miss
        an index of `box` (a convolution's image, read for every filter):
        copying a read at one point of the sum gains nothing."""
        def leaf(node: A.Expr) -> A.Expr | None:
            if not zero_else(node):
                return None
            cast = node.a if isinstance(node.a, A.Cast) else None  # half products summed in f32
            factors = _factors(node.a if cast is None else cast.x)
            for k, read in enumerate(factors):
                if not isinstance(read, A.Access) or reused and set(box) <= index_names(read):
                    continue
                windows = self.windows(node.c, read)
                if windows is None or not any(
                    set((expr_to_lin(read.subscripts[j], self.sizes) or Lin()).names()) & summed for j in windows
                ):
                    continue
                padded = self.pad_read(read, windows, box)
                if padded is not None:
                    product = _product([*factors[:k], padded, *factors[k + 1 :]])
                    return product if cast is None else replace(cast, x=product)
            return None

        return rebuild(value, leaf)

    def line(self, stmt: Statement, every: bool, known: set[str]) -> str:
        subscripts = ", ".join(expr_text(s, self.sizes) for s in stmt.subscripts)
        lhs = f"{stmt.lhs}({subscripts})" if stmt.subscripts else stmt.lhs
        ranges = [
            f"{i} in {lin_text(lo)}:{lin_text(hi)}"
            for i, (lo, hi) in stmt.ranges.items()
            if every or not self.plain(stmt, i, known)
        ]
        where = f" where {', '.join(ranges)}" if ranges else ""
        return f"  {lhs} {stmt.op} {expr_text(stmt.rhs, self.sizes)}{where}"

    def plain(self, stmt: Statement, index: str, known: set[str]) -> bool:
        """Whether range inference finds `index`'s range on its own: it starts
        at 0 and every subscript it is in is the index alone, one of them of a
        dimension of (known) extent its range's end, none of a smaller one."""
        lo, hi = stmt.ranges[index]
        if lo != Lin.const(0) or stmt.scatter:
            return False
        uses = [(stmt.lhs, k, s) for k, s in enumerate(stmt.subscripts)]
        uses += [(n.tensor, k, s) for n in accesses(stmt.rhs) for k, s in enumerate(n.subscripts)]
        exact = False
        for tensor, dim, subscript in uses:
            if not any(isinstance(x, A.IndexVar) and x.name == index for x in walk(subscript)):
                continue
            if not isinstance(subscript, A.IndexVar):
                return False
            if tensor not in known:
                continue
            extent = self.extents(tensor)[dim]
            if not provably_le(hi, extent, self.derived):
                return False
            exact = exact or extent == hi
        return exact

    def verify(self, text: str, statements: list[Statement], final: bool) -> A.CheckedDef | None:
        """`text` parsed, where TC infers the ranges of `statements` from it
        (where it does not and not `final`: None, the ranges are then all
        written out)."""
        from . import parse

        try:
            (parsed,) = parse(text, f"<{self.label} {self.d.name}>")
        except TCError as error:
            if not final:
                return None
            raise TCError(f"{self.invalid()} ({error})\n{text}", self.d.loc) from None
        for stmt, checked in zip(statements, parsed.stmts, strict=True):
            found = {i: (from_affine(lo, (), parsed.size_params), from_affine(hi, (), parsed.size_params))
                     for i, (lo, hi) in checked.ranges.items()}
            if found != stmt.ranges:
                if final:
                    raise AssertionError(f"ranges {stmt.ranges} inferred as {found}\n{text}")
                return None
        return parsed


def _factors(e: A.Expr) -> list[A.Expr]:
    """The factors of a product `a * b * ...` (`[e]` for anything else)."""
    if isinstance(e, A.Binary) and e.op == "*":
        return [*_factors(e.a), *_factors(e.b)]
    return [e]


def _product(factors: list[A.Expr]) -> A.Expr:
    result = factors[0]
    for factor in factors[1:]:
        result = binary("*", result, factor)
    return result
