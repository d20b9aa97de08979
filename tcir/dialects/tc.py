"""The `tc` dialect: Tensor Comprehensions after range inference.

A `tc.def` is one TC function. Its block arguments are the inputs then the
outputs, tensors typed `!tc.tensor<f32, [M, K]>` (sizes are affine expressions
in size names, or constants once specialized) or scalars typed by builtin
types. Each TC statement is a `tc.comprehension` whose region computes the
right-hand side for one point of the iteration space: `tc.read` ops read
tensor elements, xDSL's `arith`/`math` ops compute, `tc.yield` gives the value
that the comprehension's assignment kind combines into the left-hand side.

    tc.def @conv1d(%I: !tc.tensor<f32, [M]>, %K: !tc.tensor<f32, [N]>)
        -> (%O: !tc.tensor<f32, [M - N + 1]>) {
      tc.comprehension %O[%i] "+=!" (%i in [0, M - N + 1), %x in [0, N)) {
        %0 = tc.read %K[%x]
        %1 = tc.read %I[%i + %x]
        %2 = arith.mulf %0, %1 : f32
        tc.yield %2 : f32
      }
    }

Size names are the symbolic sizes of the input tensors plus the integer scalar
inputs (which TC allows in subscripts, e.g. strides); every size name used
inside a def must be one of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import groupby

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.ir.affine import AffineExpr, AffineMap, AffineSymExpr
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from tcir.ir.affine_syntax import (
    AffineExprParser,
    print_affine,
    render,
    resolve_defined,
)

ASSIGNMENT_KINDS = ("=", "+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!")
"""TC's assignment operators; a trailing `!` first fills with the identity."""


