"""The checked AST: typed, with inferred ranges and shapes (the frontend's output).

Conventions:
- Types are canonical scalar type names ("float32", "int32", "bool", ...).
- Sizes are xDSL `AffineExpr`s whose `AffineSymExpr(k)` is `CheckedDef.size_params[k]`;
  bounds may be semi-affine (floordiv by an int scalar size parameter).
- Every implicit conversion is an explicit `Cast`: operands of a `Binary` have the
  same type (the result type for arithmetic, bool for `&&`/`||`), conditions are bool,
  and a statement's `rhs` has the type of the assigned tensor.
- Index variables are int32 (`IndexVar.type`), and so are sizes used as values (`SizeRef`).
- `where x = e` lets are inlined (the same `Expr` object may occur several times).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir.affine import AffineExpr

from tcir.errors import SourceLocation

from .linear import Lin, format_affine


@dataclass(frozen=True, kw_only=True)
class Expr:
    """A typed expression; `type` is its scalar type, `loc` where it was written."""

    type: str
    loc: SourceLocation


@dataclass(frozen=True, kw_only=True)
class Const(Expr):
    """A literal: int literals are int32, literals with `.` or an exponent are float32."""

    value: int | float | bool


@dataclass(frozen=True, kw_only=True)
class IndexVar(Expr):
    """An index variable (always int32)."""

    name: str
    type: str = "int32"


@dataclass(frozen=True, kw_only=True)
class ScalarParam(Expr):
    """A 0-d scalar input, by name."""

    name: str


@dataclass(frozen=True, kw_only=True)
class SizeRef(Expr):
    """A size used as a value (`M` or `A.0`): `expr` over the def's size parameters (int32)."""

    expr: AffineExpr
    text: str
    type: str = "int32"


@dataclass(frozen=True, kw_only=True)
class Access(Expr):
    """`tensor(subscripts)`: a read of an input, output or temporary element."""

    tensor: str
    subscripts: list[Expr]


@dataclass(frozen=True, kw_only=True)
class Unary(Expr):
    """`-x` (operand of the result type) or `!x` (bool operand)."""

    op: str
    x: Expr


@dataclass(frozen=True, kw_only=True)
class Binary(Expr):
    """`a op b`: `+ - * / %` (C semantics, `/` truncates on integers), comparisons
    `== != < <= > >=` (result bool), and `&& ||` (bool operands)."""

    op: str
    a: Expr
    b: Expr


@dataclass(frozen=True, kw_only=True)
class Ternary(Expr):
    """`c ? a : b` with a bool condition; `a` and `b` have the result type.
    `guarded`: a branch reads a tensor in bounds only where it is taken
    (`rf - D >= 0 ? Data(rf - D) : 0`), so only the branch taken may run."""

    c: Expr
    a: Expr
    b: Expr
    guarded: bool = False


@dataclass(frozen=True, kw_only=True)
class Call(Expr):
    """A builtin call; `name` has no `f` suffix (`fmaxf` -> `fmax`). Arguments have the
    result type: the promoted argument type, integers promoted to float32 except for
    `min`/`max`; the `f`-suffixed forms compute in float32."""

    name: str
    args: list[Expr]


@dataclass(frozen=True, kw_only=True)
class Cast(Expr):
    """A conversion of `x` to `type` (written `type(x)`, or implicit)."""

    x: Expr


@dataclass(frozen=True, kw_only=True)
class Param:
    """An input, output or temporary tensor: `dims` over size params, `[]` if 0-d."""

    name: str
    dtype: str
    dims: list[AffineExpr]
    loc: SourceLocation
    is_scalar: bool = False


REDUCTION_OPS = ("+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!")


@dataclass(frozen=True, kw_only=True)
class Loop:
    """A `for` loop whose steps run in order (a recurrence: `tcir.frontend.loops`):
    its statements share the `label`, and `index`, one of their left-hand
    side indices, numbers the steps."""

    label: str
    index: str


