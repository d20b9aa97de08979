"""The `poly` dialect: static control parts (scops) and isl schedule trees as IR.

A `poly.scop` holds `poly.stmt` statements (iteration domain, access relations and
an opaque scalar body) and one schedule tree whose root is a `poly.domain`.  The
schedule tree mirrors isl's node kinds one op per node; a node's child lives in
its single-block region, and a node with an empty region has an (implicit) leaf
child.  Every polyhedral object is kept as an isl string and checked with islpy
by the verifiers; `tcir.polyhedral.schedule_tree` converts the tree to and from
`islpy.Schedule`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from functools import lru_cache
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FlatSymbolRefAttrConstr,
    IndexType,
    IntAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException
from typing_extensions import Self



class IslKind(Enum):
    """The isl object kinds stored as strings in `poly` ops."""

    SET = "set"
    UNION_SET = "union set"
    UNION_MAP = "union map"
    MULTI_UNION_PW_AFF = "multi union pw aff"

    def parse(self, text: str) -> Any:
        """Parse `text` into an islpy object of this kind (imports islpy lazily)."""
        import islpy as isl

        constructor = {
            IslKind.SET: isl.Set,
            IslKind.UNION_SET: isl.UnionSet,
            IslKind.UNION_MAP: isl.UnionMap,
            IslKind.MULTI_UNION_PW_AFF: isl.MultiUnionPwAff,
        }[self]
        return constructor(text)


@lru_cache(maxsize=4096)
def _parsed(kind: IslKind, text: str) -> Any:
    """`kind.parse(text)`, once per text: the verifier runs after every pass on
    strings most of which did not change (islpy objects are values: sharing
    them is safe)."""
    return kind.parse(text)


def verify_isl(op: Operation, field: str, text: str, kind: IslKind) -> Any:
    """Parse the isl string `text` of `op`'s `field`; a one-line error if invalid."""
    import islpy as isl

    try:
        return _parsed(kind, text)
    except isl.Error:
        raise VerifyException(
            f"'{op.name}' op {field} \"{text}\" is not a valid isl {kind.value}"
        ) from None


def _path(node: Operation) -> tuple[tuple[str, str], ...] | None:
    """The `poly.domain`, `poly.filter` and `poly.extension` strings above
    `node` (root first), or None outside a well-formed tree."""
    path: list[tuple[str, str]] = []
    current = node.parent_op()
    while isinstance(current, ScheduleNodeOp):
        if isinstance(current, FilterOp | ExtensionOp | ContextOp | DomainOp):
            path.append((current.name, current.value))
        current = current.parent_op()
    if isinstance(current, ScopOp):
        path.append((ContextOp.name, current.context.data))
    path.reverse()
    return tuple(path) if len(path) > 1 and path[1][0] == DomainOp.name else None


@lru_cache(maxsize=4096)
def _reaching(path: tuple[tuple[str, str], ...]) -> Any:
    """The statement instances that reach the end of `path` (the scop's
    context, then the domain): the domain, restricted by each filter and
    context, extended by each extension's range."""
    kind, text = path[-1]
    if kind == DomainOp.name:
        return _parsed(IslKind.UNION_SET, text).intersect_params(_parsed(IslKind.SET, path[0][1]))
    above = _reaching(path[:-1])
    if kind == FilterOp.name:
        return above.intersect(_parsed(IslKind.UNION_SET, text))
    if kind == ContextOp.name:
        return above.intersect_params(_parsed(IslKind.SET, text))
    return above.union(_parsed(IslKind.UNION_MAP, text).range())


@lru_cache(maxsize=4096)
def _same_instances(domain: str, statements: tuple[str, ...], context: str) -> bool:
    """Whether the union set `domain` holds exactly the instances of the
    statement domains (within the scop's `context`)."""
    import islpy as isl

    params = _parsed(IslKind.SET, context)
    union = isl.UnionSet.empty(params.get_space())
    for text in statements:
        union = union.union(isl.UnionSet.from_set(_parsed(IslKind.SET, text)))
    return _parsed(IslKind.UNION_SET, domain).intersect_params(params).is_equal(union.intersect_params(params))


