"""A def lowered in parts, each with its own default mapping, as one program.

    parts = split_def(definition, [[0], [1, 2, 3], [4, 5]])  # statement groups
    module = lowered_in_parts(tc_module, definition, binding, parts, lower)

One set of `MappingOptions` maps every kernel of a def alike. Where its
statements want different mappings (attention: a batched contraction for
the scores, a softmax over their rows, a contraction for the weighted
values), the default mapping (`tcir.compiler.defaults.default_partition`)
splits the def into sub-defs of consecutive statements, lowers each with
its own default, and this module joins them again: one `gpu.module` with
every part's kernels, and the host function of the whole def, which
allocates its temporaries once and launches the parts' kernels in order.
A tensor that a part writes and a later one reads is an output of the
first and an input of the second (a temporary of the whole def, allocated
by its host function). A temporary that a part would compute elementwise
from one tensor of its own shape (and smaller ones), as batch norm's
`d(n,c,h,w) = X(n,c,h,w) - mean(c)`, is recomputed where later parts read it
instead (`recomputed`): reading `X` again costs less than writing and
reading `d`, as PyTorch's compilers fuse such producers into their consumers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from xdsl.builder import Builder
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tcir.compiler.options import specialize_pass
from tcir.dialects.tc import DefOp
from tcir.frontend import ast as A
from tcir.frontend.subscripts import accesses, index_names, rebuild
from tcir.lowering.def_function import DefFunction
from tcir.passmanager import PassManager
from tcir.runtime.signature import Binding
from tcir.transforms.convert_poly_to_gpu import KERNEL_MODULE


def _reads(stmts: Sequence[A.Stmt]) -> set[str]:
    return {n.tensor for s in stmts for n in accesses(s.rhs)}


def _recomputable(
    definition: A.CheckedDef, stmts: Sequence[A.Stmt], groups: Sequence[Sequence[int]], g: int
) -> A.Stmt | None:
    """The statement of group `g` where it is a temporary's one elementwise
    statement, reading only inputs and earlier groups' tensors, at most one
    of them at every index of its own (`d(n,c,h,w) = X(n,c,h,w) - mean(c)`),
    and every later statement that reads it reads each of its elements at one
    instance (no reuse to pay for again: a contraction's operand is read at
    every point of the other operand's dimensions)."""
    if len(groups[g]) != 1:
        return None
    stmt = stmts[groups[g][0]]
    if stmt.op != "=" or stmt.reduction_indices or stmt.scatter is not None or stmt.loop is not None or stmt.where:
        return None
    if stmt.lhs not in {t.name for t in definition.temporaries}:
        return None
    earlier = {stmts[k].lhs for h in groups[:g] for k in h} | {p.name for p in definition.inputs}
    reads = accesses(stmt.rhs)
    if any(read.tensor not in earlier for read in reads):
        return None
    if len({read.tensor for read in reads if set(stmt.lhs_indices) <= index_names(read)}) > 1:
        return None
    for later in (stmts[k] for h in groups[g + 1 :] for k in h):
        uses = [read for read in accesses(later.rhs) if read.tensor == stmt.lhs]
        if any(not set(later.loop_order) <= index_names(read) for read in uses):
            return None
        if any(read.tensor == stmt.lhs for e in later.scatter or [] for read in accesses(e)):
            return None  # a scatter's target subscripts are not substituted
    return stmt


def _substituted(e: A.Expr, stmt: A.Stmt) -> A.Expr:
    """`e` with each read of `stmt`'s tensor replaced by `stmt`'s right-hand
    side at the read's subscripts."""

    def leaf(node: A.Expr) -> A.Expr | None:
        if not isinstance(node, A.Access) or node.tensor != stmt.lhs:
            return None
        at = dict(zip(stmt.lhs_indices, (_substituted(s, stmt) for s in node.subscripts), strict=True))
        value = rebuild(stmt.rhs, lambda n: at.get(n.name) if isinstance(n, A.IndexVar) else None)
        return value if value.type == node.type else A.Cast(x=value, type=node.type, loc=node.loc)

    return rebuild(e, leaf)


def recomputed(definition: A.CheckedDef, groups: Sequence[Sequence[int]]) -> tuple[A.CheckedDef, list[list[int]]]:
    """`definition` and `groups` without the groups of temporaries that
    later groups recompute where they read them (`_recomputable`)."""
    stmts = list(definition.stmts)
    kept: list[list[int]] = []
    for g, group in enumerate(groups):
        stmt = _recomputable(definition, stmts, groups, g)
        if stmt is None:
            kept.append(list(group))
            continue
        for h in groups[g + 1 :]:
            for k in h:
                stmts[k] = replace(stmts[k], rhs=_substituted(stmts[k].rhs, stmt))
    return replace(definition, stmts=stmts), kept


def split_def(definition: A.CheckedDef, groups: Sequence[Sequence[int]]) -> list[A.CheckedDef] | None:
    """A sub-def per group of consecutive statements (indices in order), or
    None where a tensor is written by two groups, or a stepped loop (whose
    statements run step by step together) falls in two."""
    written: dict[str, int] = {}
    loops: dict[str, int] = {}
    for g, group in enumerate(groups):
        for k in group:
            stmt = definition.stmts[k]
            if written.setdefault(stmt.lhs, g) != g or stmt.loop and loops.setdefault(stmt.loop.label, g) != g:
                return None
    results = {p.name for p in definition.outputs}
    produced = [*definition.outputs, *definition.temporaries]
    parts: list[A.CheckedDef] = []
    for g, group in enumerate(groups):
        stmts = [definition.stmts[k] for k in group]
        later = _reads([definition.stmts[k] for h in groups[g + 1 :] for k in h])
        mine = {s.lhs for s in stmts}
        reads = _reads(stmts)
        outputs = [p for p in produced if p.name in mine and (p.name in results or p.name in later)]
        temporaries = [p for p in produced if p.name in mine and p not in outputs]
        inputs = [p for p in definition.inputs if p.is_scalar or p.name in reads]
        inputs += [p for p in produced if p.name in reads and p.name not in mine]
        parts.append(
            A.CheckedDef(
                name=f"{definition.name}_part{g}",
                loc=definition.loc,
                size_params=definition.size_params,
                scalar_size_params=definition.scalar_size_params,
                inputs=inputs,
                outputs=outputs,
                temporaries=temporaries,
                stmts=stmts,
                derived_sizes=definition.derived_sizes,
            )
        )
    return parts


Lower = Callable[[A.CheckedDef], ModuleOp]
"""Lowers a sub-def to kernels and its host function (with its own default)."""


def _tensor_names(definition: A.CheckedDef) -> list[str]:
    """The names of a def's arguments (inputs, then outputs) in its host
    function's order. (SSA name hints lose a `_1` suffix: `d_O` and `d_O_1`
    would both be `d_O`.)"""
    return [p.name for p in (*definition.inputs, *definition.outputs)]


def lowered_in_parts(
    module: ModuleOp,
    definition: A.CheckedDef,
    binding: Binding,
    parts: Sequence[A.CheckedDef],
    lower: Lower,
    extra_sizes: dict[str, int] | None = None,
) -> ModuleOp:
    """The def of `module` (its `tc` module), `definition`, as one module
    whose host function runs `parts` (see `split_def`) in order, each
    lowered by `lower`. A part may take sizes the def lacks (`extra_sizes`:
    constants) and view the def's tensors with fewer dimensions (a
    collapsed def: `tcir.frontend.collapse`)."""
    whole = module.clone()
    PassManager.parse(specialize_pass(binding.sizes)).run(whole)
    tc_def = next(op for op in whole.ops if isinstance(op, DefOp))
    host = DefFunction.start(tc_def)
    names = _tensor_names(definition)
    values: dict[str, SSAValue] = {arg.name_hint or "": arg for arg in host.block.args[len(names) :]}  # sizes
    for name, size in (extra_sizes or {}).items():
        if name not in values:
            values[name] = host.builder.insert(arith.ConstantOp(IntegerAttr(size, IndexType()))).result
    values |= dict(zip(names, host.block.args, strict=False))
    values |= dict(zip((t.name for t in definition.temporaries), host.temporaries, strict=True))
    kernels: list[Operation] = []
    declarations: dict[str, Operation] = {}  # the C math functions the kernels call
    for part in parts:
        module = lower(part)
        for kernel_module in [op for op in module.ops if isinstance(op, gpu.ModuleOp)]:
            for inner in list(kernel_module.body.block.ops):
                inner.detach()
                if isinstance(inner, func.FuncOp):
                    declarations.setdefault(inner.sym_name.data, inner)
                else:
                    kernels.append(inner)
        entry = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == part.name)
        _inline_host(entry, part, values, host.builder)
    top = host.finish()
    body = Block([*declarations.values(), *kernels])
    kernel_module = gpu.ModuleOp(StringAttr(KERNEL_MODULE), Region(body))  # pyright: ignore
    result = ModuleOp([kernel_module, top])
    result.attributes["gpu.container_module"] = UnitAttr()
    return result


