"""Recursive-descent parser: TC text -> parse tree (`syntax`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from tcir.errors import ParseError, did_you_mean

from . import syntax as S
from .dtypes import SCALAR_TYPES
from .lexer import KEYWORDS, Token, tokenize
from .source import Source

T = TypeVar("T")

#: Deepest expression tree accepted; deeper input is a ParseError, never a RecursionError.
MAX_DEPTH = 100

_ASSIGN_OPS = ("=", "+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!")
# Binary operators by precedence level, lowest first.
_LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))
_PRECEDENCE = {op: level for level, ops in enumerate(_LEVELS) for op in ops}


class Parser:
    """Parses a whole TC source into a tuple of `syntax.Def`."""

    def __init__(self, src: Source):
        self.src = src
        self.toks = tokenize(src)
        self.i = 0
        self._depth: dict[int, int] = {}
        self.nest = 0

    # -- token helpers -------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def error(self, message: str, tok: Token | None = None, hint: str = "") -> ParseError:
        tok = tok or self.tok
        what = "end of input" if tok.kind == "eof" else f"'{tok.text}'"
        err = self.src.error(ParseError, f"{message}, found {what}{hint}", tok.pos, len(tok.text))
        assert isinstance(err, ParseError)
        return err

    def next(self) -> Token:
        tok = self.tok
        if tok.kind != "eof":
            self.i += 1
        return tok

    def accept(self, kind: str) -> Token | None:
        return self.next() if self.tok.kind == kind else None

    def expect(self, kind: str, what: str | None = None) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what or repr(kind)}")
        return self.next()

    def is_word(self, word: str) -> bool:
        return self.tok.kind == "id" and self.tok.text == word

    def name(self, what: str = "an identifier", digit_first: bool = False) -> Token:
        """An identifier; only a def's name (`2LUT`) may start with a digit."""
        tok = self.tok
        if tok.kind != "id":
            raise self.error(f"expected {what}")
        if tok.text in KEYWORDS or tok.text in SCALAR_TYPES:
            err = self.src.error(ParseError, f"expected {what}, but '{tok.text}' is a reserved word",
                                 tok.pos, len(tok.text))
            assert isinstance(err, ParseError)
            raise err
        if not digit_first:
            self.check_not_number(tok)
        return self.next()

    def check_not_number(self, tok: Token) -> None:
        """`1e40i`, `2abc`: digits followed by letters are no number, and no
        name but a def's may start with a digit."""
        if tok.text[0].isdigit():
            err = self.src.error(ParseError, f"invalid number '{tok.text[:20]}': letters follow the digits",
                                 tok.pos, len(tok.text))
            assert isinstance(err, ParseError)
            raise err

    # -- definitions ---------------------------------------------------------------
    def parse(self) -> tuple[S.Def, ...]:
        defs = []
        while self.tok.kind != "eof":
            defs.append(self.definition())
        return tuple(defs)

    def definition(self) -> S.Def:
        if not self.is_word("def"):
            raise self.error("expected 'def'")
        self.next()
        name = self.name("a function name", digit_first=True)
        self.expect("(")
        inputs = self.comma_list(")", self.input_param)
        self.expect("->")
        self.expect("(")
        outputs = self.comma_list(")", self.output_param)
        if not outputs:
            raise self.error("expected at least one output", self.toks[self.i - 1])
        self.expect("{")
        stmts: list[S.Statement] = []
        while self.tok.kind != "}":
            if self.is_loop():
                stmts += self.loop()
            else:
                stmts.append(self.statement())
        self.next()
        return S.Def(name.pos, len(name.text), name.text, inputs, outputs, tuple(stmts))

    def is_loop(self) -> bool:
        """`for t in ...` (`for` is a name elsewhere: `for(i) = ...`)."""
        ahead = self.toks[self.i + 1 : self.i + 3]
        return (
            self.is_word("for")
            and len(ahead) == 2
            and ahead[0].kind == "id"
            and ahead[1].kind == "id"
            and ahead[1].text == "in"
        )

    def loop(self) -> list[S.Statement]:
        """`for t in lo:hi { statements }`: the statements, each with the loop
        and `t in lo:hi` among its where clauses (see `tcir.frontend.loops`)."""
        start = self.next().pos
        name = self.name("a loop index")
        self.next()  # `in`
        lo = self.binary(0)
        self.expect(":", "':' in range")
        hi = self.binary(0)
        text = self.text_from(start)
        opening = self.expect("{", "'{' after the loop range")
        loop = S.Loop(name.pos, len(name.text), name.text, lo, hi, text)
        where = S.WhereRange(name.pos, len(name.text), name.text, lo, hi, text.removeprefix("for "))
        stmts: list[S.Statement] = []
        while not self.accept("}"):
            if self.tok.kind == "eof":
                self.expect_closing("}", "'}' closing the loop", opening)
            if self.is_loop():
                raise self.error("nested 'for' loops are not supported")
            stmt = self.statement()
            stmts.append(replace(stmt, wheres=(*stmt.wheres, where), loop=loop))
        if not stmts:
            raise self.error("expected a statement in the 'for' loop", self.toks[self.i - 1])
        return stmts

    def comma_list(self, close: str, item: Callable[[], T]) -> tuple[T, ...]:
        """Items up to `close`, just after the token that opened the list."""
        opening = self.toks[self.i - 1]
        items: list[T] = []
        if self.accept(close):
            return tuple(items)
        while True:
            items.append(item())
            if self.accept(close):
                return tuple(items)
            self.expect_closing(",", f"',' or '{close}'", opening)

    def expect_closing(self, kind: str, what: str, opening: Token) -> Token:
        """`expect`, noting where the bracket still open was opened."""
        try:
            return self.expect(kind, what)
        except ParseError as error:
            assert opening.kind in ("(", "{")
            raise error.note(f"to match this '{opening.kind}'", self.src.loc(opening.pos)) from None

    def tensor_type(self) -> S.TensorType:
        tok = self.tok
        if tok.kind != "id" or tok.text not in SCALAR_TYPES:
            hint = did_you_mean(tok.text, SCALAR_TYPES) if tok.kind == "id" else ""
            raise self.error(f"expected a scalar type ({', '.join(SCALAR_TYPES)})", hint=hint)
        self.next()
        dims = None
        if self.accept("("):
            dims = self.comma_list(")", self.dim)
        return S.TensorType(tok.pos, SCALAR_TYPES[tok.text], dims)

    def dim(self) -> S.Name | S.Num:
        tok = self.tok
        if tok.kind == "int":
            self.next()
            assert isinstance(tok.value, int)
            return S.Num(tok.pos, len(tok.text), tok.value, False)
        tok = self.name("a size name or an integer")
        return S.Name(tok.pos, len(tok.text), tok.text)

    def input_param(self) -> S.Param:
        ty = self.tensor_type()
        name = self.name("an input name")
        return S.Param(name.pos, len(name.text), name.text, ty)

    def output_param(self) -> S.Param:
        ty = None
        if self.tok.kind == "id" and self.tok.text in SCALAR_TYPES:
            ty = self.tensor_type()
        name = self.name("an output name")
        return S.Param(name.pos, len(name.text), name.text, ty)

    # -- statements ----------------------------------------------------------------
    def statement(self) -> S.Statement:
        lhs = self.name("a statement (tensor name) or '}'")
        args: tuple[S.Node, ...] = ()
        if self.tok.kind not in _ASSIGN_OPS:  # `O +=! A(i)`: a 0-d tensor needs no `()`
            self.expect("(", "'(' or an assignment operator after the assigned tensor")
            args = self.comma_list(")", self.expr)
        op = self.tok
        if op.kind not in _ASSIGN_OPS:
            raise self.error("expected an assignment operator (=, +=, +=!, ...)")
        self.next()
        self.check_one_for_bang(op)
        rhs = self.expr()
        equivalent = None
        if self.tok.kind == "<=>":
            self.next()
            start = self.tok.pos
            self.expr()
            equivalent = self.text_from(start)
        wheres: list[S.Where] = []
        if self.is_word("where"):
            self.next()
            wheres.append(self.where())
            while self.accept(","):
                wheres.append(self.where())
        return S.Statement(lhs.pos, len(lhs.text), lhs.text, args, op.kind, op.pos, rhs,
                           equivalent, tuple(wheres))

    def check_one_for_bang(self, op: Token) -> None:
        """`B(i) +=1 A(i, j)`: a `1` right after a reduction operator and
        followed by more of the line is `+=!` mistyped (else the `1` is the
        right-hand side and `A(i, j)` starts a statement without operator)."""
        one, after = self.tok, self.toks[min(self.i + 1, len(self.toks) - 1)]
        if (
            op.kind in ("+=", "*=", "min=", "max=")
            and one.kind == "int" and one.text == "1" and one.pos == op.pos + len(op.text)
            and after.kind in ("id", "(", "int", "float") and after.text not in KEYWORDS
            and self.src.loc(after.pos).line == self.src.loc(one.pos).line
        ):
            err = self.src.error(ParseError, f"'{op.text}1' is not an operator; did you mean '{op.text}!'?", one.pos)
            assert isinstance(err, ParseError)
            raise err

    def text_from(self, start: int) -> str:
        end = self.toks[self.i - 1]
        return self.src.text[start:end.pos + len(end.text)]

    def where(self) -> S.Where:
        start = self.tok.pos
        if self.is_word("exists"):
            self.next()
            e = self.expr()
            return S.WhereExists(start, len("exists"), e, self.text_from(start))
        name = self.name("an index name or 'exists'")
        if self.accept("="):
            e = self.expr()
            return S.WhereLet(name.pos, len(name.text), name.text, e, self.text_from(start))
        if not self.is_word("in"):
            raise self.error("expected 'in' or '='")
        self.next()
        lo = self.binary(0)
        self.expect(":", "':' in range")
        hi = self.binary(0)
        return S.WhereRange(name.pos, len(name.text), name.text, lo, hi, self.text_from(start))

    # -- expressions ---------------------------------------------------------------
    def made(self, node: S.Node, *children: S.Node) -> S.Node:
        depth = 1 + max((self._depth.get(id(c), 1) for c in children), default=0)
        if depth > MAX_DEPTH:
            raise self.src.error(ParseError, f"expression nested too deeply (over {MAX_DEPTH} levels)",
                                 node.pos, node.length)
        self._depth[id(node)] = depth
        return node

    def expr(self) -> S.Node:
        self.nest += 1
        try:
            if self.nest > MAX_DEPTH:
                raise self.src.error(ParseError,
                                     f"expression nested too deeply (over {MAX_DEPTH} levels)",
                                     self.tok.pos, len(self.tok.text))
            c = self.binary(0)
            if self.tok.kind != "?":
                return c
            q = self.next()
            a = self.expr()
            self.expect(":", "':' of '?:'")
            b = self.expr()
            return self.made(S.Ternary(q.pos, 1, c, a, b), c, a, b)
        finally:
            self.nest -= 1

    def binary(self, min_level: int) -> S.Node:
        """Precedence climbing over the left-associative binary operators."""
        a = self.unary()
        while (level := _PRECEDENCE.get(self.tok.kind)) is not None and level >= min_level:
            op = self.next()
            b = self.binary(level + 1)
            a = self.made(S.Binary(op.pos, len(op.text), op.kind, a, b), a, b)
        return a

    def unary(self) -> S.Node:
        if self.tok.kind not in ("-", "!"):
            return self.primary()
        op = self.next()
        self.nest += 1
        try:
            if self.nest > MAX_DEPTH:
                raise self.src.error(ParseError,
                                     f"expression nested too deeply (over {MAX_DEPTH} levels)",
                                     op.pos, 1)
            x = self.unary()
        finally:
            self.nest -= 1
        return self.made(S.Unary(op.pos, 1, op.kind, x), x)

    def primary(self) -> S.Node:
        tok = self.tok
        if tok.kind in ("int", "float"):
            self.next()
            assert tok.value is not None
            return S.Num(tok.pos, len(tok.text), tok.value, tok.kind == "float")
        opening = self.accept("(")
        if opening:
            e = self.expr()
            self.expect_closing(")", "')'", opening)
            return e
        if tok.kind != "id" or tok.text in KEYWORDS:
            raise self.error("expected an expression")
        self.check_not_number(tok)
        self.next()
        if self.accept("("):
            args = self.comma_list(")", self.expr)
            return self.made(S.Apply(tok.pos, len(tok.text), tok.text, args), *args)
        if tok.text in SCALAR_TYPES:
            raise self.error(f"expected '(' after type '{tok.text}' (a cast)")
        if self.tok.kind == "." and self.toks[self.i + 1].kind == "int":
            self.next()
            num = self.next()
            assert isinstance(num.value, int)
            return S.Dim(tok.pos, num.pos + len(num.text) - tok.pos, tok.text, num.value)
        return S.Name(tok.pos, len(tok.text), tok.text)


def parse_source(src: Source) -> tuple[S.Def, ...]:
    """Parse all defs of `src`; raises ParseError."""
    return Parser(src).parse()