def _union_text(statements: tuple[str, ...]) -> str:
    import islpy as isl

    union = isl.UnionSet("{ }")
    for text in statements:
        union = union.union(isl.UnionSet.from_set(_parsed(IslKind.SET, text)))
    return str(union)


@lru_cache(maxsize=4096)
def _dropped(path: tuple[tuple[str, str], ...], filters: tuple[str, ...]) -> str | None:
    """The instances reaching the end of `path` that no filter of `filters`
    holds (None if there are none). The block and thread parameters that a
    mapping adds are projected out: an instance that another thread or block
    runs is not dropped."""
    import islpy as isl

    keep = set(_parsed(IslKind.SET, path[0][1]).get_var_names(isl.dim_type.param))
    reaching = _reaching(path)
    covered = isl.UnionSet.empty(reaching.get_space())
    for text in filters:
        covered = covered.union(_parsed(IslKind.UNION_SET, text))
    lost = _only_params(reaching, keep).subtract(_only_params(covered, keep))
    return None if lost.is_empty() else str(lost)


def _only_params(union: Any, keep: set[str]) -> Any:
    """`union` with its parameters other than `keep` projected out."""
    import islpy as isl

    parts: list[Any] = []

    def project(part: Any) -> None:
        for k in reversed(range(part.dim(isl.dim_type.param))):
            if part.get_dim_name(isl.dim_type.param, k) not in keep:
                part = part.project_out(isl.dim_type.param, k, 1)
        parts.append(part)

    union.foreach_set(project)
    result = isl.UnionSet.empty(union.get_space().params())
    for part in parts:
        result = result.union(isl.UnionSet.from_set(part))
    return result


def _names(union: Any) -> set[str]:
    """The statement names of an isl union set's spaces."""
    names: set[str] = set()
    union.foreach_set(lambda s: names.add(s.get_tuple_name()))
    return names


def _child_region(child: Operation | None) -> Region:
    return Region(Block([] if child is None else [child]))


def _parse_child_region(parser: Parser) -> Region:
    """Parse an optional `{ child }` region; a missing region means a leaf child."""
    region = parser.parse_optional_region()
    return _with_block(Region() if region is None else region)


def _with_block(region: Region) -> Region:
    """`region`, given an empty block if it has none (`{ }` parses to no block)."""
    if not region.blocks:
        region.add_block(Block())
    return region


def _parse_flag(parser: Parser) -> bool:
    """Parse a `0` or `1` flag."""
    flag = parser.parse_integer(
        allow_boolean=False, allow_negative=False, context_msg=" (a 0 or 1 flag)"
    )
    if flag not in (0, 1):
        parser.raise_error("expected a 0 or 1 flag")
    return bool(flag)


def _print_attributes(printer: Printer, op: Operation) -> None:
    """Print the discardable attributes as `attributes {...}`, if there are any."""
    printer.print_op_attributes(op.attributes, print_keyword=True)


def _parse_attributes(parser: Parser) -> dict[str, Attribute]:
    """Parse an optional `attributes {...}` dictionary."""
    attributes = parser.parse_optional_attr_dict_with_keyword()
    return {} if attributes is None else dict(attributes.data)