def _viewed(value: SSAValue, view: Attribute, builder: Builder) -> SSAValue:
    """`value`, a row-major buffer, as a memref of type `view`: itself, or
    its `memref.collapse_shape` where `view` merges runs of its dimensions."""
    if value.type == view or not isinstance(view, MemRefType) or not isinstance(value.type, MemRefType):
        return value
    shape, view_shape = value.type.get_shape(), view.get_shape()
    groups: list[list[int]] = []
    k = 0
    for extent in view_shape:  # the source dims whose product is each view dim, in order
        group, k = [k], k + 1
        while math.prod(shape[d] for d in group) < extent:
            group, k = [*group, k], k + 1
        groups.append(group)
    groups[-1] += range(k, len(shape))  # trailing unit dims
    assert [math.prod(shape[d] for d in g) for g in groups] == list(view_shape)
    reassociation = ArrayAttr([ArrayAttr([IntegerAttr(k, i64) for k in g]) for g in groups])
    op = memref.CollapseShapeOp(operands=[value], result_types=[view], properties={"reassociation": reassociation})
    return builder.insert(op).result


def _inline_host(entry: func.FuncOp, part: A.CheckedDef, values: dict[str, SSAValue], builder: Builder) -> None:
    """Clone the launches of `part`'s host function `entry` at `builder`,
    its arguments and temporaries those of the whole def (by name)."""
    args, names = entry.body.block.args, _tensor_names(part)
    mapper: dict[SSAValue, SSAValue] = {arg: values[arg.name_hint or ""] for arg in args[len(names) :]}  # sizes
    for arg, name in zip(args, names, strict=False):
        mapper[arg] = _viewed(values[name], arg.type, builder)
    temporaries = {t.name for t in part.temporaries}
    own: set[SSAValue] = set()  # what the part's passes allocate (half sums' f32 accumulators): its own
    for op in entry.body.block.ops:
        if isinstance(op, memref.AllocOp) and op.memref.name_hint in temporaries:
            mapper[op.memref] = values[op.memref.name_hint or ""]
        elif isinstance(op, memref.AllocOp):
            own.add(op.memref)
            builder.insert(op.clone(value_mapper=mapper))
        elif isinstance(op, memref.DeallocOp) and op.memref in own:
            builder.insert(op.clone(value_mapper=mapper))
        elif not isinstance(op, memref.DeallocOp | func.ReturnOp):
            builder.insert(op.clone(value_mapper=mapper))