@dataclass(frozen=True, kw_only=True)
class Stmt:
    """One comprehension `lhs(lhs_indices) op rhs`, with ranges of all its indices.

    Semantics (TC's `semantics.rst`): `op=!` first fills the written range of
    `lhs` with the operator's identity, then accumulates; `op=` accumulates
    into the current contents, also without reduction indices (`O(i) += A(i)`
    adds to what `O` holds; `op=!` without reduction indices acts as `=`).
    The reference loop order is `loop_order`: LHS indices outer, reduction inner.
    `ranges[i] = (lo, hi)` is half-open over the size parameters.

    A scatter (`gE(I(b), d) += gO(b, d)`) writes at `scatter`, the left-hand
    side's subscripts (any integer expressions); it has no LHS indices (all
    of its indices are reduction indices) and accumulates (`+=`, `+=!`):
    several instances may update one element. `+=!` first fills the whole
    tensor with 0.
    """

    loc: SourceLocation
    lhs: str
    lhs_indices: list[str]
    op: str
    reduction_indices: list[str]
    ranges: dict[str, tuple[AffineExpr, AffineExpr]]
    rhs: Expr
    where: list[str] = field(default_factory=list)
    equivalent: str | None = None
    loop: Loop | None = None
    """The stepped loop the statement belongs to: each step of `loop.index`
    runs the loop's statements in order (the other indices in parallel)."""
    scatter: list[Expr] | None = None

    @property
    def reduces(self) -> bool:
        """Whether this statement reduces (a reduction operator and reduction indices)."""
        return self.op != "=" and bool(self.reduction_indices)

    @property
    def initializes(self) -> bool:
        """Whether the written range is first filled with the identity (`op=!`)."""
        return self.op.endswith("!")

    @property
    def reduction_kind(self) -> str | None:
        """"+", "*", "min" or "max" for a reduction operator, None for `=`."""
        return None if self.op == "=" else self.op.rstrip("!").rstrip("=")

    @property
    def effective_op(self) -> str:
        """The operator to apply: `op`, or "=" for `op=!` without reduction indices."""
        return "=" if self.initializes and not self.reduction_indices else self.op

    @property
    def scatter_target(self) -> Access | None:
        """A scatter's left-hand side as an access (its subscripts are checked
        like a read's), None for a statement that is no scatter."""
        if self.scatter is None:
            return None
        return Access(tensor=self.lhs, subscripts=self.scatter, type=self.rhs.type, loc=self.loc)

    @property
    def loop_order(self) -> list[str]:
        """Reference loop nest order: LHS indices, then reduction indices."""
        return [*self.lhs_indices, *self.reduction_indices]


@dataclass(frozen=True, kw_only=True)
class SizeCheck:
    """A bounds condition that holds for some sizes only, checked when they are
    bound: the sizes are wrong where they lie in `bad` (isl set text over the
    placeholders of `names`, which maps each to its size)."""

    bad: str
    names: dict[str, str]
    message: str
    loc: SourceLocation
    derived: dict[str, Lin] = field(default_factory=dict[str, Lin])
    """Placeholders of `bad` for what isl cannot express (`N * N`), by value."""
    deferred: tuple[Lin, Lin, tuple[tuple[str, Lin, Lin], ...], tuple[Lin, ...]] | None = None
    """Instead of `bad`, for a subscript that is affine only once the sizes
    are known (a scalar input times an index, `sh * h`): the subscript, the
    extent, each index's range and the conditions the read is made under,
    checked when the sizes are bound."""


@dataclass(frozen=True, kw_only=True)
class DerivedSize:
    """A size that the call computes from the others: the `kind` ("min" or
    "max") of `candidates` (over the size parameters before it), for a range
    bound TC infers as a min or max of sizes (`O2(j) +=! B(j) + A(i, j)`:
    `O2` has `min(B_0, A_1)` elements)."""

    name: str
    kind: str
    candidates: list[AffineExpr]


@dataclass(frozen=True, kw_only=True)
class CheckedDef:
    """A parsed, checked TC function with inferred ranges and shapes.

    `size_params` are the inputs' symbolic sizes in order of first appearance, then
    the int scalar inputs used in subscripts or ranges (also in `scalar_size_params`).
    `temporaries` are tensors written but not listed as outputs.
    """

    name: str
    loc: SourceLocation
    size_params: list[str]
    scalar_size_params: set[str]
    inputs: list[Param]
    outputs: list[Param]
    temporaries: list[Param]
    stmts: list[Stmt]
    size_checks: list[SizeCheck] = field(default_factory=list)
    """Subscripts in bounds only for some sizes (see `SizeCheck`)."""
    derived_sizes: list[DerivedSize] = field(default_factory=list)
    """Sizes (last in `size_params`) computed from the others when they are bound."""

    @property
    def given_size_params(self) -> list[str]:
        """The size parameters that the inputs give (all but the derived ones)."""
        derived = {d.name for d in self.derived_sizes}
        return [n for n in self.size_params if n not in derived]

    def tensor(self, name: str) -> Param:
        """The input, output or temporary called `name` (KeyError if none)."""
        for p in (*self.inputs, *self.outputs, *self.temporaries):
            if p.name == name:
                return p
        raise KeyError(name)

    def format(self, expr: AffineExpr, dims: list[str] | None = None) -> str:
        """`expr` printed with the size names (and `dims` for d0, d1, ...)."""
        return format_affine(expr, dims or [], self.size_params)

    def shape_str(self, name: str) -> str:
        """The shape of tensor `name` as text, e.g. `(M - N + 1)`."""
        return "(" + ", ".join(self.format(d) for d in self.tensor(name).dims) + ")"
