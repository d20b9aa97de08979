"""Range inference, as in the TC paper (section 3.1), and shapes of outputs/temporaries.

Per statement: `where` ranges are fixed first; then, in rounds, every subscript with
a single unresolved index yields the maximal range of that index that keeps the
subscript within the accessed dimension, for all values of the indices resolved in
earlier rounds (universal quantification). Ranges found in one round are
intersected and only then become resolved. Indices start at 0 unless a `where`
says otherwise. Accesses to already-shaped tensors (inputs, typed outputs, and
tensors written by earlier statements) count, and so does the shape of the
tensor written, once known.

A statement whose LHS indices stay unconstrained (`C(i) = 0` before
`C(i) += A(i,k) * x(k)`) is inferred again after the whole def, from the shape
the later statements give to its tensor. A tensor's dimension is the range of
the LHS index that first defines it, as in TC (which infers Halide buffers'
mins and extents): its extent is `hi - lo`, and its elements are the index's
values from `lo` on, its origin. `O(i) = I(i - 1)` gives `O` of `I_0`
elements, `O[k]` being the element written at `i = k + 1`. The checked def
is then rewritten so that every tensor starts at 0: a statement writing a
tensor of origin `o` runs its LHS index over `[lo - o, hi - o)` (its uses
become `i + o`), and every access subtracts the origin from its subscript.

Bounds are closed-form: the minimum (maximum) of several candidate bounds must be
one of them for all sizes >= 1 (decided with isl); otherwise the range is ambiguous
and a `where` clause is required.

A read in a branch of `?:` whose condition keeps its subscript within bounds
on one side, whatever the unresolved indices are (`t + k >= 1 ? X(t + k - 1)
: 0`: padding, causal masks, boundary conditions), does not bound an index
on that side, unless nothing else bounds it (TC's intersection would narrow
a "same" convolution's filter index to one value). Where a guarded read
would still narrow a reduction index below what the other reads allow, the
wider range is taken if the guard keeps the read in bounds over it, and is
ambiguous otherwise (a `RangeError` with both ranges). Guarded reads are
checked once the ranges are known, and their ternaries evaluated lazily.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from xdsl.ir.affine import AffineExpr

from tcir.errors import RangeError, SourceLocation

from . import ast as A
from .dtypes import int_limits
from .linear import Div, Lin, implied_nonnegative, interval, out_of_bounds_sizes, provably_le
from .subscripts import condition_cases
from .sema import DefFacts, StmtFacts
from .source import Source

Range = tuple[Lin, Lin]
Guards = tuple[tuple[A.Ternary, bool], ...]
Constraint = tuple[Lin, Lin, SourceLocation, int, str, Guards]
"""0 <= subscript < extent for an access at loc (length) of a tensor, under
the ternary branches `Guards` it sits in."""


@dataclass
class _Candidates:
    """Bounds of one index found in a round: from accesses, and from reads
    whose guards keep them in bounds on one side at least (constraint
    number, lower, upper; None on the sides kept)."""

    los: list[Lin] = field(default_factory=list[Lin])
    his: list[Lin] = field(default_factory=list[Lin])
    guarded: list[tuple[int, Lin | None, Lin | None]] = field(default_factory=list[tuple[int, Lin | None, Lin | None]])
    kept_his: list[Lin] = field(default_factory=list[Lin])
    """Upper bounds of the reads their guards keep in bounds: used only
    where nothing else bounds the index (`(r < k) ? S(r) : 0`)."""


class RangeInference:
    """Infers index ranges for every statement and the shapes of written tensors."""

    def __init__(self, src: Source, facts: DefFacts):
        self.src = src
        self.facts = facts
        self.shapes: dict[str, list[Lin | None]] = {}
        self.size_checks: list[A.SizeCheck] = []
        self.guarded: set[int] = set()
        """Ternaries (by id) that a read needs to be evaluated lazily."""
        self.bounded: dict[int, list[Lin]] = {}
        """Per statement (by id), `lin >= 0` conditions on its reduction indices
        that their ranges cannot say (the other candidates of a min or max
        bound): the statement's value counts only where they hold."""
        self.derived: dict[str, tuple[str, list[Lin]]] = {}
        """Sizes that a call computes (`min`/`max` bounds of output indices), by
        name: their kind and candidates, each over the sizes before it."""
        self.unshaped: dict[int, set[tuple[int, int]]] = {}
        """Per statement (by id), the (access, dimension) pairs not shaped
        when it was inferred (`constraints`)."""
        self.origins: dict[str, list[Lin]] = {}
        """Where each tensor's dimensions start (0 but for outputs and temporaries
        whose defining index does not start at 0)."""
        for name, sym in facts.symbols.items():
            if sym.kind in ("input", "output", "temp"):
                self.shapes[name] = list(sym.dims) if sym.dims is not None else [None] * (sym.rank or 0)
                self.origins[name] = [Lin.const(0)] * len(self.shapes[name])

    @property
    def shifted(self) -> bool:
        """Whether some tensor does not start at 0."""
        return any(o.const_value != 0 for origins in self.origins.values() for o in origins)

    def error(self, message: str, loc: SourceLocation, length: int) -> RangeError:
        return RangeError(message, loc, self.src.text, length)

    def run(self) -> list[dict[str, Range]]:
        stmts = self.facts.stmts
        results: list[dict[str, Range] | None] = [None] * len(stmts)
        deferred = []
        for k, sf in enumerate(stmts):
            if sf.scatter is not None and None in self.shapes[sf.lhs]:
                raise self.error(f"the shape of '{sf.lhs}' is not known where this scatter writes it: "
                                 f"declare it (an output such as 'float(N) {sf.lhs}') or write it "
                                 f"before", sf.loc, len(sf.lhs))
            ranges, unresolved = self.statement(sf)
            self.define_shape(sf, ranges)
            if unresolved:
                later = any(s.lhs == sf.lhs for s in stmts[k + 1:])
                if not later or None not in self.shapes[sf.lhs]:
                    raise self.unconstrained(sf, unresolved)
                deferred.append(k)
                continue
            results[k] = ranges
        for k in deferred:
            ranges, unresolved = self.statement(stmts[k])
            if unresolved:
                raise self.unconstrained(stmts[k], unresolved)
            results[k] = ranges
        for sf, ranges in zip(stmts, results):
            assert ranges is not None
            if sf.loop is not None:  # its reads of earlier steps, now that they are shaped
                advice = f"guard the read of an earlier step (as in '{sf.loop.index} > 0 ? ... : ...')"
                self.check_in_bounds(sf, self.constraints(sf, late=True), ranges, set(sf.first_use), advice)
        return [r for r in results if r is not None]

    def unconstrained(self, sf: StmtFacts, unresolved: list[str]) -> RangeError:
        # Reductions first; an index with a `where` range (that depends on
        # unresolved ones) is not the culprit.
        ordered = sorted(unresolved, key=lambda n: (n in sf.where_ranges, n in sf.lhs_indices))
        name, others = ordered[0], ", ".join(f"'{n}'" for n in ordered[1:])
        loc, length = sf.first_use[name]
        also = f" (also unresolved: {others})" if others else ""
        return self.error(f"cannot infer the range of index '{name}'{also}: no access bounds it "
                          f"on its own; add a where clause such as 'where {name} in 0:N'", loc, length)

    def define_shape(self, sf: StmtFacts, ranges: dict[str, Range]) -> None:
        shape = self.shapes[sf.lhs]
        for d, idx in enumerate(sf.lhs_indices):
            if shape[d] is not None or idx not in ranges:
                continue
            lo, hi = ranges[idx]
            shape[d] = hi - lo
            self.origins[sf.lhs][d] = lo

    # -- one statement -----------------------------------------------------------
    def constraints(self, sf: StmtFacts, late: bool = False) -> list[Constraint]:
        """(subscript, extent, loc, length, tensor, guards) for each affine
        subscript of a shaped dim; with `late`, only those of the reads that
        were not shaped yet at the first call (a stepped loop reads what its
        statements write at earlier steps, also before they define it)."""
        out = []
        if not late:
            for d, idx in enumerate(sf.lhs_indices):
                ext = self.shapes[sf.lhs][d]
                if ext is not None:
                    loc, length = sf.first_use[idx]
                    out.append((Lin.atom(idx) - self.origins[sf.lhs][d], ext, loc, length, sf.lhs, ()))
        unshaped = self.unshaped.setdefault(id(sf), set())
        for k, acc in enumerate(sf.accesses):
            origins = self.origins[acc.tensor]
            for d, (sub, ext, origin) in enumerate(zip(acc.subscripts, self.shapes[acc.tensor], origins)):
                if sub is None or late and (k, d) not in unshaped:
                    continue
                if ext is None:
                    unshaped.add((k, d))
                else:
                    out.append((sub - origin, ext, acc.loc, acc.length, acc.tensor, acc.guards))
        return out

    def statement(self, sf: StmtFacts) -> tuple[dict[str, Range], list[str]]:
        indices = set(sf.first_use)
        self.bounded[id(sf)] = []
        resolved: dict[str, Range] = {}
        dependent: dict[str, Range] = {}
        for name, (lo, hi) in sf.where_ranges.items():
            if (set(lo.names()) | set(hi.names())) & indices:
                dependent[name] = (lo, hi)
                continue
            self.check_nonempty(sf, name, lo, hi)
            resolved[name] = (lo, hi)
        constraints = self.constraints(sf)
        used: set[int] = set()
        while True:
            self.resolve_dependent(sf, dependent, resolved, indices)
            unresolved = indices - resolved.keys()
            found: dict[str, _Candidates] = {}
            for k, (sub, ext, _, _, _, guards) in enumerate(constraints):
                free = {n for n in sub.names() if n in unresolved}
                if len(free) != 1 or free <= dependent.keys():
                    continue
                (v,) = free
                bounds = self.solve(sub, v, ext, resolved, indices)
                if bounds is None:
                    continue
                lo, hi, positive = bounds
                kept = self.kept_by_guards(sf, sub, ext, guards, resolved, unresolved) if guards else (False, False)
                kept = kept if positive else kept[::-1]  # (v's lower bound, v's upper bound)
                candidates = found.setdefault(v, _Candidates())
                if kept[0]:
                    lo = None
                if kept[1]:
                    candidates.kept_his.append(hi)
                    hi = None
                if any(kept):  # checked with its guards once the ranges are known
                    candidates.guarded.append((k, lo, hi))
                    continue
                used.add(k)
                if lo is not None:
                    candidates.los.append(lo)
                if hi is not None:
                    candidates.his.append(hi)
            found = {v: c for v, c in found.items() if c.his or c.kept_his or any(hi is not None for _, _, hi in c.guarded)}
            if not found:
                break
            for v, candidates in found.items():
                lo, hi = self.resolve(sf, v, candidates, constraints, resolved)
                self.check_nonempty(sf, v, lo, hi)
                resolved[v] = (lo, hi)
        order = [n for n in sf.first_use if n not in resolved]
        if dependent and set(order) <= dependent.keys():
            name = next(iter(dependent))
            loc, length = sf.first_use[name]
            raise self.error(f"the range of index '{name}' depends on indices whose ranges depend "
                             f"on it", loc, length)
        if not order:
            self.check_in_bounds(sf, [c for k, c in enumerate(constraints) if k not in used],
                                 resolved, indices)
        return resolved, order

    def resolve(self, sf: StmtFacts, v: str, candidates: _Candidates, constraints: list[Constraint],
                resolved: dict[str, Range]) -> Range:
        """The range of `v` from its candidate bounds. A read under a guard
        narrows a reduction index only where no unguarded access allows more:
        where one does, the wider range is taken if the guard keeps the read
        in bounds over it, and where the guard does not, the range is
        ambiguous (a `RangeError` naming both ranges)."""
        los, his = candidates.los, candidates.his
        if not his and all(hi is None for _, _, hi in candidates.guarded):
            his = candidates.kept_his
        glos = [lo for _, lo, _ in candidates.guarded if lo is not None]
        ghis = [hi for _, _, hi in candidates.guarded if hi is not None]
        narrowing = [
            (k, lo, hi) for k, lo, hi in candidates.guarded
            if (hi is not None and not any(self.le(u, hi) for u in his))
            or (lo is not None and not any(self.le(lo, u) for u in [Lin.const(0), *los]))
        ]
        if v not in sf.reduction_indices or not his or not narrowing:
            lo = self.extreme(sf, v, [Lin.const(0), *los, *glos], upper=False)
            return lo, self.extreme(sf, v, [*his, *ghis], upper=True)
        wide = (self.extreme(sf, v, [Lin.const(0), *los], upper=False), self.extreme(sf, v, his, upper=True))
        ranges = {**resolved, v: wide}
        for k, lo, hi in narrowing:
            sub, ext, loc, length, tensor, guards = constraints[k]
            if not self.in_bounds_under_guards(sf, sub, ext, guards, ranges):
                narrow = (lo if lo is not None else wide[0], hi if hi is not None else wide[1])
                raise self.error(
                    f"the range of reduction index '{v}' is ambiguous: the other accesses allow "
                    f"[{wide[0]}, {wide[1]}), the guarded read of '{tensor}' (subscript '{sub}') only "
                    f"[{narrow[0]}, {narrow[1]}), and its guard does not keep it in bounds over the "
                    f"wider range; add 'where {v} in {narrow[0]}:{narrow[1]}' to reduce over the "
                    f"narrower range, or guard the read for 'where {v} in {wide[0]}:{wide[1]}'",
                    loc, length)
        return wide

    def guard_cases(self, sf: StmtFacts, guards: Guards) -> list[list[Lin]]:
        """The conditions a read under `guards` is made under, as cases (one
        of which holds), each with the statement's `bounded` conditions."""
        cases: list[list[Lin]] = [[]]
        for ternary, taken in guards:
            alternatives = condition_cases(ternary.c, taken, self.facts.size_params) or [[]]
            cases = [case + more for case in cases for more in alternatives]
        return [case + self.bounded[id(sf)] for case in cases]

    def kept_by_guards(self, sf: StmtFacts, sub: Lin, ext: Lin, guards: Guards,
                       resolved: dict[str, Range], unresolved: set[str]) -> tuple[bool, bool]:
        """Whether the guards of a read keep `sub` at least 0 and below `ext`,
        whatever the values of the unresolved indices: the read then bounds
        no index on that side (`Y(t) +=! t + k >= 1 ? X(t + k - 1) : 0`)."""
        cases = self.guard_cases(sf, guards)
        if not any(cases):
            return False, False
        sides = []
        for side in (sub, ext - 1 - sub):
            sides.append(all(
                implied_nonnegative(side, case, {n: resolved[n] for n in resolved
                                                 if n in set(side.names()).union(*(c.names() for c in case))},
                                    unresolved, self.derived)
                for case in cases))
        return sides[0], sides[1]

    def in_bounds_under_guards(self, sf: StmtFacts, sub: Lin, ext: Lin, guards: Guards,
                               ranges: dict[str, Range]) -> bool:
        """Whether `sub` stays within `[0, ext)` over `ranges` where the guards hold."""
        for case in self.guard_cases(sf, guards):
            names = set(sub.names()).union(*(c.names() for c in case)) & ranges.keys()
            try:
                if out_of_bounds_sizes(sub, ext, {n: ranges[n] for n in names}, case, self.derived) is not None:
                    return False
            except ValueError:
                return False
        return True

    def resolve_dependent(self, sf: StmtFacts, dependent: dict[str, Range],
                          resolved: dict[str, Range], indices: set[str]) -> None:
        """Resolve the `where` ranges of reduction indices that depend on
        resolved indices (`k in i:N`): the range is the box of their values,
        and the value counts only within the bounds (`bounded`)."""
        progress = True
        while progress:
            progress = False
            for name, (lo, hi) in list(dependent.items()):
                if (set(lo.names()) | set(hi.names())) & indices - resolved.keys():
                    continue
                low, high = _rest_bounds(lo, resolved, indices), _rest_bounds(hi, resolved, indices)
                divides = any(isinstance(a, Div) for b in (lo, hi) for m, _ in b.terms for a in m)
                if low is None or high is None or divides:
                    loc, length = sf.first_use[name]
                    raise self.error(f"the range [{lo}, {hi}) of index '{name}' is not affine in "
                                     f"the other indices", loc, length)
                self.check_nonempty(sf, name, low[0], high[1])
                atom = Lin.atom(name)
                self.bounded[id(sf)] += [atom - lo, hi - atom - 1]
                resolved[name] = (low[0], high[1])
                del dependent[name]
                progress = True

    def check_in_bounds(self, sf: StmtFacts, constraints: list[Constraint], resolved: dict[str, Range],
                        indices: set[str], advice: str = "add a where clause") -> None:
        """Accesses that inferred nothing must still stay within bounds: an
        error now if they leave them for every size, a `SizeCheck` for the
        call to make if for some sizes only (`output(l) = input(index(l))
        where l in 0:2` needs `index` of 2 elements or more)."""
        for sub, ext, loc, length, tensor, guards in constraints:
            bounds = _rest_bounds(sub, resolved, indices)
            if bounds is None:
                continue
            low, high = bounds
            if self.le(Lin.const(0), low) and self.le(high, ext - 1):
                continue
            used = ", ".join(f"{n} in [{resolved[n][0]}, {resolved[n][1]})"
                             for n in sorted(set(sub.names()) & indices))
            message = f"subscript '{sub}' of '{tensor}' is out of bounds [0, {ext}) for the inferred ranges {used}"
            # The read is made where its guards hold: in bounds in each of their cases.
            cases = self.guard_cases(sf, guards)
            failures = []
            for conditions in cases:
                names = set(sub.names()).union(*(c.names() for c in conditions)) & indices
                try:
                    found = out_of_bounds_sizes(sub, ext, {n: resolved[n] for n in names}, conditions, self.derived)
                except ValueError:  # affine once the sizes are known: checked then
                    box = tuple((n, *resolved[n]) for n in sorted(names))
                    self.size_checks.append(A.SizeCheck(bad="", names={}, message=message, loc=loc,
                                                        deferred=(sub, ext, box, tuple(conditions))))
                    self.guarded.update(id(ternary) for ternary, _ in guards)
                    continue
                if found is not None:
                    failures.append(found)
            if any(cases) or self.bounded[id(sf)]:
                # In bounds thanks to the conditions (and, if any, the size
                # checks below): they must be evaluated first.
                self.guarded.update(id(ternary) for ternary, _ in guards)
            if not failures:
                continue
            if any(found.always for found in failures):
                raise self.error(f"{message.replace('is out of', 'may be out of')}; {advice}", loc, length)
            self.size_checks += [A.SizeCheck(bad=found.bad, names=found.names, derived=found.derived,
                                             message=message, loc=loc) for found in failures]

    def le(self, a: Lin, b: Lin) -> bool:
        """Whether a <= b for all sizes >= 1 (derived sizes as defined)."""
        return provably_le(a, b, self.derived)

    def check_nonempty(self, sf: StmtFacts, v: str, lo: Lin, hi: Lin) -> None:
        if self.le(hi, lo):
            loc, length = sf.first_use[v]
            raise self.error(f"the range of index '{v}' is empty: [{lo}, {hi})", loc, length)

    def extreme(self, sf: StmtFacts, v: str, cands: list[Lin], upper: bool) -> Lin:
        """The least (upper) or greatest (lower) candidate, if one is for all
        sizes. Otherwise, for a reduction index, TC's `min`/`max` bound: the
        range takes the first candidate and the others become conditions
        under which the statement's value counts (`bounded`); for an output
        index, a size that the call computes (`derive`)."""
        unique = list(dict.fromkeys(cands))
        for c in unique:
            if all(self.le(c, o) if upper else self.le(o, c) for o in unique):
                return c
        if v in sf.reduction_indices and not any(isinstance(a, Div) for c in unique for m, _ in c.terms for a in m):
            atom = Lin.atom(v)
            self.bounded[id(sf)] += [o - atom - 1 if upper else atom - o for o in unique[1:]]
            return unique[0]
        which = "min" if upper else "max"
        if v in sf.lhs_indices and not {n for c in unique for n in c.names()} & sf.first_use.keys():
            return Lin.atom(self.derive(v, which, unique))
        loc, length = sf.first_use[v]
        raise self.error(
            f"the range of index '{v}' is not affine: its {'upper' if upper else 'lower'} bound is "
            f"{which}({', '.join(map(str, unique))}), which depends on the sizes; add a where clause "
            f"or make the sizes agree", loc, length)

    def derive(self, v: str, kind: str, candidates: list[Lin]) -> str:
        """The name of a size equal to the `kind` (min or max) of `candidates`
        (sizes only), made if new: `v_hi`/`v_lo`, or with a number to be unique."""
        for name, known in self.derived.items():
            if known == (kind, candidates):
                return name
        base = f"{v}_{'hi' if kind == 'min' else 'lo'}"
        taken = set(self.facts.symbols) | set(self.facts.size_params) | set(self.derived)
        taken |= {n for sf in self.facts.stmts for n in sf.first_use}
        name = base if base not in taken else next(f"{base}{k}" for k in range(2, 1000) if f"{base}{k}" not in taken)
        self.derived[name] = (kind, candidates)
        return name

    def solve(self, sub: Lin, v: str, ext: Lin, resolved: dict[str, Range],
              indices: set[str]) -> tuple[Lin | None, Lin, bool] | None:
        """Maximal [lo, hi) of `v` with 0 <= sub < ext for all resolved indices,
        and whether `a` is positive (then `sub >= 0` bounds `lo`, else `hi`);
        None when `sub` is not of the form `a * v + rest` (a an integer or an
        int times a size)."""
        coef_terms, rest_terms = [], []
        for mono, c in sub.terms:
            if any(isinstance(a, Div) and v in set(a.num.names()) for a in mono):
                return None
            count = mono.count(v)
            if count > 1:
                return None
            (coef_terms if count else rest_terms).append(
                (tuple(a for a in mono if a != v), c) if count else (mono, c))
        coef = Lin.make(coef_terms)
        rest = _rest_bounds(Lin.make(rest_terms), resolved, indices)
        if rest is None:
            return None
        rmin, rmax = rest
        a = coef.const_value
        if a is not None:
            den: int | str = abs(a)
            factor = 1
        elif len(coef.terms) == 1 and len(coef.terms[0][0]) == 1 \
                and isinstance(coef.terms[0][0][0], str) and coef.terms[0][0][0] not in indices:
            den = coef.terms[0][0][0]
            factor = abs(coef.terms[0][1])
            a = coef.terms[0][1]
        else:
            return None
        if a > 0:   # 0 <= a*v + rest <= ext - 1
            low_num, high_num = -rmin, ext - 1 - rmax
        else:       # 0 <= -|a|*v + rest <= ext - 1
            low_num, high_num = rmax - ext + 1, rmin
        lo = None if self.le(low_num, Lin.const(0)) else low_num.ceildiv(factor).ceildiv(den)
        return lo, high_num.floordiv(factor).floordiv(den) + 1, a > 0