def _symbol_names(names: Sequence[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr(StringAttr(n) for n in names)


def _parse_affine_list(
    parser: AttrParser | Parser, allow_operands: bool
) -> tuple[list[AffineExpr], AffineExprParser]:
    exprs = AffineExprParser(parser, allow_operands)  # pyright: ignore[reportArgumentType]
    results = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, exprs.parse)
    return results, exprs


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """A tensor of `element_type` whose sizes are affine in named sizes.

    `!tc.tensor<f32, [M, K]>`, `!tc.tensor<f32, [M - N + 1]>`,
    `!tc.tensor<f32, [128, 32]>`; a 0-d tensor is `!tc.tensor<f32, []>`.
    Integer element types keep TC's signedness (`ui8`); the values read from
    such a tensor are signless (`i8`), as `arith` requires.
    """

    name = "tc.tensor"

    element_type: Attribute
    shape: AffineMapAttr
    symbols: ArrayAttr[StringAttr]

    def __init__(
        self,
        element_type: Attribute,
        dims: Sequence[AffineExpr | int],
        symbols: Sequence[str] = (),
    ):
        exprs = tuple(AffineExpr.constant(d) if isinstance(d, int) else d for d in dims)
        shape = AffineMapAttr(AffineMap(0, len(symbols), exprs))
        super().__init__(element_type, shape, _symbol_names(symbols))

    @property
    def rank(self) -> int:
        return len(self.shape.data.results)

    @property
    def dims(self) -> tuple[AffineExpr, ...]:
        """Size of each dimension, with `AffineSymExpr(k)` = `symbol_names[k]`."""
        return self.shape.data.results

    @property
    def symbol_names(self) -> list[str]:
        return [s.data for s in self.symbols]

    @property
    def scalar_type(self) -> Attribute:
        """The type of one element as computed on: signless for integers."""
        if isinstance(self.element_type, IntegerType):
            return IntegerType(self.element_type.width.data)
        return self.element_type

    def static_shape(self) -> tuple[int, ...] | None:
        """The constant sizes, or None while some size is symbolic."""
        if self.symbols.data:
            return None
        return tuple(self.shape.data.eval([], []))

    def dim_text(self, i: int) -> str:
        """Size of dimension `i` as TC text, e.g. `M - N + 1`."""
        return render(self.dims[i], str, self.symbol_names.__getitem__)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        element_type = parser.parse_type()
        parser.parse_punctuation(",")
        dims, exprs = _parse_affine_list(parser, allow_operands=False)
        parser.parse_punctuation(">")
        shape = AffineMapAttr(AffineMap(0, len(exprs.symbols), tuple(dims)))
        return [element_type, shape, _symbol_names(exprs.symbols)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            printer.print_string(", [")
            printer.print_list(
                self.dims,
                lambda d: print_affine(printer, d, (), self.symbol_names),
            )
            printer.print_string("]")

    def verify(self) -> None:
        if isinstance(self.element_type, TensorType):
            raise VerifyException("tc.tensor elements must be scalars")
        if self.shape.data.num_dims != 0:
            raise VerifyException("tc.tensor sizes cannot depend on dimensions")


def _def_of(op: Operation) -> DefOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, DefOp):
        parent = parent.parent_op()
    return parent


def _verify_sizes(op: Operation, names: Sequence[str], what: str) -> None:
    definition = _def_of(op)
    if definition is None:
        return
    known = definition.size_names()
    for name in names:
        if name not in known:
            raise VerifyException(
                f"{what} uses unknown size '{name}' (sizes of "
                f"@{definition.sym_name.data}: {', '.join(known) or 'none'})"
            )


@irdl_op_definition
class DefOp(IRDLOperation):
    """One TC function: `tc.def @name(inputs) -> (outputs) { statements }`.

    The body block's arguments are the inputs then the outputs; `arg_names`
    keeps their TC names (scalar inputs may be used as sizes by name).
    """

    name = "tc.def"

    sym_name = prop_def(SymbolNameConstraint())
    num_inputs = prop_def(IntAttr)
    arg_names = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), NoTerminator())

    def __init__(
        self,
        name: str,
        inputs: Sequence[tuple[str, Attribute]],
        outputs: Sequence[tuple[str, Attribute]],
        body: Region | None = None,
    ):
        arguments = [*inputs, *outputs]
        if body is None:
            body = Region(Block(arg_types=[t for _, t in arguments]))
        for arg, (arg_name, _) in zip(body.block.args, arguments):
            arg.name_hint = arg_name
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "num_inputs": IntAttr(len(inputs)),
                "arg_names": _symbol_names([n for n, _ in arguments]),
            },
            regions=[body],
        )

    @property
    def inputs(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args[: self.num_inputs.data]

    @property
    def outputs(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args[self.num_inputs.data :]

    @property
    def names(self) -> list[str]:
        """TC names of the inputs then the outputs."""
        return [n.data for n in self.arg_names]

    def size_names(self) -> list[str]:
        """Size parameters: input tensors' size names, then integer scalars."""
        names: list[str] = []
        for arg in self.inputs:
            if isinstance(arg.type, TensorType):
                names += [n for n in arg.type.symbol_names if n not in names]
        for arg, name in zip(self.inputs, self.names):
            if isinstance(arg.type, IntegerType) and name not in names:
                names.append(name)
        return names

    def comprehensions(self) -> Iterator[ComprehensionOp]:
        for op in self.body.block.ops:
            if isinstance(op, ComprehensionOp):
                yield op

    def statements(self) -> Iterator[ComprehensionOp | list[ComprehensionOp]]:
        """The comprehensions in order, those of one stepped loop as a list."""
        for loop, group in groupby(self.comprehensions(), key=lambda op: op.loop or op):
            yield list(group) if isinstance(loop, StringAttr) else next(group)

    def verify_(self) -> None:
        args = self.body.block.args
        if len(self.arg_names) != len(args):
            raise VerifyException(
                f"expected {len(args)} argument names, got {len(self.arg_names)}"
            )
        if self.num_inputs.data > len(args):
            raise VerifyException("more inputs than block arguments")
        for arg, name in zip(self.outputs, self.names[self.num_inputs.data :]):
            if not isinstance(arg.type, TensorType):
                raise VerifyException(f"output '{name}' must be a !tc.tensor")
        for arg, name in zip(args, self.names):
            if isinstance(arg.type, TensorType):
                _verify_sizes_in(self, arg.type, f"type of '{name}'")
        groups = [g for g in self.statements() if isinstance(g, list)]
        loops = [g[0].loop.data for g in groups if g[0].loop is not None]
        repeated = next((loop for k, loop in enumerate(loops) if loop in loops[:k]), None)
        if repeated is not None:
            raise VerifyException(f"the comprehensions of loop '{repeated}' must be consecutive")
        for label, group in zip(loops, groups):
            if len({_steps(comp) for comp in group}) > 1:
                raise VerifyException(f"the comprehensions of loop '{label}' take different numbers of steps")
        for op in self.body.block.ops:
            # After convert-tc-to-poly the statements live in one poly.scop.
            if not isinstance(op, ComprehensionOp | AllocOp) and op.name != "poly.scop":
                raise VerifyException(
                    f"'{op.name}' is not allowed in a tc.def body "
                    "(expected tc.comprehension, tc.alloc or poly.scop)"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_block_argument)
        printer.print_string(") -> (")
        printer.print_list(self.outputs, printer.print_block_argument)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> DefOp:
        name = parser.parse_symbol_name().data
        inputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region((*inputs, *outputs))
        op = cls(
            name,
            [(a.name.text[1:], a.type) for a in inputs],
            [(a.name.text[1:], a.type) for a in outputs],
            body,
        )
        if attributes is not None:
            op.attributes |= attributes.data
        return op


def _verify_sizes_in(op: Operation, type: TensorType, what: str) -> None:
    known = op.size_names() if isinstance(op, DefOp) else []
    for name in type.symbol_names:
        if name not in known:
            raise VerifyException(
                f"{what} uses unknown size '{name}' "
                f"(sizes: {', '.join(known) or 'none'})"
            )


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A temporary tensor of a def: `%T = tc.alloc : !tc.tensor<f32, [M]>`."""

    name = "tc.alloc"

    result = result_def(TensorType)

    traits = traits_def(HasParent(DefOp))

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, type: TensorType, name: str | None = None):
        super().__init__(result_types=[type])
        self.result.name_hint = name

    def verify_(self) -> None:
        parent = self.parent_op()
        assert isinstance(parent, DefOp)
        assert isinstance(self.result.type, TensorType)
        _verify_sizes_in(parent, self.result.type, "temporary")


@irdl_op_definition
class ComprehensionOp(IRDLOperation):
    """One TC statement: `lhs[indices] kind rhs` over a rectangular range.

    The region's arguments are the statement's indices, left-hand side indices
    first (in subscript order), then reduction indices (a scatter, whose
    `tc.yield` names the element it updates, `%gE[] "+=!"`, has no left-hand
    side indices); `bounds` holds the
    half-open range `[lo, hi)` of each index as two affine expressions in the
    size names `bound_symbols`. The region yields the right-hand side's value
    for one point. `where` keeps the user's where-clauses as written and
    `equivalent` the `<=>` annotation.

    A comprehension of a stepped `for` loop (a recurrence) names the `loop`
    and the left-hand side index that numbers its steps (`loop_index`):

        tc.comprehension %C[%t] "=" (%t in [0, T)) loop "t" along %t { ... }

    The consecutive comprehensions of one loop run step by step: for each
    step `s` (from 0 to the trip count of their step indices), each
    comprehension in order over its other indices, its step index at its
    lower bound plus `s`. A body may then read the tensor it writes at an
    earlier step (`%t - 1`): its value from that step.
    """

    name = "tc.comprehension"

    lhs = operand_def(TensorType)
    kind = prop_def(StringAttr)
    bounds = prop_def(AffineMapAttr)
    bound_symbols = prop_def(ArrayAttr[StringAttr])
    where = opt_prop_def(ArrayAttr[StringAttr])
    equivalent = opt_prop_def(StringAttr)
    loop = opt_prop_def(StringAttr)
    loop_index = opt_prop_def(IntAttr)
    body = region_def("single_block")

    traits = traits_def(HasParent(DefOp))

    def __init__(
        self,
        lhs: SSAValue,
        kind: str,
        ranges: Sequence[tuple[AffineExpr, AffineExpr]],
        symbols: Sequence[str],
        body: Region,
        where: Sequence[str] = (),
        equivalent: str | None = None,
        loop: tuple[str, int] | None = None,
    ):
        results = tuple(e for lo_hi in ranges for e in lo_hi)
        properties: dict[str, Attribute] = {
            "kind": StringAttr(kind),
            "bounds": AffineMapAttr(AffineMap(0, len(symbols), results)),
            "bound_symbols": _symbol_names(symbols),
        }
        if where:
            properties["where"] = _symbol_names(where)
        if equivalent is not None:
            properties["equivalent"] = StringAttr(equivalent)
        if loop is not None:
            properties["loop"] = StringAttr(loop[0])
            properties["loop_index"] = IntAttr(loop[1])
        super().__init__(operands=[lhs], properties=properties, regions=[body])

    @property
    def indices(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args

    @property
    def lhs_type(self) -> TensorType:
        assert isinstance(self.lhs.type, TensorType)
        return self.lhs.type

    @property
    def is_scatter(self) -> bool:
        """Whether the body's `tc.yield` names the element it updates (a
        scatter: no left-hand side indices, every index reduced)."""
        last = self.body.block.last_op
        return isinstance(last, YieldOp) and last.map is not None

    @property
    def lhs_indices(self) -> tuple[BlockArgument, ...]:
        return () if self.is_scatter else self.indices[: self.lhs_type.rank]

    @property
    def reduction_indices(self) -> tuple[BlockArgument, ...]:
        return self.indices[len(self.lhs_indices) :]

    @property
    def ranges(self) -> list[tuple[AffineExpr, AffineExpr]]:
        """`[lo, hi)` of each index, symbols numbered as in `bound_symbols`."""
        r = self.bounds.data.results
        return [(r[2 * i], r[2 * i + 1]) for i in range(len(r) // 2)]

    @property
    def symbol_names(self) -> list[str]:
        return [s.data for s in self.bound_symbols]

    @property
    def step_index(self) -> BlockArgument | None:
        """The index that numbers the steps of the comprehension's loop, if any."""
        return None if self.loop_index is None else self.indices[self.loop_index.data]

    def steps_back(self, read: ReadOp) -> int | None:
        """`c` where `read` reads the written tensor at `t - c` along the step
        index `t` (the step `c` before), else None."""
        step = self.step_index
        if step is None or read.tensor is not self.lhs:
            return None
        offset = _offset_of(read.subscripts[step.index], read.subscript_operands, step)
        return None if offset is None else -offset

    def reads_lhs_non_pointwise(self) -> bool:
        """Whether the body reads the tensor it writes other than at the very
        point written (then the whole right-hand side must see old values);
        a read at an earlier step of the comprehension's loop does not count:
        that step is over."""
        pointwise = [AffineExpr.dimension(i) for i in range(self.lhs_type.rank)]
        for op in self.body.walk():
            if isinstance(op, ReadOp) and op.tensor is self.lhs:
                if (self.steps_back(op) or 0) >= 1:
                    continue
                if self.reduction_indices or self.is_scatter:
                    return True
                operands = list(op.subscript_operands)
                if list(op.subscripts) != pointwise or operands != list(self.lhs_indices):
                    return True
        return False

    @property
    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def verify_(self) -> None:
        if self.kind.data not in ASSIGNMENT_KINDS:
            raise VerifyException(
                f"unknown assignment kind '{self.kind.data}' "
                f"(expected one of {' '.join(ASSIGNMENT_KINDS)})"
            )
        rank = self.lhs_type.rank
        if len(self.ranges) != len(self.indices):
            raise VerifyException(
                f"expected a range for each of the {len(self.indices)} indices, "
                f"got {len(self.ranges)}"
            )
        last = self.body.block.last_op
        if isinstance(last, YieldOp) and last.subscripts is not None:
            if self.kind.data not in ("+=", "+=!"):
                raise VerifyException(
                    f"a scatter accumulates with '+=' or '+=!', not '{self.kind.data}'"
                )
            if len(last.subscripts) != rank:
                raise VerifyException(
                    f"a scatter into a rank-{rank} tensor yields {len(last.subscripts)} subscripts"
                )
        elif len(self.indices) < rank:
            raise VerifyException(
                f"left-hand side has rank {rank} but only "
                f"{len(self.indices)} indices"
            )
        for arg in self.indices:
            if not isinstance(arg.type, IndexType):
                raise VerifyException("comprehension indices must be of type index")
        definition = self.parent_op()
        if (
            isinstance(definition, DefOp)
            and isinstance(self.lhs, BlockArgument)
            and self.lhs.owner is definition.body.block
            and self.lhs.index < definition.num_inputs.data
        ):
            raise VerifyException(
                f"cannot assign to input '{definition.names[self.lhs.index]}': "
                "inputs are immutable"
            )
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("body must end with tc.yield")
        if last.value.type != self.lhs_type.scalar_type:
            raise VerifyException(
                f"yielded {last.value.type} but the left-hand side holds "
                f"{self.lhs_type.scalar_type}"
            )
        _verify_sizes(self, self.symbol_names, "range")
        if (self.loop is None) != (self.loop_index is None):
            raise VerifyException("'loop' and 'loop_index' go together")
        if self.loop_index is not None:
            if not 0 <= self.loop_index.data < rank:
                raise VerifyException(
                    f"the step index (#{self.loop_index.data}) must index the left-hand side "
                    f"(rank {rank})"
                )
            if self.reads_lhs_non_pointwise():
                raise VerifyException(
                    "a comprehension of a loop reads the tensor it writes at the point it "
                    "writes or at an earlier step only"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.lhs)
        printer.print_string("[")
        printer.print_list(self.lhs_indices, printer.print_ssa_value)
        printer.print_string("] ")
        printer.print_string_literal(self.kind.data)
        printer.print_string(" (")

        def print_range(item: tuple[BlockArgument, tuple[AffineExpr, AffineExpr]]):
            arg, (lo, hi) = item
            printer.print_ssa_value(arg)
            printer.print_string(" in [")
            print_affine(printer, lo, (), self.symbol_names)
            printer.print_string(", ")
            print_affine(printer, hi, (), self.symbol_names)
            printer.print_string(")")

        printer.print_list(zip(self.indices, self.ranges), print_range)
        printer.print_string(")")
        if self.loop is not None and self.step_index is not None:
            printer.print_string(" loop ")
            printer.print_string_literal(self.loop.data)
            printer.print_string(" along ")
            printer.print_ssa_value(self.step_index)
        if self.where is not None:
            printer.print_string(" where ")
            printer.print_attribute(self.where)
        if self.equivalent is not None:
            printer.print_string(" equivalent ")
            printer.print_string_literal(self.equivalent.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> ComprehensionOp:
        lhs = resolve_defined(parser, parser.parse_unresolved_operand())
        lhs_names = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_argument(expect_type=False)
        )
        pos = parser.pos
        kind = parser.parse_str_literal("assignment kind")
        if kind not in ASSIGNMENT_KINDS:
            parser.raise_error(f"unknown assignment kind '{kind}'", pos, parser.pos)
        exprs = AffineExprParser(parser, allow_operands=False)

        def parse_range():
            arg = parser.parse_argument(expect_type=False)
            parser.parse_keyword("in")
            parser.parse_punctuation("[")
            lo = exprs.parse()
            parser.parse_punctuation(",")
            hi = exprs.parse()
            parser.parse_punctuation(")")
            return arg, (lo, hi)

        pos = parser.pos
        items = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_range)
        given = [a.name.text for a in lhs_names]
        if given != [a.name.text for a, _ in items[: len(given)]]:
            parser.raise_error(
                "left-hand side indices must be the first indices of the range list",
                pos,
                parser.pos,
            )
        loop = None
        if parser.parse_optional_keyword("loop"):
            label = parser.parse_str_literal("loop label")
            parser.parse_keyword("along")
            pos = parser.pos
            step = parser.parse_argument(expect_type=False).name.text
            names = [a.name.text for a, _ in items]
            if step not in names[: len(given)]:
                parser.raise_error("the step index must be a left-hand side index", pos, parser.pos)
            loop = (label, names.index(step))
        where = None
        if parser.parse_optional_keyword("where"):
            where = parser.parse_attribute()
            if not isinstance(where, ArrayAttr):
                parser.raise_error("expected an array of strings after 'where'")
        equivalent = None
        if parser.parse_optional_keyword("equivalent"):
            equivalent = parser.parse_str_literal()
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([a.resolve(IndexType()) for a, _ in items])
        op = cls(
            lhs,
            kind,
            [r for _, r in items],
            exprs.symbols,
            body,
            equivalent=equivalent,
            loop=loop,
        )
        if where is not None:
            op.properties["where"] = where
        if attributes is not None:
            op.attributes |= attributes.data
        return op


