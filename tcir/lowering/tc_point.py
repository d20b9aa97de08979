"""Lower the tc ops of one iteration point to `memref`/`arith` ops.

A comprehension body (or a polyhedral statement's body) describes one point
of an iteration space; the loops around it are built by the caller. This
module clones such a body at given index values, turning `tc.read` into
`memref.load` and `tc.update`/`tc.yield` into a load-combine-store.

An access promoted by `poly-promote` names its buffer (attribute `promoted`)
and the buffer index as an affine map of the enclosing statement's iterators
(`promoted_map`, symbols named by `promoted_symbols`); it loads from and
stores to that buffer instead of the tensor.

A statement padded to whole tiles (`poly-pad-tiles`) has instances past the
tensors' edges: a read of a tensor there names the dimensions that may
pass its shape (`clamp`), each subscript clamped to the last element (the
value read is never stored), and an update the dimensions to test
(`clip`): it runs only within the shape. A read with `clip` (of a tensor
that the def writes) reads only within the shape, zero past it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.ir.affine import AffineExpr

from tcir.dialects.nvgpu import WarpgroupGenerateDescriptorOp
from tcir.dialects.tc import ReadOp, SizeOp, TensorType, UpdateOp, YieldOp
from tcir.lowering.affine_to_arith import as_index, index_constant, materialize

PROMOTED = "promoted"
"""Attribute of a promoted `tc.read`/`tc.update`: the name of its buffer."""
PROMOTED_MAP = "promoted_map"
"""Attribute: the buffer index, an affine map of the statement's iterators."""
PROMOTED_SYMBOLS = "promoted_symbols"
"""Attribute: the size names bound to the symbols of `promoted_map`."""
ATOMIC = "atomic"
"""Unit attribute of a `tc.update` that several GPU threads combine into one
element (`poly-parallel-reduction`): lowered for a kernel to `memref.atomic_rmw`."""
CLAMP = "clamp"
"""Attribute of a `tc.read` of a padded statement (`poly-pad-tiles`): the
dimensions whose subscript may pass the tensor's shape, clamped to its last
element (an array of integers)."""
CLAMP_GROUP = "clamp_group"
"""Attribute of a clamped `tc.read` of a copy in aligned groups of W
elements (`VectorCopy`): the last dimension is clamped a group at a time,
`min(i, E - W + i mod W)` for a size E that W divides, so that a group past
the edge reads the last group whole (`gpu-vectorize-copies` moves it as
one vector)."""
CLIP = "clip"
"""Attribute of a `tc.update` of a padded statement, or of a `tc.read` of a
tensor that the def writes: the dimensions whose subscript may pass the
tensor's shape; the access runs only within it (a read is zero past it)."""
BLOCK_REDUCTION = "block_reduction"
"""Unit attribute of a `tc.update` whose values each GPU thread combines into
a partial value of its own, which a block-wide statement then combines
across the block (`poly-block-reduction`)."""


def _unsigned(element_type: Attribute) -> bool:
    return (
        isinstance(element_type, IntegerType)
        and element_type.signedness.data == Signedness.UNSIGNED
    )


def identity(reduction: str, element_type: Attribute) -> Attribute:
    """The neutral element of a reduction operator (`+`, `*`, `min`, `max`)."""
    if isinstance(element_type, AnyFloat):
        value = {"+": 0.0, "*": 1.0, "min": math.inf, "max": -math.inf}[reduction]
        return FloatAttr(value, element_type)
    assert isinstance(element_type, IntegerType)
    width = element_type.width.data
    if _unsigned(element_type):
        low, high = 0, 2**width - 1
    else:
        low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    value = {"+": 0, "*": 1, "min": high, "max": low}[reduction]
    if value > 2 ** (width - 1) - 1:  # signless attribute of an unsigned value
        value -= 2**width
    return IntegerAttr(value, IntegerType(width))


def combine(
    builder: Builder, reduction: str, old: SSAValue, new: SSAValue, element_type: Attribute
) -> SSAValue:
    """`old <reduction> new` with the arith op for the element type."""
    if isinstance(element_type, AnyFloat):
        ops = {
            "+": arith.AddfOp,
            "*": arith.MulfOp,
            "min": arith.MinimumfOp,
            "max": arith.MaximumfOp,
        }
    elif _unsigned(element_type):
        ops = {"+": arith.AddiOp, "*": arith.MuliOp, "min": arith.MinUIOp, "max": arith.MaxUIOp}
    else:
        ops = {"+": arith.AddiOp, "*": arith.MuliOp, "min": arith.MinSIOp, "max": arith.MaxSIOp}
    return builder.insert(ops[reduction](old, new)).result


def reduction_of(kind: str) -> str | None:
    """`+=!` -> `+`; `=` -> None."""
    stem = kind.rstrip("!")
    return None if stem == "=" else stem[:-1]