class ScheduleNodeOp(IRDLOperation):
    """Base of the schedule-tree node ops: a single-block region holds the children."""

    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    @property
    def children(self) -> list[ScheduleNodeOp]:
        """The child nodes, in order (those that are schedule-tree nodes)."""
        return [op for op in self.body.block.ops if isinstance(op, ScheduleNodeOp)]

    @property
    def child(self) -> ScheduleNodeOp | None:
        """The first child node (the only one below nodes other than sequence and
        set), or None for a leaf."""
        first = self.body.block.first_op
        return first if isinstance(first, ScheduleNodeOp) else None

    def verify_(self) -> None:
        ops = list(self.body.block.ops)
        if len(ops) > 1:
            raise VerifyException(
                f"'{self.name}' op expected at most one child node, got {len(ops)}"
            )
        for op in ops:
            if not isinstance(op, ScheduleNodeOp) or isinstance(op, DomainOp):
                raise VerifyException(
                    f"'{self.name}' op child '{op.name}' is not a schedule tree node"
                )

    def _print_child(self, printer: Printer) -> None:
        if self.body.block.ops:
            printer.print_string(" ")
            printer.print_region(self.body, print_entry_block_args=False)


class SingleChildNodeOp(ScheduleNodeOp):
    """A schedule node described by one string (`ISL_FIELD`) and at most one child."""

    ISL_FIELD: ClassVar[str]
    ISL_KIND: ClassVar[IslKind | None]

    def __init__(self, value: str, child: ScheduleNodeOp | None = None):
        super().__init__(
            properties={self.ISL_FIELD: StringAttr(value)},
            regions=[_child_region(child)],
        )

    @property
    def value(self) -> str:
        """The node's describing string (an isl object or a mark name)."""
        attr = self.properties[self.ISL_FIELD]
        assert isinstance(attr, StringAttr)
        return attr.data

    def verify_(self) -> None:
        if self.ISL_KIND is not None:
            verify_isl(self, self.ISL_FIELD, self.value, self.ISL_KIND)
        super().verify_()

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.value)
        _print_attributes(printer, self)
        self._print_child(printer)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        value = parser.parse_str_literal(f"{cls.ISL_FIELD} string")
        return cls.create(
            properties={cls.ISL_FIELD: StringAttr(value)},
            attributes=_parse_attributes(parser),
            regions=[_parse_child_region(parser)],
        )


@irdl_op_definition
class DomainOp(SingleChildNodeOp):
    """Root of a schedule tree: the union set of statement instances it schedules.

    `poly.domain "[N] -> { S0[i] : 0 <= i < N }" { child }`
    """

    name = "poly.domain"
    domain = prop_def(StringAttr)

    ISL_FIELD: ClassVar[str] = "domain"
    ISL_KIND: ClassVar[IslKind | None] = IslKind.UNION_SET

    def verify_(self) -> None:
        if isinstance(self.parent_op(), ScheduleNodeOp):
            raise VerifyException(
                f"'{self.name}' op must be the root of a schedule tree"
            )
        super().verify_()
        scop = self.parent_op()
        if isinstance(scop, ScopOp):
            extended: set[str] = set()
            for op in self.walk():
                if isinstance(op, ExtensionOp):
                    extended |= _names(verify_isl(op, "extension", op.value, IslKind.UNION_MAP).range())
            domains = tuple(s.domain.data for s in scop.statements if s.sym_name.data not in extended)
            if not _same_instances(self.value, domains, scop.context.data):
                raise VerifyException(
                    f"'{self.name}' op domain \"{self.value}\" differs from the union of "
                    f"the statements' domains \"{_union_text(domains)}\""
                )


@irdl_op_definition
class FilterOp(SingleChildNodeOp):
    """Restricts its subtree to the statement instances in a union set.

    `poly.filter "{ S0[i] }" { child }`
    """

    name = "poly.filter"
    filter = prop_def(StringAttr)

    ISL_FIELD: ClassVar[str] = "filter"
    ISL_KIND: ClassVar[IslKind | None] = IslKind.UNION_SET

    def verify_(self) -> None:
        super().verify_()
        path = _path(self)
        if path is None:
            return
        known = _names(_parsed(IslKind.UNION_SET, path[1][1]))
        for kind, text in path[2:]:
            if kind == ExtensionOp.name:
                known |= _names(_parsed(IslKind.UNION_MAP, text).range())
        unknown = _names(_parsed(IslKind.UNION_SET, self.value)) - known
        if unknown:
            raise VerifyException(
                f"'{self.name}' op filter \"{self.value}\" names {', '.join(sorted(unknown))}, "
                f"which the schedule's domain (and the extensions above) does not hold"
            )


