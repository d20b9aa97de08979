"""Readable syntax for affine expressions over SSA values and named sizes.

TC sizes are symbolic names (`M`, `K`), so tcir prints affine expressions the
way a TC user writes them: `%i + %x`, `M - N + 1`, `2 * %h + %kh`,
`(H - 2) floordiv 2 + 1`. SSA values are the dimensions of the expression (in
order of first appearance), size names its symbols. xDSL's affine parser only
knows `d0`/`s0` maps, hence this small hand-written one.

Products of two non-constant terms (`sh * %h`, from int scalar inputs used as
strides) are kept as semi-affine expressions; they become affine once the
sizes are specialized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from tcir.ir.affine import binary, mul

_DIV_KEYWORDS = {
    "floordiv": AffineBinaryOpKind.FloorDiv,
    "ceildiv": AffineBinaryOpKind.CeilDiv,
    "mod": AffineBinaryOpKind.Mod,
}


class AffineExprParser:
    """Parses one named affine expression at a time, collecting its operands.

    `symbols` (size names) and `operands` (SSA values) grow as new names are
    met, so several expressions parsed with one instance share their lists.
    """

    def __init__(self, parser: Parser, allow_operands: bool = True):
        self.parser = parser
        self.allow_operands = allow_operands
        self.symbols: list[str] = []
        self.operands: list[UnresolvedOperand] = []

    def parse(self) -> AffineExpr:
        """expr ::= ['-'] term (('+' | '-') term)*"""
        negate = self.parser.parse_optional_punctuation("-") is not None
        expr = self._term()
        if negate:
            expr = -expr
        while True:
            if self.parser.parse_optional_punctuation("+"):
                expr = expr + self._term()
            elif self.parser.parse_optional_punctuation("-"):
                expr = expr - self._term()
            else:
                return expr

    def _term(self) -> AffineExpr:
        """term ::= factor (('*' | 'floordiv' | 'ceildiv' | 'mod') factor)*"""
        expr = self._factor()
        while True:
            if self.parser.parse_optional_punctuation("*"):
                expr = mul(expr, self._factor())
                continue
            keyword = self.parser.parse_optional_keyword_in(_DIV_KEYWORDS)
            if keyword is None:
                return expr
            pos = self.parser.pos
            try:
                expr = binary(_DIV_KEYWORDS[keyword], expr, self._factor())
            except ValueError as e:
                self.parser.raise_error(str(e), pos, self.parser.pos)

    def _factor(self) -> AffineExpr:
        parser = self.parser
        if parser.parse_optional_punctuation("("):
            expr = self.parse()
            parser.parse_punctuation(")")
            return expr
        if parser.parse_optional_punctuation("-"):
            return -self._factor()
        if (value := parser.parse_optional_integer(allow_boolean=False)) is not None:
            return AffineExpr.constant(value)
        if self.allow_operands and (
            operand := parser.parse_optional_unresolved_operand()
        ):
            names = [(o.operand_name, o.index) for o in self.operands]
            key = (operand.operand_name, operand.index)
            if key not in names:
                self.operands.append(operand)
                names.append(key)
            return AffineExpr.dimension(names.index(key))
        name = parser.parse_optional_identifier()
        if name is None:
            parser.raise_error("expected an affine expression")
        if name not in self.symbols:
            self.symbols.append(name)
        return AffineExpr.symbol(self.symbols.index(name))


def resolve_defined(parser: Parser, operand: UnresolvedOperand) -> SSAValue:
    """The already defined SSA value named by `operand`, whatever its type.

    Subscript operands are always defined before use, and their types are not
    printed, so they are looked up by name rather than resolved against a type.
    """
    values = parser.ssa_values.get(operand.operand_name)
    if values is None or operand.index >= len(values):
        parser.raise_error(
            f"use of undefined value %{operand.operand_name}", operand.span
        )
    return values[operand.index]


Piece = str | AffineDimExpr
"""Rendered text: literal strings and the dims to be named by the caller."""


def pieces(expr: AffineExpr, sym: Callable[[int], str]) -> list[Piece]:
    """The readable rendering of `expr` as text pieces and dims."""
    out: list[Piece] = []
    for i, term in enumerate(_terms(expr)):
        negative, magnitude = _split_sign(term)
        if i == 0:
            out.append("-" if negative else "")
        else:
            out.append(" - " if negative else " + ")
        _product(magnitude, sym, out)
    return out


def render(
    expr: AffineExpr, dim: Callable[[int], str], sym: Callable[[int], str]
) -> str:
    """The readable text of `expr`, naming dims and symbols through callbacks."""
    return "".join(
        p if isinstance(p, str) else dim(p.position) for p in pieces(expr, sym)
    )


def print_affine(
    printer: Printer,
    expr: AffineExpr,
    operands: Sequence[SSAValue],
    symbols: Sequence[str],
) -> None:
    """Print `expr`, its dims named as the printer names `operands`."""
    for piece in pieces(expr, symbols.__getitem__):
        if isinstance(piece, str):
            printer.print_string(piece)
        else:
            printer.print_ssa_value(operands[piece.position])


def _terms(expr: AffineExpr) -> list[AffineExpr]:
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.Add:
        return _terms(expr.lhs) + _terms(expr.rhs)
    return [expr]


def _split_sign(term: AffineExpr) -> tuple[bool, AffineExpr]:
    if isinstance(term, AffineConstantExpr) and term.value < 0:
        return True, AffineExpr.constant(-term.value)
    if (
        isinstance(term, AffineBinaryOpExpr)
        and term.kind == AffineBinaryOpKind.Mul
        and isinstance(term.rhs, AffineConstantExpr)
        and term.rhs.value < 0
    ):
        return True, mul(term.lhs, AffineExpr.constant(-term.rhs.value))
    return False, term


def _product(expr: AffineExpr, sym: Callable[[int], str], out: list[Piece]) -> None:
    match expr:
        case AffineConstantExpr(value=value):
            out.append(str(value))
        case AffineDimExpr():
            out.append(expr)
        case AffineSymExpr(position=position):
            out.append(sym(position))
        case AffineBinaryOpExpr(kind=AffineBinaryOpKind.Add):
            out.append("(")
            out.extend(pieces(expr, sym))
            out.append(")")
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            if kind == AffineBinaryOpKind.Mul and isinstance(rhs, AffineConstantExpr):
                lhs, rhs = rhs, lhs
            _product(lhs, sym, out)
            out.append(f" {kind.get_token()} ")
            if isinstance(rhs, AffineBinaryOpExpr):
                out.append("(")
                out.extend(pieces(rhs, sym))
                out.append(")")
            else:
                _product(rhs, sym, out)
        case _:
            raise AssertionError(f"unknown affine expression {expr}")