@dataclass
class PointLowering:
    """Where the tc values of a def live once lowered.

    `values` maps tc tensors to memrefs and tc scalars to lowered scalars;
    `sizes` maps size names to `index` values; `buffers` maps the names of
    promoted buffers to their memrefs.
    """

    values: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    sizes: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    buffers: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    #: The `clip` tests that the guard of the body being lowered makes true.
    implied: set[Hashable] = field(default_factory=set[Hashable])

    def subscripts(
        self,
        builder: Builder,
        exprs: Sequence[AffineExpr],
        operands: Sequence[SSAValue],
        symbols: Sequence[str],
    ) -> list[SSAValue]:
        dims = [as_index(builder, self.lookup(v)) for v in operands]
        syms = [self.sizes[name] for name in symbols]
        return [materialize(builder, e, dims, syms) for e in exprs]

    def target(
        self, builder: Builder, op: ReadOp | UpdateOp | WarpgroupGenerateDescriptorOp
    ) -> tuple[SSAValue, list[SSAValue]]:
        """The memref `op` accesses and the indices: the tensor's, or the
        promoted buffer's."""
        buffer = op.attributes.get(PROMOTED)
        if buffer is None:
            subscripts = self.subscripts(builder, op.subscripts, op.subscript_operands, op.symbol_names)
            if isinstance(op, ReadOp):
                group = op.attributes.get(CLAMP_GROUP)
                width = group.value.data if isinstance(group, IntegerAttr) else 1
                for k, last in self._unimplied(op, CLAMP):
                    subscripts[k] = _clamped(builder, subscripts[k], last, width if k == len(subscripts) - 1 else 1)
            return self.values[op.tensor], subscripts
        assert isinstance(buffer, StringAttr)
        index = op.attributes[PROMOTED_MAP]
        assert isinstance(index, AffineMapAttr)
        names = op.attributes.get(PROMOTED_SYMBOLS, ArrayAttr([]))
        assert isinstance(names, ArrayAttr)
        iterators = op.parent_block().args  # pyright: ignore[reportOptionalMemberAccess]
        symbols = [n.data for n in names.data]  # pyright: ignore[reportAttributeAccessIssue]
        return self.buffers[buffer.data], self.subscripts(builder, index.data.results, iterators, symbols)

    def lookup(self, value: SSAValue) -> SSAValue:
        return self.values.get(value, value)

    def store(
        self,
        builder: Builder,
        buffer: SSAValue,
        element_type: Attribute,
        kind: str,
        value: SSAValue,
        indices: Sequence[SSAValue],
    ) -> None:
        """`buffer[indices] kind value` for an update kind (`=`, `+=`, ...)."""
        reduction = reduction_of(kind)
        if reduction is not None:
            old = builder.insert(memref.LoadOp.get(buffer, indices)).res
            value = combine(builder, reduction, old, value, element_type)
        builder.insert(memref.StoreOp.get(value, buffer, indices))

    def update(self, builder: Builder, op: UpdateOp) -> None:
        """Lower a `tc.update`: load, combine, store."""
        destination, subscripts = self.target(builder, op)
        element = op.tensor_type.element_type
        self.store(builder, destination, element, op.kind.data, self.lookup(op.value), subscripts)

    def clone_point(
        self, builder: Builder, body: Block, indices: Sequence[SSAValue]
    ) -> SSAValue | None:
        """Clone `body` at `indices`; returns the yielded value, if any.

        `tc.update` ops are lowered to stores; a `tc.yield` is not cloned, its
        (lowered) operand is returned for the caller to store.
        """
        self.values.update(zip(body.args, indices))
        guarded = self._clip_body(builder, body)
        builder = guarded or builder
        for op in body.ops:
            if isinstance(op, YieldOp):
                return self.lookup(op.value)
            if isinstance(op, ReadOp):
                self.values[op.result] = self._read(builder, op)
            elif isinstance(op, SizeOp):
                symbols = [self.sizes[name] for name in op.symbol_names]
                self.values[op.result] = materialize(builder, op.size, [], symbols)
            elif isinstance(op, UpdateOp):
                (self.update if guarded else self._clipped_update)(builder, op)
            elif isinstance(op, WarpgroupGenerateDescriptorOp) and isinstance(op.source.type, TensorType):
                source, subscripts = self.target(builder, op)  # pyright: ignore[reportArgumentType]
                descriptor = builder.insert(WarpgroupGenerateDescriptorOp(source, subscripts))
                self.values[op.result] = descriptor.result
            elif isinstance(op, scf.IfOp):
                self._conditional(builder, op)
            else:
                self._clone(builder, op)
        if guarded:
            self.implied = set()
        return None

    def _read(self, builder: Builder, op: ReadOp) -> SSAValue:
        """The value `op` reads; where it has `clip` subscripts and is not
        promoted, under a test of them against the tensor's shape (zero
        past it)."""
        source, subscripts = self.target(builder, op)
        outside = self._unimplied(op, CLIP) if PROMOTED not in op.attributes else []
        if not outside:
            return builder.insert(memref.LoadOp.get(source, subscripts)).res
        load = memref.LoadOp.get(source, subscripts)
        zero = arith.ConstantOp(identity("+", op.result.type))
        guarded = builder.insert(
            scf.IfOp(
                _inside(builder, subscripts, outside), [op.result.type],
                Region(Block([load, scf.YieldOp(load.res)])), Region(Block([zero, scf.YieldOp(zero.result)])),
            )
        )  # fmt: skip
        return guarded.results[0]

    def _clip_body(self, builder: Builder, body: Block) -> Builder | None:
        """Where `body`'s only op with an effect is an update with a
        `_clip_test`: a builder into that test's branch, for the whole body;
        otherwise None.

        A padded point past the edge then computes nothing. (With the store
        alone guarded, ptxas 13.0 at -O2 miscompiled an f16 product that
        accumulates in global memory; ptxas -O1 compiled it right.)"""
        updates = [op for op in body.ops if isinstance(op, UpdateOp)]
        if len(updates) != 1 or any(isinstance(op, YieldOp) for op in body.ops):
            return None
        (op,) = updates
        inner = self._clip_test(builder, op)
        if inner is not None:
            self.implied = {_test(op, k, last) for k, last in _outside(op, CLIP)} - {None}
        return inner

    def _clip_test(self, builder: Builder, op: UpdateOp) -> Builder | None:
        """Where `op` has `clip` subscripts and is not promoted: a test of
        them against the tensor's shape, and a builder into its branch;
        otherwise None."""
        outside = _outside(op, CLIP) if PROMOTED not in op.attributes else []
        if not outside:
            return None
        subscripts = self.subscripts(builder, op.subscripts, op.subscript_operands, op.symbol_names)
        then = Block([scf.YieldOp()])
        builder.insert(scf.IfOp(_inside(builder, subscripts, outside), [], Region(then), Region(Block([scf.YieldOp()]))))
        return Builder(InsertPoint.before(then.last_op))  # pyright: ignore[reportArgumentType]

    def _unimplied(self, op: ReadOp, attribute: str) -> list[tuple[int, int]]:
        """`_outside(op, attribute)` less the tests that the guard of the
        body makes true."""
        return [(k, last) for k, last in _outside(op, attribute) if _test(op, k, last) not in self.implied]

    def _clipped_update(self, builder: Builder, op: UpdateOp) -> None:
        """`op` lowered, under its `_clip_test` where it has one."""
        self.update(self._clip_test(builder, op) or builder, op)

    def _conditional(self, builder: Builder, op: scf.IfOp) -> None:
        """An `scf.if` of the body (a guarded ternary), its branches lowered
        like the body: reads in a branch run only when it is taken."""
        regions = []
        for region in (op.true_region, op.false_region):
            block = Block()
            self.clone_point(Builder(InsertPoint.at_end(block)), region.block, [])
            regions.append(Region(block))
        lowered = builder.insert(scf.IfOp(self.lookup(op.cond), op.result_types, regions[0], regions[1]))
        self.values.update(zip(op.results, lowered.results))

    def _clone(self, builder: Builder, op: Operation) -> None:
        clone = op.clone(value_mapper=dict(self.values))
        builder.insert(clone)
        self.values.update(zip(op.results, clone.results))


