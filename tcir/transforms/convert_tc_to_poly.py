"""`convert-tc-to-poly`: replace the comprehensions of each `tc.def` by a `poly.scop`.

The scop's parameters are the def's size names, assumed positive (the
context). Each comprehension gives polyhedral statements, named `S0`, `S1`,
... in program order:

- an initializing kind (`+=!`, ...) first gives a statement over the left-hand
  side indices storing the operator's identity;
- a statement that reads the tensor it writes other than pointwise reads a
  copy instead (a new `tc.alloc` temporary, filled by a copy statement just
  before it), so that its whole right-hand side sees the old values, as TC's
  semantics (and `convert-tc-to-loops`) require;
- the update statement: domain from the inferred ranges, body = the
  comprehension's body with `tc.yield` replaced by a `tc.update` of the
  left-hand side. A reduction whose body yields `c ? x : identity` with `c`
  affine in the indices and sizes (a padded convolution's guard) has its
  domain cut to where `c` holds and yields `x` (`tcir.polyhedral.guards`).

A scatter (a `tc.yield` naming the element it updates) initializes the
whole tensor, and its update writes that element: a may-write of the whole
dimension where the subscript is indirect.

Access relations name tensors by their TC names. Affine subscripts become
exact relations; a subscript using a value read from a tensor (`X(I(i))`) may
read the whole tensor dimension. An update kind other than `=` also reads the
element it updates. Every footprint must lie within its tensor's extent, else
a `TCError` names the tensor. Ranges, sizes and subscripts must be affine in
the sizes: semi-affine ones (a stride given as a scalar input) are rejected
until `tc-specialize` makes them constant.

The schedule is the paper's canonical tree: a sequence with one filter per
statement, each with a permutable identity band whose left-hand side members
are coincident (reduction members are not). The statements of a stepped loop
(`loop "t" along %t`) keep it (`poly.stmt ... loop "t" dim 0`) and share one
band over its steps above their sequence (`tcir.polyhedral.canonical`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import islpy as isl
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.diagnostics import anchored
from tcir.dialects.poly import DomainOp, ScopOp, StmtOp
from tcir.dialects.tc import (
    AllocOp,
    ComprehensionOp,
    DefOp,
    ReadOp,
    TensorType,
    UpdateOp,
    YieldOp,
)
from tcir.errors import TCError
from tcir.lowering.tc_point import identity, reduction_of
from tcir.polyhedral.affine_isl import IslAffineBuilder, NotAffine, box, relation
from tcir.polyhedral.canonical import canonical_subtree
from tcir.polyhedral.guards import guarded_reduction, unguard


ISL_KEYWORDS = frozenset(
    "exists and or implies not mod min max rat infty floor ceil floord ceild true false".split()
)
"""Words isl's parser reserves: an index named `min` becomes `min_`."""


def _fresh(name: str | None, fallback: str, taken: set[str]) -> str:
    """`name` made a unique isl identifier (`fallback` when unusable)."""
    base = name if name is not None and name.isidentifier() else fallback
    if base in ISL_KEYWORDS:
        base += "_"
    result, k = base, 0
    while result in taken:
        k += 1
        result = f"{base}_{k}"
    taken.add(result)
    return result


def context_text(params: Sequence[str]) -> str:
    """The scop context: every size is positive."""
    constraints = " and ".join(f"{p} >= 1" for p in params)
    return f"[{', '.join(params)}] -> {{ : {constraints} }}"


def _identity_update(tensor: SSAValue, kind: str, value: SSAValue, indices: Sequence[SSAValue]) -> UpdateOp:
    """`tc.update %tensor[%indices...] kind %value`."""
    subscripts = [AffineExpr.dimension(k) for k in range(len(indices))]
    return UpdateOp(tensor, kind, value, subscripts, indices)