def _rest_bounds(rest: Lin, resolved: dict[str, Range],
                 indices: set[str]) -> tuple[Lin, Lin] | None:
    """min and max of `rest` over the box of resolved index ranges (sizes are positive)."""
    return interval(rest, resolved, indices)


def _value(lin: Lin, sizes: list[str], loc: SourceLocation) -> A.Expr:
    """An int32 expression of sizes with the value of `lin`."""
    const = lin.const_value
    if const is not None:
        return A.Const(value=const, type="int32", loc=loc)
    expr = lin.to_affine((), sizes)
    assert expr is not None, lin
    return A.SizeRef(expr=expr, text=str(lin), loc=loc)


def _at_origin(
    e: A.Expr, shifts: dict[str, Lin], origins: dict[str, list[Lin]], sizes: list[str], guarded: set[int]
) -> A.Expr:
    """`e` with index `i` of `shifts` read as `i + shifts[i]` (the statement's
    LHS index now starts at 0), every subscript of a tensor of non-zero
    origin less that origin (see the module), and the ternaries of `guarded`
    (ids) marked so."""

    def rebuild(node: A.Expr) -> A.Expr:
        if isinstance(node, A.Ternary) and id(node) in guarded:
            return replace(node, c=rebuild(node.c), a=rebuild(node.a), b=rebuild(node.b), guarded=True)
        if isinstance(node, A.IndexVar) and node.name in shifts:
            offset = _value(shifts[node.name], sizes, node.loc)
            return A.Binary(op="+", a=node, b=offset, type="int32", loc=node.loc)
        if isinstance(node, A.Access):
            subscripts = [rebuild(sub) for sub in node.subscripts]
            for d, origin in enumerate(origins.get(node.tensor, [])):
                if origin.const_value != 0:
                    offset = _value(origin, sizes, node.loc)
                    subscripts[d] = A.Binary(op="-", a=subscripts[d], b=offset, type="int32", loc=node.loc)
            return replace(node, subscripts=subscripts)
        kids = {
            name: rebuild(getattr(node, name))
            for name in ("x", "a", "b", "c")
            if isinstance(getattr(node, name, None), A.Expr)
        }
        if isinstance(node, A.Call):
            return replace(node, args=[rebuild(arg) for arg in node.args])
        return replace(node, **kids) if kids else node

    return rebuild(e)