def _steps(comp: ComprehensionOp) -> tuple[int, ...]:
    """The number of steps of a loop's comprehension (its step index's
    extent) for a few values of the sizes: equal where the extents are."""
    assert comp.step_index is not None
    lo, hi = comp.ranges[comp.step_index.index]
    values = [[sum(map(ord, name)) % 89 + 11 + k * 7 for name in comp.symbol_names] for k in range(3)]
    return tuple(hi.eval([], v) - lo.eval([], v) for v in values)


def _offset_of(subscript: AffineExpr, operands: Sequence[SSAValue], index: SSAValue) -> int | None:
    """`c` where `subscript` (over `operands` as dims, no symbols) is `index + c`, else None."""
    operands = list(operands)
    if index not in operands or any(isinstance(e, AffineSymExpr) for e in subscript.dfs()):
        return None
    position = operands.index(index)
    if subscript.used_dims() != {position}:
        return None
    values = [0] * len(operands)
    at_zero = subscript.eval(values, [])
    values[position] = 1
    return at_zero if subscript.eval(values, []) - at_zero == 1 else None


class SubscriptedOp(IRDLOperation):
    """An element access: a tensor operand and an affine `map` of subscripts."""

    @property
    def tensor_type(self) -> TensorType:
        tensor = self.operands[0]
        assert isinstance(tensor.type, TensorType)
        return tensor.type

    @property
    def subscripts(self) -> tuple[AffineExpr, ...]:
        return self.map.data.results  # pyright: ignore[reportAttributeAccessIssue]

    @property
    def symbol_names(self) -> list[str]:
        return [s.data for s in self.symbols]  # pyright: ignore[reportAttributeAccessIssue]

    def verify_access(self, value: Attribute, what: str) -> None:
        """Subscripts, sizes, and `value` (the type read or written) against
        the tensor's element type."""
        tensor_type = self.tensor_type
        _verify_subscripts(
            tensor_type,
            self.map.data,  # pyright: ignore[reportAttributeAccessIssue]
            self.subscript_operands,  # pyright: ignore[reportAttributeAccessIssue]
        )
        if value != tensor_type.scalar_type:
            raise VerifyException(
                f"{what} {value} does not match the tensor's "
                f"element type {tensor_type.scalar_type}"
            )
        _verify_sizes(self, self.symbol_names, "subscript")

    def print_access(self, printer: Printer) -> None:
        """` %T[subscripts]`, the common head of the custom syntax."""
        printer.print_string(" ")
        printer.print_ssa_value(self.operands[0])
        _print_subscripts(
            printer,
            self.subscripts,
            self.subscript_operands,  # pyright: ignore[reportAttributeAccessIssue]
            self.symbol_names,
        )