@dataclass
class ScopExtraction:
    """Builds the `poly.scop` of one `tc.def`."""

    definition: DefOp
    params: list[str] = field(init=False)
    context: isl.Set = field(init=False)
    tensor_names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    statements: list[StmtOp] = field(default_factory=list[StmtOp])
    copies: list[AllocOp] = field(default_factory=list[AllocOp])
    taken: set[str] = field(default_factory=set[str])

    def __post_init__(self) -> None:
        self.params = self.definition.size_names()
        self.context = isl.Set(context_text(self.params))
        self.taken.update(self.params)
        for arg, name in zip(self.definition.body.block.args, self.definition.names):
            if isinstance(arg.type, TensorType):
                self.tensor_names[arg] = _fresh(name, "T", self.taken)
        for op in self.definition.body.block.ops:
            if isinstance(op, AllocOp):
                self.tensor_names[op.result] = _fresh(op.result.name_hint, "tmp", self.taken)

    def _error(self, message: str) -> TCError:
        return TCError(f"convert-tc-to-poly: @{self.definition.sym_name.data}: {message}")

    def _affine(self, builder: IslAffineBuilder, expr: AffineExpr, what: str) -> isl.PwAff:
        try:
            return builder.build(expr)
        except NotAffine as e:
            raise self._error(
                f"{what} is not affine in the sizes ({e}); specialize the sizes first"
            ) from None

    # -- isl objects ----------------------------------------------------------------

    def space(self, name: str, dims: Sequence[str]) -> isl.Space:
        """The set space `name[dims...]` with the scop's parameters."""
        space = isl.Space.create_from_names(
            isl.DEFAULT_CONTEXT, set=list(dims), params=self.params
        )
        return space.set_tuple_name(isl.dim_type.set, name)

    def statement_space(self, name: str, indices: Sequence[BlockArgument]) -> isl.Space:
        taken = set(self.params)
        names = [_fresh(arg.name_hint, f"i{k}", taken) for k, arg in enumerate(indices)]
        return self.space(name, names)

    def sizes(self, tensor: SSAValue, space: isl.Space) -> list[isl.PwAff]:
        """The sizes of `tensor`, as functions on `space`."""
        type = tensor.type
        assert isinstance(type, TensorType)
        builder = IslAffineBuilder(space, (), type.symbol_names)
        what = f"a size of '{self.tensor_names[tensor]}'"
        return [self._affine(builder, d, what) for d in type.dims]

    def bounds(self, tensor: SSAValue, space: isl.Space) -> list[tuple[isl.PwAff, isl.PwAff]]:
        """`[0, size)` per dimension of `tensor`, as functions on `space`."""
        zero = IslAffineBuilder(space).constant(0)
        return [(zero, size) for size in self.sizes(tensor, space)]

    def tensor_space(self, tensor: SSAValue) -> isl.Space:
        assert isinstance(tensor.type, TensorType)
        dims = [f"a{d}" for d in range(tensor.type.rank)]
        return self.space(self.tensor_names[tensor], dims)

    def access(
        self,
        domain: isl.Set,
        tensor: SSAValue,
        subscripts: Sequence[AffineExpr],
        builder: IslAffineBuilder,
        guarded: bool = False,
    ) -> isl.Map:
        """Instances of `domain` -> the elements of `tensor` they access; an
        indirect subscript ranges over the whole dimension. Out-of-bounds
        footprints raise a `TCError`, but for a `guarded` read (in a branch of
        the body, made only where it is in bounds), which is clipped to them."""
        outputs: list[isl.PwAff | None] = []
        for subscript in subscripts:
            try:
                outputs.append(builder.build(subscript))
            except NotAffine:
                outputs.append(None)
        name = self.tensor_names[tensor]
        space = self.tensor_space(tensor)
        bounds = self.bounds(tensor, space)
        extent = box(space, bounds)
        whole = [None if out is not None else b for out, b in zip(outputs, bounds)]
        access = relation(domain.get_space(), name, outputs).intersect_range(box(space, whole))
        if guarded:
            return access.intersect_range(extent)
        outside = access.intersect_domain(domain).range().subtract(extent)
        if not outside.intersect_params(self.context).is_empty():
            raise self._error(
                f"out-of-bounds access to '{name}' in {domain.get_tuple_name()}: "
                f"elements {outside.to_str()} are outside its extent"
            )
        return access

    # -- statements ---------------------------------------------------------------------

    def add_statement(
        self,
        domain: isl.Set,
        reads: list[isl.Map],
        write: isl.Map,
        body: Region,
        comp: ComprehensionOp | None = None,
        may_write: bool = False,
    ) -> None:
        """A statement (of `comp`: its stepped loop, if any)."""
        name = domain.get_tuple_name()
        reads_text = isl.UnionMap.empty(domain.get_space().params())
        for read in reads:
            reads_text = reads_text.union(isl.UnionMap.from_map(read))
        loop = None
        if comp is not None and comp.loop is not None and comp.loop_index is not None:
            loop = (comp.loop.data, comp.loop_index.data)
        self.statements.append(
            StmtOp(name, domain.to_str(), reads_text.to_str(), write.to_str(), body, may_write, loop=loop)
        )

    def next_name(self) -> str:
        return f"S{len(self.statements)}"

    def _dims(self, operands: Sequence[SSAValue], indices: Sequence[SSAValue]) -> list[int | str | None]:
        """Per subscript operand: its domain position, size name, or None."""
        names = dict(zip(self.definition.body.block.args, self.definition.names))
        dims: list[int | str | None] = []
        for value in operands:
            if value in indices:
                dims.append(list(indices).index(value))
            elif isinstance(value.type, IntegerType) and names.get(value) in self.params:
                dims.append(names[value])  # pyright: ignore[reportArgumentType]
            else:
                dims.append(None)
        return dims

    def ranges(self, comp: ComprehensionOp, space: isl.Space, count: int) -> isl.Set:
        builder = IslAffineBuilder(space, (), comp.symbol_names)
        what = f"a range of {space.get_tuple_name(isl.dim_type.set)}"
        bounds = [
            (self._affine(builder, lo, what), self._affine(builder, hi, what))
            for lo, hi in comp.ranges[:count]
        ]
        return box(space, bounds)

    def init_statement(self, comp: ComprehensionOp, reduction: str) -> None:
        rank = comp.lhs_type.rank
        if comp.is_scatter:  # the whole tensor
            space = self.space(self.next_name(), [f"a{d}" for d in range(rank)])
            domain = box(space, self.bounds(comp.lhs, space))
            hints = [f"a{d}" for d in range(rank)]
        else:
            space = self.statement_space(self.next_name(), comp.lhs_indices)
            domain = self.ranges(comp, space, rank)
            hints = [index.name_hint for index in comp.lhs_indices]
        block = Block(arg_types=[IndexType()] * rank)
        for arg, hint in zip(block.args, hints):
            arg.name_hint = hint
        neutral = arith.ConstantOp(identity(reduction, comp.lhs_type.element_type))
        block.add_ops([neutral, _identity_update(comp.lhs, "=", neutral.result, block.args)])
        write = self.access(domain, comp.lhs, [AffineExpr.dimension(k) for k in range(rank)], IslAffineBuilder(domain.get_space(), list(range(rank))))
        self.add_statement(domain, [], write, Region(block), comp)

    def copy_statement(self, tensor: SSAValue) -> SSAValue:
        """A copy of `tensor` into a new temporary, made by a new statement."""
        type = tensor.type
        assert isinstance(type, TensorType)
        alloc = AllocOp(type, f"{self.tensor_names[tensor]}_old")
        self.copies.append(alloc)
        self.tensor_names[alloc.result] = _fresh(alloc.result.name_hint, "tmp", self.taken)
        space = self.space(self.next_name(), [f"a{d}" for d in range(type.rank)])
        domain = box(space, self.bounds(tensor, space))
        block = Block(arg_types=[IndexType()] * type.rank)
        for k, arg in enumerate(block.args):
            arg.name_hint = f"a{k}"
        subscripts = [AffineExpr.dimension(k) for k in range(type.rank)]
        read = ReadOp(tensor, subscripts, block.args)
        block.add_ops([read, _identity_update(alloc.result, "=", read.result, block.args)])
        builder = IslAffineBuilder(space, list(range(type.rank)))
        self.add_statement(
            domain,
            [self.access(domain, tensor, subscripts, builder)],
            self.access(domain, alloc.result, subscripts, builder),
            Region(block),
        )
        return alloc.result

    def update_statement(self, comp: ComprehensionOp, reduction: str | None) -> None:
        snapshot = self.copy_statement(comp.lhs) if comp.reads_lhs_non_pointwise() else None
        rank = comp.lhs_type.rank
        space = self.statement_space(self.next_name(), comp.indices)
        domain = self.ranges(comp, space, len(comp.indices))
        body = comp.body.clone()
        block = body.block
        guard = guarded_reduction(block, reduction, space) if reduction is not None else None
        if guard is not None:  # instances that add the identity are left out
            domain = domain.intersect(guard)
            unguard(block)
        kind = "=" if reduction is None else reduction + "="
        yield_op = block.last_op
        assert isinstance(yield_op, YieldOp)
        scatter = yield_op.subscripts
        if scatter is None:
            update = _identity_update(comp.lhs, kind, yield_op.value, block.args[:rank])
        else:
            operands = list(yield_op.subscript_operands)
            update = UpdateOp(comp.lhs, kind, yield_op.value, scatter, operands, yield_op.symbol_names)
        Rewriter.replace_op(yield_op, update)
        reads: list[isl.Map] = []
        for op in block.walk():
            if isinstance(op, ReadOp):
                if snapshot is not None and op.tensor is comp.lhs:
                    op.operands[0] = snapshot
                dims = self._dims(op.subscript_operands, block.args)
                builder = IslAffineBuilder(space, dims, op.symbol_names)
                guarded = op.parent_block() is not block
                reads.append(self.access(domain, op.tensor, op.subscripts, builder, guarded))
        if scatter is None:
            lhs = [AffineExpr.dimension(k) for k in range(rank)]
            write = self.access(domain, comp.lhs, lhs, IslAffineBuilder(space, list(range(rank))))
        else:
            dims = self._dims(update.subscript_operands, block.args)
            write = self.access(domain, comp.lhs, scatter, IslAffineBuilder(space, dims, update.symbol_names))
        if reduction is not None:
            reads.append(write)
        may = scatter is not None and None in self._dims(update.subscript_operands, block.args)
        self.add_statement(domain, reads, write, body, comp, may)

    def comprehension(self, comp: ComprehensionOp) -> None:
        reduction = reduction_of(comp.kind.data)
        if comp.kind.data.endswith("!"):
            assert reduction is not None
            self.init_statement(comp, reduction)
        self.update_statement(comp, reduction)

    # -- the scop ----------------------------------------------------------------------

    def scop(self) -> ScopOp:
        """The scop of the statements, with the canonical schedule tree."""
        domain = isl.UnionSet.empty(self.context.get_space())
        for stmt in self.statements:
            domain = domain.union(isl.UnionSet.from_set(isl.Set(stmt.domain.data)))
        root = DomainOp(domain.to_str(), canonical_subtree(self.statements))
        ops: list[Operation] = [*self.statements, root]
        return ScopOp(self.definition.sym_name.data, self.params, self.context.to_str(), ops)


def convert_def(definition: DefOp) -> ScopOp:
    """Replace the comprehensions of `definition` by a scop; returns it."""
    extraction = ScopExtraction(definition)
    comprehensions = list(definition.comprehensions())
    for comp in comprehensions:
        extraction.comprehension(comp)
    scop = extraction.scop()
    block = definition.body.block
    for comp in comprehensions:
        Rewriter.erase_op(comp)
    Rewriter.insert_op([*extraction.copies, scop], InsertPoint.at_end(block))
    return scop


@dataclass(frozen=True)
class ConvertTcToPolyPass(ModulePass):
    """Replace the comprehensions of every `tc.def` by one `poly.scop` with the
    canonical schedule tree."""

    name = "convert-tc-to-poly"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for definition in anchored([d for d in op.walk() if isinstance(d, DefOp) and any(d.comprehensions())]):
            convert_def(definition)