def _lin_expr(lin: Lin, sizes: list[str], loc: SourceLocation) -> A.Expr:
    """An int32 expression of indices and sizes with the value of `lin` (no divisions)."""
    total: A.Expr | None = None
    for mono, coefficient in lin.terms:
        term: A.Expr = A.Const(value=coefficient, type="int32", loc=loc)
        for atom in mono:
            assert isinstance(atom, str)
            factor = (
                _value(Lin.atom(atom), sizes, loc) if atom in sizes else A.IndexVar(name=atom, loc=loc)
            )
            term = A.Binary(op="*", a=term, b=factor, type="int32", loc=loc)
        total = term if total is None else A.Binary(op="+", a=total, b=term, type="int32", loc=loc)
    return total if total is not None else A.Const(value=0, type="int32", loc=loc)


def _counted_where(rhs: A.Expr, conditions: list[Lin], op: str, sizes: list[str], guarded: set[int]) -> A.Expr:
    """`rhs` where every condition is >= 0, the reduction's identity elsewhere
    (TC's min/max bounds of a reduction index), read only where it counts."""
    loc = rhs.loc
    test: A.Expr | None = None
    for condition in conditions:
        zero = A.Const(value=0, type="int32", loc=loc)
        check = A.Binary(op=">=", a=_lin_expr(condition, sizes, loc), b=zero, type="bool", loc=loc)
        test = check if test is None else A.Binary(op="&&", a=test, b=check, type="bool", loc=loc)
    assert test is not None
    kind = op.rstrip("!").rstrip("=")
    identity = _IDENTITY[kind] if rhs.type.startswith("float") else _int_identity(kind, rhs.type)
    ternary = A.Ternary(c=test, a=rhs, b=A.Const(value=identity, type=rhs.type, loc=loc), type=rhs.type, loc=loc)
    guarded.add(id(ternary))
    return ternary