@irdl_op_definition
class ReadOp(SubscriptedOp):
    """Read one element: `%v = tc.read %A[%i, %k + 1]`.

    Subscripts are affine expressions whose dimensions are the SSA operands
    (indices, integer scalars, or values read from index tensors for
    indirection such as `X(I(i, j))`) and whose symbols are size names.
    """

    name = "tc.read"

    tensor = operand_def(TensorType)
    subscript_operands = var_operand_def()
    map = prop_def(AffineMapAttr)
    symbols = prop_def(ArrayAttr[StringAttr])
    result = result_def()

    traits = traits_def(Pure())

    def __init__(
        self,
        tensor: SSAValue,
        subscripts: Sequence[AffineExpr],
        operands: Sequence[SSAValue] = (),
        symbols: Sequence[str] = (),
    ):
        assert isinstance(tensor.type, TensorType)
        amap = AffineMap(len(operands), len(symbols), tuple(subscripts))
        super().__init__(
            operands=[tensor, operands],
            properties={"map": AffineMapAttr(amap), "symbols": _symbol_names(symbols)},
            result_types=[tensor.type.scalar_type],
        )

    def verify_(self) -> None:
        self.verify_access(self.result.type, "result type")

    def print(self, printer: Printer) -> None:
        self.print_access(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        tensor = resolve_defined(parser, parser.parse_unresolved_operand())
        if not isinstance(tensor.type, TensorType):
            parser.raise_error(f"tc.read expects a !tc.tensor, got {tensor.type}")
        subscripts, exprs = _parse_affine_list(parser, allow_operands=True)
        operands = [resolve_defined(parser, o) for o in exprs.operands]
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(tensor, subscripts, operands, exprs.symbols)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


UPDATE_KINDS = ("=", "+=", "*=", "min=", "max=")
"""How `tc.update` combines a value into an element."""


@irdl_op_definition
class UpdateOp(SubscriptedOp):
    """Combine a value into one element: `tc.update %C[%i, %j] "+=" %v : f32`.

    The statement form of a comprehension body at one point, used where a
    statement is a body of its own (polyhedral statements): `=` stores,
    the other kinds read the element, combine and store.
    """

    name = "tc.update"

    tensor = operand_def(TensorType)
    value = operand_def()
    subscript_operands = var_operand_def()
    kind = prop_def(StringAttr)
    map = prop_def(AffineMapAttr)
    symbols = prop_def(ArrayAttr[StringAttr])

    def __init__(
        self,
        tensor: SSAValue,
        kind: str,
        value: SSAValue,
        subscripts: Sequence[AffineExpr],
        operands: Sequence[SSAValue] = (),
        symbols: Sequence[str] = (),
    ):
        amap = AffineMap(len(operands), len(symbols), tuple(subscripts))
        super().__init__(
            operands=[tensor, value, operands],
            properties={
                "kind": StringAttr(kind),
                "map": AffineMapAttr(amap),
                "symbols": _symbol_names(symbols),
            },
        )

    def verify_(self) -> None:
        if self.kind.data not in UPDATE_KINDS:
            raise VerifyException(
                f"unknown update kind '{self.kind.data}' "
                f"(expected one of {' '.join(UPDATE_KINDS)})"
            )
        self.verify_access(self.value.type, "value of type")

    def print(self, printer: Printer) -> None:
        self.print_access(printer)
        printer.print_string(" ")
        printer.print_string_literal(self.kind.data)
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> UpdateOp:
        tensor = resolve_defined(parser, parser.parse_unresolved_operand())
        if not isinstance(tensor.type, TensorType):
            parser.raise_error(f"tc.update expects a !tc.tensor, got {tensor.type}")
        subscripts, exprs = _parse_affine_list(parser, allow_operands=True)
        operands = [resolve_defined(parser, o) for o in exprs.operands]
        kind = parser.parse_str_literal("update kind")
        value = resolve_defined(parser, parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(tensor, kind, value, subscripts, operands, exprs.symbols)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


def _verify_subscripts(
    type: TensorType, map: AffineMap, operands: Sequence[SSAValue]
) -> None:
    if map.num_dims != len(operands):
        raise VerifyException(
            f"subscripts use {map.num_dims} values but {len(operands)} are given"
        )
    rank = type.rank
    if len(map.results) != rank:
        raise VerifyException(
            f"expected {rank} subscripts for a rank-{rank} tensor, "
            f"got {len(map.results)}"
        )
    for value in operands:
        if not isinstance(value.type, IndexType | IntegerType):
            raise VerifyException(
                f"subscript values must be index or integer, got {value.type}"
            )


def _print_subscripts(
    printer: Printer,
    subscripts: Sequence[AffineExpr],
    operands: Sequence[SSAValue],
    symbols: Sequence[str],
) -> None:
    printer.print_string("[")
    printer.print_list(subscripts, lambda e: print_affine(printer, e, operands, symbols))
    printer.print_string("]")


@irdl_op_definition
class SizeOp(IRDLOperation):
    """A size as an `index` value: `%n = tc.size [M - N + 1]` (TC's `M` or `A.0`)."""

    name = "tc.size"

    map = prop_def(AffineMapAttr)
    symbols = prop_def(ArrayAttr[StringAttr])
    result = result_def(IndexType)

    traits = traits_def(Pure())

    def __init__(self, size: AffineExpr, symbols: Sequence[str]):
        amap = AffineMap(0, len(symbols), (size,))
        super().__init__(
            properties={"map": AffineMapAttr(amap), "symbols": _symbol_names(symbols)},
            result_types=[IndexType()],
        )

    @property
    def size(self) -> AffineExpr:
        return self.map.data.results[0]

    @property
    def symbol_names(self) -> list[str]:
        return [s.data for s in self.symbols]

    def verify_(self) -> None:
        if self.map.data.num_dims != 0 or len(self.map.data.results) != 1:
            raise VerifyException("expected one size expression without dimensions")
        _verify_sizes(self, self.symbol_names, "size")

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        print_affine(printer, self.size, (), self.symbol_names)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> SizeOp:
        (size,), exprs = _parse_affine_list(parser, allow_operands=False)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(size, exprs.symbols)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a comprehension body with the right-hand side's value:
    `tc.yield %v : f32`. A scatter's body also gives the element it updates,
    subscripts as in `tc.read`: `tc.yield %v at [%0, %d] : f32`."""

    name = "tc.yield"

    value = operand_def()
    subscript_operands = var_operand_def()
    map = opt_prop_def(AffineMapAttr)
    symbols = opt_prop_def(ArrayAttr[StringAttr])

    traits = traits_def(IsTerminator(), HasParent(ComprehensionOp))

    def __init__(
        self,
        value: SSAValue,
        subscripts: Sequence[AffineExpr] | None = None,
        operands: Sequence[SSAValue] = (),
        symbols: Sequence[str] = (),
    ):
        properties: dict[str, Attribute] = {}
        if subscripts is not None:
            amap = AffineMap(len(operands), len(symbols), tuple(subscripts))
            properties = {"map": AffineMapAttr(amap), "symbols": _symbol_names(symbols)}
        super().__init__(operands=[value, operands], properties=properties)

    @property
    def subscripts(self) -> tuple[AffineExpr, ...] | None:
        """The element a scatter updates, None for a comprehension's own point."""
        return None if self.map is None else self.map.data.results

    @property
    def symbol_names(self) -> list[str]:
        return [] if self.symbols is None else [s.data for s in self.symbols]

    def verify_(self) -> None:
        if self.map is None:
            if self.subscript_operands:
                raise VerifyException("subscript operands without subscripts")
            return
        if self.map.data.num_dims != len(self.subscript_operands):
            raise VerifyException(
                f"subscripts use {self.map.data.num_dims} values but "
                f"{len(self.subscript_operands)} are given"
            )
        _verify_sizes(self, self.symbol_names, "subscript")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        if self.subscripts is not None:
            printer.print_string(" at ")
            _print_subscripts(printer, self.subscripts, self.subscript_operands, self.symbol_names)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        value = parser.parse_unresolved_operand()
        subscripts, operands, symbols = None, [], []
        if parser.parse_optional_keyword("at"):
            subscripts, exprs = _parse_affine_list(parser, allow_operands=True)
            operands = [resolve_defined(parser, o) for o in exprs.operands]
            symbols = exprs.symbols
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(value, parser.parse_type()), subscripts, operands, symbols)
        op.attributes |= attributes
        return op


TC = Dialect(
    "tc",
    [DefOp, AllocOp, ComprehensionOp, ReadOp, SizeOp, UpdateOp, YieldOp],
    [TensorType],
)