@irdl_op_definition
class ContextOp(SingleChildNodeOp):
    """Adds constraints on parameters (and outer band members) for its subtree.

    `poly.context "[N] -> { : N >= 32 }" { child }`
    """

    name = "poly.context"
    context = prop_def(StringAttr)

    ISL_FIELD: ClassVar[str] = "context"
    ISL_KIND: ClassVar[IslKind | None] = IslKind.SET


@irdl_op_definition
class MarkOp(SingleChildNodeOp):
    """Attaches a named mark (an isl id) to its subtree.

    `poly.mark "kernel" { child }`
    """

    name = "poly.mark"
    mark = prop_def(StringAttr)

    ISL_FIELD: ClassVar[str] = "mark"
    ISL_KIND: ClassVar[IslKind | None] = None

    def verify_(self) -> None:
        if not self.value:
            raise VerifyException(f"'{self.name}' op mark id must not be empty")
        super().verify_()


@irdl_op_definition
class ExtensionOp(SingleChildNodeOp):
    """Introduces extra statement instances (a union map from outer schedule to them).

    `poly.extension "{ [i] -> Copy[i, j] : 0 <= j < 32 }" { child }`
    """

    name = "poly.extension"
    extension = prop_def(StringAttr)

    ISL_FIELD: ClassVar[str] = "extension"
    ISL_KIND: ClassVar[IslKind | None] = IslKind.UNION_MAP


class FilterListNodeOp(ScheduleNodeOp):
    """A schedule node whose children are one or more `poly.filter` ops."""

    def __init__(self, children: Sequence[FilterOp]):
        super().__init__(regions=[Region(Block(children))])

    def verify_(self) -> None:
        ops = list(self.body.block.ops)
        if not ops:
            raise VerifyException(
                f"'{self.name}' op expected at least one poly.filter child"
            )
        for op in ops:
            if not isinstance(op, FilterOp):
                raise VerifyException(
                    f"'{self.name}' op child '{op.name}' is not a poly.filter"
                )
        path = _path(self)
        if path is None:
            return
        filters = tuple(op.value for op in ops if isinstance(op, FilterOp))
        lost = _dropped(path, filters)
        if lost is not None:
            raise VerifyException(
                f"'{self.name}' op children's filters drop statement instances that reach it: {lost}"
            )

    def print(self, printer: Printer) -> None:
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        attributes = _parse_attributes(parser)
        return cls.create(
            attributes=attributes, regions=[_with_block(parser.parse_region())]
        )


@irdl_op_definition
class SequenceOp(FilterListNodeOp):
    """Executes its filter children one after the other, in order."""

    name = "poly.sequence"


@irdl_op_definition
class SetOp(FilterListNodeOp):
    """Executes its filter children in any order."""

    name = "poly.set"