_IDENTITY = {"+": 0.0, "*": 1.0, "min": float("inf"), "max": float("-inf")}


def _int_identity(kind: str, dtype: str) -> int | bool:
    if dtype == "bool":
        return kind in ("*", "min")
    least, greatest = int_limits(dtype)
    return {"+": 0, "*": 1, "min": greatest, "max": least}[kind]


def infer_ranges(src: Source, facts: DefFacts) -> A.CheckedDef:
    """Run range inference on a checked def and build the `CheckedDef`."""
    inference = RangeInference(src, facts)
    all_ranges = inference.run()
    sizes = [*facts.size_params, *inference.derived]

    def affine(lin: Lin | None) -> AffineExpr:
        assert lin is not None
        expr = lin.to_affine((), sizes)
        assert expr is not None, lin
        return expr

    def param(p_name: str, pos: int, is_scalar: bool = False) -> A.Param:
        dtype = facts.symbols[p_name].dtype if facts.symbols[p_name].dims is not None \
            else facts.dtypes[p_name]
        return A.Param(name=p_name, dtype=dtype, dims=[affine(d) for d in inference.shapes.get(p_name, [])],
                       loc=src.loc(pos), is_scalar=is_scalar)

    stmts = []
    for sf, ranges in zip(facts.stmts, all_ranges):
        st = sf.syntax
        shifts = {
            idx: origin
            for idx, origin in zip(sf.lhs_indices, inference.origins[sf.lhs])
            if origin.const_value != 0
        }
        ranges = {n: (lo - shifts[n], hi - shifts[n]) if n in shifts else (lo, hi) for n, (lo, hi) in ranges.items()}
        rhs = sf.rhs
        if inference.bounded.get(id(sf)):
            rhs = _counted_where(rhs, inference.bounded[id(sf)], st.op, sizes, inference.guarded)
        scatter = sf.scatter
        if shifts or inference.shifted or inference.guarded:
            rhs = _at_origin(rhs, shifts, inference.origins, sizes, inference.guarded)
            if scatter is not None:
                target = A.Access(tensor=sf.lhs, subscripts=scatter, type=rhs.type, loc=sf.loc)
                scatter = _at_origin(target, shifts, inference.origins, sizes, inference.guarded).subscripts
        stmts.append(A.Stmt(
            loc=sf.loc, lhs=sf.lhs, lhs_indices=sf.lhs_indices, op=st.op,
            reduction_indices=sf.reduction_indices,
            ranges={n: (affine(ranges[n][0]), affine(ranges[n][1])) for n in sf.first_use},
            rhs=rhs, where=[w.text for w in st.wheres], equivalent=st.equivalent, loop=sf.loop, scatter=scatter))
    inputs = [param(p.name, p.pos, facts.symbols[p.name].kind == "scalar") for p in facts.inputs]
    outputs = [param(p.name, p.pos) for p in facts.outputs]
    temps = [param(t, facts.symbols[t].pos) for t in facts.temporaries]
    return A.CheckedDef(name=facts.name, loc=facts.loc, size_params=list(sizes),
                        scalar_size_params=set(facts.scalar_size_params), inputs=inputs,
                        outputs=outputs, temporaries=temps, stmts=stmts,
                        size_checks=inference.size_checks,
                        derived_sizes=[A.DerivedSize(name=name, kind=kind, candidates=[affine(c) for c in cands])
                                       for name, (kind, cands) in inference.derived.items()])
