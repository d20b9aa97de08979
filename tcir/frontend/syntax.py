"""Parse tree of TC source: what was written, with offsets (before checking)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    """A parsed expression; `pos`/`length` locate its culprit token in the source."""

    pos: int
    length: int


@dataclass(frozen=True)
class Num(Node):
    """A numeric literal."""

    value: int | float
    is_float: bool


@dataclass(frozen=True)
class Name(Node):
    """A bare identifier: an index, size, scalar input or let."""

    name: str


@dataclass(frozen=True)
class Dim(Node):
    """`A.k`: the size of dimension k of tensor A."""

    tensor: str
    dim: int


@dataclass(frozen=True)
class Apply(Node):
    """`name(args)`: a tensor access, builtin call or cast."""

    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Unary(Node):
    """A prefix operator (`-`, `!`)."""

    op: str
    x: Node


@dataclass(frozen=True)
class Binary(Node):
    """A binary operator; `pos` is the operator's offset."""

    op: str
    a: Node
    b: Node


@dataclass(frozen=True)
class Ternary(Node):
    """`c ? a : b`; `pos` is the offset of `?`."""

    c: Node
    a: Node
    b: Node


@dataclass(frozen=True)
class WhereRange(Node):
    """`where i in lo:hi`."""

    name: str
    lo: Node
    hi: Node
    text: str


@dataclass(frozen=True)
class WhereLet(Node):
    """`where x = expr`."""

    name: str
    expr: Node
    text: str


@dataclass(frozen=True)
class WhereExists(Node):
    """`where exists expr`."""

    expr: Node
    text: str


Where = WhereRange | WhereLet | WhereExists


@dataclass(frozen=True)
class Loop(Node):
    """`for name in lo:hi { ... }` around statements; `pos` is the name."""

    name: str
    lo: Node
    hi: Node
    text: str


@dataclass(frozen=True)
class Statement(Node):
    """`lhs(args) op rhs [<=> equivalent] [where ...]`; `pos` is the LHS name.
    A statement of a `for` loop has its `loop`, and the loop's range among
    its `wheres`."""

    lhs: str
    args: tuple[Node, ...]
    op: str
    op_pos: int
    rhs: Node
    equivalent: str | None
    wheres: tuple[Where, ...]
    loop: Loop | None = None


@dataclass(frozen=True)
class TensorType:
    """`type(dims)`; dims is None for a scalar, each a Name or Num."""

    pos: int
    dtype: str
    dims: tuple[Name | Num, ...] | None


@dataclass(frozen=True)
class Param(Node):
    """An input `type name`, or an output `name` / `type name` (type None if inferred)."""

    name: str
    type: TensorType | None


@dataclass(frozen=True)
class Def(Node):
    """`def name(inputs) -> (outputs) { statements }`; `pos` is the name."""

    name: str
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    stmts: tuple[Statement, ...]