@irdl_op_definition
class BandOp(ScheduleNodeOp):
    """A band: a partial schedule (one affine function per member) over its subtree.

    `poly.band "[{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]" permutable
    coincident = [1, 0] options "{ unroll[1] }" { child }`

    `options` are isl AST build options; member-wise loop types are written there
    as `atomic[k]`, `unroll[k]`, `separate[k]` for member `k`.
    """

    name = "poly.band"

    schedule = prop_def(StringAttr)
    permutable = opt_prop_def(UnitAttr)
    coincident = prop_def(DenseArrayBase.constr(i1))
    options = opt_prop_def(StringAttr)

    def __init__(
        self,
        schedule: str,
        coincident: Sequence[bool],
        permutable: bool = False,
        options: str | None = None,
        child: ScheduleNodeOp | None = None,
    ):
        super().__init__(
            properties=self._properties(schedule, coincident, permutable, options),
            regions=[_child_region(child)],
        )

    @staticmethod
    def _properties(
        schedule: str, coincident: Sequence[bool], permutable: bool, options: str | None
    ) -> dict[str, Attribute]:
        properties: dict[str, Attribute] = {
            "schedule": StringAttr(schedule),
            "coincident": DenseArrayBase.from_list(i1, [int(c) for c in coincident]),
        }
        if permutable:
            properties["permutable"] = UnitAttr()
        if options is not None:
            properties["options"] = StringAttr(options)
        return properties

    @property
    def coincident_flags(self) -> tuple[bool, ...]:
        """Per member: whether it carries no dependence (is parallel)."""
        return tuple(bool(v) for v in self.coincident.get_values())

    def verify_(self) -> None:
        import islpy as isl

        partial = verify_isl(
            self, "schedule", self.schedule.data, IslKind.MULTI_UNION_PW_AFF
        )
        if self.options is not None:
            verify_isl(self, "options", self.options.data, IslKind.UNION_SET)
        n_member = partial.dim(isl.dim_type.set)
        if len(self.coincident_flags) != n_member:
            raise VerifyException(
                f"'{self.name}' op expected {n_member} coincident flags, "
                f"got {len(self.coincident_flags)}"
            )
        super().verify_()

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.schedule.data)
        if self.permutable is not None:
            printer.print_string(" permutable")
        printer.print_string(" coincident = [")
        printer.print_list(self.coincident_flags, lambda c: printer.print_int(int(c)))
        printer.print_string("]")
        if self.options is not None:
            printer.print_string(" options ")
            printer.print_string_literal(self.options.data)
        _print_attributes(printer, self)
        self._print_child(printer)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        schedule = parser.parse_str_literal("band schedule string")
        permutable = parser.parse_optional_keyword("permutable") is not None
        parser.parse_keyword("coincident")
        parser.parse_punctuation("=")
        coincident = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: _parse_flag(parser)
        )
        options = None
        if parser.parse_optional_keyword("options") is not None:
            options = parser.parse_str_literal("band options string")
        return cls.create(
            properties=cls._properties(schedule, coincident, permutable, options),
            attributes=_parse_attributes(parser),
            regions=[_parse_child_region(parser)],
        )