def _inside(builder: Builder, subscripts: Sequence[SSAValue], outside: list[tuple[int, int]]) -> SSAValue:
    """Whether `subscripts` are within the last indices of `outside` (dimension, last index)."""
    inside: SSAValue | None = None
    for k, last in outside:
        test = builder.insert(arith.CmpiOp(subscripts[k], index_constant(builder, last), "sle")).result
        inside = test if inside is None else builder.insert(arith.AndIOp(inside, test)).result
    assert inside is not None
    return inside


def _clamped(builder: Builder, index: SSAValue, last: int, width: int) -> SSAValue:
    """`min(index, last)`; for groups of `width` (dividing `last + 1`),
    `min(index, last + 1 - width + index mod width)`."""
    if width == 1:
        return builder.insert(arith.MinSIOp(index, index_constant(builder, last))).result
    lane = builder.insert(arith.RemSIOp(index, index_constant(builder, width))).result
    bound = builder.insert(arith.AddiOp(index_constant(builder, last + 1 - width), lane)).result
    return builder.insert(arith.MinSIOp(index, bound)).result


def _test(op: ReadOp | UpdateOp, k: int, last: int) -> Hashable:
    """What a test of `op`'s subscript `k` against `last` compares, in terms
    of the point's indices (None where the subscript uses another value)."""
    if not all(isinstance(v, BlockArgument) for v in op.subscript_operands):
        return None
    indices = [AffineExpr.dimension(v.index) for v in op.subscript_operands]  # pyright: ignore
    symbols = [AffineExpr.symbol(j) for j in range(len(op.symbol_names))]
    return op.subscripts[k].replace_dims_and_symbols(indices, symbols), tuple(op.symbol_names), last


def _outside(op: ReadOp | UpdateOp, attribute: str) -> list[tuple[int, int]]:
    """The dimensions that `op`'s `attribute` (`clamp`, `clip`) names and the
    last index of each in the tensor's shape."""
    dims = op.attributes.get(attribute)
    if dims is None:
        return []
    shape = op.tensor_type.static_shape()
    assert isinstance(dims, ArrayAttr) and shape is not None, f"'{attribute}' needs a tensor of static shape"
    return [(d.value.data, shape[d.value.data] - 1) for d in dims.data]  # pyright: ignore