@irdl_op_definition
class StmtOp(IRDLOperation):
    """A polyhedral statement: iteration domain, access relations and scalar body.

    `poly.stmt @S0 domain "{ S0[i] : ... }" reads "{ S0[i] -> A[i] }"
    writes "{ S0[i] -> B[i] }" { ^bb0(%i: index): ... }`

    The body is opaque; its block arguments are the iteration variables (`index`,
    one per domain dimension).  With `may_writes` instead of `writes`, the written
    elements are an over-approximation (the writes do not kill earlier values).

    A statement of a stepped loop (a recurrence, `tc.comprehension`'s `loop`)
    names the loop and the domain dimension that numbers its steps:
    `... writes "..." loop "t" dim 0 { ... }`. In program order, the
    consecutive statements of one loop run step by step: each step (the
    dimension less its lower bound) runs them in order.
    """

    name = "poly.stmt"

    sym_name = prop_def(StringAttr)
    domain = prop_def(StringAttr)
    reads = prop_def(StringAttr)
    writes = prop_def(StringAttr)
    may_write = opt_prop_def(UnitAttr)
    loop = opt_prop_def(StringAttr)
    loop_dim = opt_prop_def(IntAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (SymbolOpInterface(), NoTerminator(), HasParent(ScopOp))
    )

    def __init__(
        self,
        sym_name: str,
        domain: str,
        reads: str,
        writes: str,
        body: Region,
        may_write: bool = False,
        loop: tuple[str, int] | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "domain": StringAttr(domain),
            "reads": StringAttr(reads),
            "writes": StringAttr(writes),
        }
        if may_write:
            properties["may_write"] = UnitAttr()
        if loop is not None:
            properties["loop"] = StringAttr(loop[0])
            properties["loop_dim"] = IntAttr(loop[1])
        super().__init__(properties=properties, regions=[body])

    @property
    def step_loop(self) -> tuple[str, int] | None:
        """The stepped loop of the statement and the dimension of its steps, if any."""
        if self.loop is None or self.loop_dim is None:
            return None
        return self.loop.data, self.loop_dim.data

    def verify_(self) -> None:
        import islpy as isl

        name = self.sym_name.data
        domain = verify_isl(self, "domain", self.domain.data, IslKind.SET)
        if domain.get_tuple_name() != name:
            raise VerifyException(
                f"'{self.name}' op domain tuple '{domain.get_tuple_name()}' "
                f"does not match statement name '{name}'"
            )
        n_dim = domain.dim(isl.dim_type.set)
        for field, text in (("reads", self.reads), ("writes", self.writes)):
            maps = verify_isl(self, field, text.data, IslKind.UNION_MAP).get_map_list()
            for k in range(maps.n_map()):
                access = maps.get_at(k)
                source = access.get_tuple_name(isl.dim_type.in_)
                if source != name or access.dim(isl.dim_type.in_) != n_dim:
                    raise VerifyException(
                        f"'{self.name}' op {field} relation from '{source}' does not "
                        f"start in the {n_dim}-d domain of '{name}'"
                    )
        args = self.body.block.args
        if len(args) != n_dim:
            raise VerifyException(
                f"'{self.name}' op body must have {n_dim} block arguments "
                f"(one per domain dimension), got {len(args)}"
            )
        for arg in args:
            if not isinstance(arg.type, IndexType):
                raise VerifyException(
                    f"'{self.name}' op body block argument #{arg.index} must be "
                    f"of type index, got {arg.type}"
                )
        if (self.loop is None) != (self.loop_dim is None):
            raise VerifyException(f"'{self.name}' op 'loop' and 'loop_dim' go together")
        if self.loop_dim is not None and not 0 <= self.loop_dim.data < n_dim:
            raise VerifyException(
                f"'{self.name}' op loop dimension {self.loop_dim.data} is not one of the "
                f"{n_dim} of '{name}'"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" domain ")
        printer.print_string_literal(self.domain.data)
        printer.print_string(" reads ")
        printer.print_string_literal(self.reads.data)
        printer.print_string(" may_writes " if self.may_write else " writes ")
        printer.print_string_literal(self.writes.data)
        if self.step_loop is not None:
            printer.print_string(" loop ")
            printer.print_string_literal(self.step_loop[0])
            printer.print_string(f" dim {self.step_loop[1]}")
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        sym_name = parser.parse_symbol_name().data
        parser.parse_keyword("domain")
        domain = parser.parse_str_literal("statement domain")
        parser.parse_keyword("reads")
        reads = parser.parse_str_literal("read access relation")
        may_write = parser.parse_keyword_in(("writes", "may_writes")) == "may_writes"
        writes = parser.parse_str_literal("write access relation")
        loop = None
        if parser.parse_optional_keyword("loop"):
            label = parser.parse_str_literal("loop label")
            parser.parse_keyword("dim")
            loop = (label, parser.parse_integer(allow_negative=False, allow_boolean=False))
        attributes = _parse_attributes(parser)
        body = _with_block(parser.parse_region())
        op = cls(sym_name, domain, reads, writes, body, may_write, loop)
        op.attributes |= attributes
        return op


@irdl_op_definition
class ScopOp(IRDLOperation):
    """A static control part: parameters, their context, statements, schedule tree.

    `poly.scop @name params [N, M] context "[N, M] -> { : N > 0 and M > 0 }" { ... }`

    The body holds `poly.stmt` ops and exactly one `poly.domain` (the schedule).
    `params` lists the context's parameters, in the same order.
    """

    name = "poly.scop"

    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    context = prop_def(StringAttr)
    body = region_def("single_block")

    # Not a SymbolTable: calls in statement bodies name the module's functions
    # (`@expf`), which a symbol table here would hide; `verify_` keeps the
    # statement names unique instead.
    traits = traits_def(SymbolOpInterface(), NoTerminator())

    def __init__(
        self,
        sym_name: str,
        params: Sequence[str],
        context: str,
        body: Region | Sequence[Operation],
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "params": ArrayAttr(StringAttr(p) for p in params),
                "context": StringAttr(context),
            },
            regions=[body if isinstance(body, Region) else Region(Block(body))],
        )

    @property
    def param_names(self) -> list[str]:
        """The parameter names, in order."""
        return [p.data for p in self.params]

    @property
    def statements(self) -> list[StmtOp]:
        """The statements, in order."""
        return [op for op in self.body.block.ops if isinstance(op, StmtOp)]

    @property
    def schedule(self) -> DomainOp:
        """The root of the schedule tree."""
        return next(op for op in self.body.block.ops if isinstance(op, DomainOp))

    def verify_(self) -> None:
        import islpy as isl

        context = verify_isl(self, "context", self.context.data, IslKind.SET)
        context_params = context.get_var_names(isl.dim_type.param)
        if context_params != self.param_names:
            raise VerifyException(
                f"'{self.name}' op params [{', '.join(self.param_names)}] differ "
                f"from the context parameters [{', '.join(context_params)}]"
            )
        n_roots = 0
        names: set[str] = set()
        for op in self.body.block.ops:
            if isinstance(op, DomainOp):
                n_roots += 1
            elif isinstance(op, StmtOp):
                if op.sym_name.data in names:
                    raise VerifyException(
                        f"'{self.name}' op has two statements named @{op.sym_name.data}"
                    )
                names.add(op.sym_name.data)
            else:
                raise VerifyException(
                    f"'{self.name}' op body may only hold poly.stmt and poly.domain, "
                    f"got '{op.name}'"
                )
        if n_roots != 1:
            raise VerifyException(
                f"'{self.name}' op expected exactly one poly.domain schedule, "
                f"got {n_roots}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" params [")
        printer.print_list(self.param_names, printer.print_string)
        printer.print_string("] context ")
        printer.print_string_literal(self.context.data)
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        sym_name = parser.parse_symbol_name().data
        parser.parse_keyword("params")
        params = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_identifier
        )
        parser.parse_keyword("context")
        context = parser.parse_str_literal("scop context")
        attributes = _parse_attributes(parser)
        op = cls(sym_name, params, context, _with_block(parser.parse_region()))
        op.attributes |= attributes
        return op


@irdl_op_definition
class PartialOp(IRDLOperation):
    """This thread's partial value of a block-cooperative reduction.

    `%p = poly.partial @S4 : f32`

    Statement `@S4`'s update is marked `block_reduction` (`poly-block-reduction`):
    each GPU thread combines the values of the instances it runs into a partial
    value of its own, which starts at the reduction's identity. `poly.partial`
    reads this thread's partial and resets it to the identity; the statement
    holding it combines the partials of the block's threads (`gpu.all_reduce`)
    and updates the reduction's element with the result.
    """

    name = "poly.partial"

    statement = prop_def(FlatSymbolRefAttrConstr)
    result = result_def()

    assembly_format = "$statement attr-dict `:` type($result)"

    traits = lazy_traits_def(lambda: (HasParent(StmtOp),))

    def __init__(self, statement: str, result_type: Attribute):
        super().__init__(properties={"statement": SymbolRefAttr(statement)}, result_types=[result_type])

    @property
    def statement_name(self) -> str:
        return self.statement.root_reference.data


Poly = Dialect(
    "poly",
    [
        ScopOp,
        StmtOp,
        PartialOp,
        DomainOp,
        BandOp,
        SequenceOp,
        SetOp,
        FilterOp,
        ContextOp,
        MarkOp,
        ExtensionOp,
    ],
)
