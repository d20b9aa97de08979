"""Block-cooperative reductions: a reduction's points spread over a block's threads.

A reduction statement `S` (`s(b) += e(b, n)`, `n` reduced) whose innermost
band over its reduction dimensions can run on the threads of a block is
rewritten so that each thread combines its share of the points into a
partial value of its own, and a new statement `S_combine`, right after the
outermost band over those dimensions, combines the block's partials and
updates the element:

- `S`'s `tc.update` gets the unit attribute `block_reduction`, and its
  access relations lose the reduced tensor (the update goes to the thread's
  partial, which no other statement sees);
- `S_combine[b]` (S's domain without the reduced dimensions) reads and
  writes `s[b]`; its body is `%p = poly.partial @S`, `%t = gpu.all_reduce
  <op> %p`, and `S`'s update of `s[b]` by `%t`; it follows `S` in program
  order and, in the schedule tree, the outermost band over `S`'s reduction
  dimensions (a sequence is made there), scheduled by the bands above
  like `S`;
- the members of that innermost band become coincident, so that
  `poly-map-to-gpu` maps them to threads.

`S_combine` is *block-wide*: every thread of the block runs it (the
all-reduce needs them all), and only one of them updates the element.

Where it applies: `+=`, `*=`, `max=` and `min=` updates of float or integer
elements whose only self-dependences relate instances updating one element,
the statement at one leaf of the tree, the bands from the outermost one over
its reduction dimensions down to the leaf scheduling only those dimensions
for it (its other dimensions are fixed above, as the block's row is), and
no band below the innermost one; a band above the outermost one (blocks map
the tree's first band; a band of a tile's rows may be between, which
threads y can map), no band between the outermost and the innermost one
coincident (threads map the innermost one alone), and a member of the
innermost one taking several values for the statement at fixed outer loops.
It is legal when no other statement below
the outermost band depends on `S` (none reads the element while it is being
reduced), and the innermost band's members carry no dependence once `S`'s
accesses to the element are gone (checked with isl on the dependences of the
rewritten scop).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import islpy as isl
from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, IndexType, IntegerType, StringAttr, UnitAttr, i1
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.poly import (
    BandOp,
    DomainOp,
    FilterListNodeOp,
    FilterOp,
    PartialOp,
    ScheduleNodeOp,
    ScopOp,
    SequenceOp,
    StmtOp,
)
from tcir.dialects.tc import ReadOp, UpdateOp
from tcir.lowering.tc_point import ATOMIC, BLOCK_REDUCTION
from tcir.polyhedral.canonical import reduction_dims
from tcir.polyhedral.dependences import compute_dependences, statement_dependences
from tcir.polyhedral.scop import scop_context, scop_schedule, set_scop_schedule

ALL_REDUCE_OPS = {"+=": "add", "*=": "mul", "max=": "max", "min=": "min"}
"""`gpu.all_reduce` operations of the update kinds that a block can combine."""
COMBINE_SUFFIX = "_combine"


def _reducible(stmt: StmtOp) -> UpdateOp | None:
    """`stmt`'s final update, where its partial values can be combined."""
    update = stmt.body.block.last_op
    if stmt.step_loop is not None:
        return None  # a step of a recurrence: its combine would have to be a step too
    if (
        not isinstance(update, UpdateOp)
        or update.kind.data not in ALL_REDUCE_OPS
        or ATOMIC in update.attributes
        or BLOCK_REDUCTION in update.attributes
        or not reduction_dims(stmt)
    ):
        return None
    element = update.tensor_type.element_type
    if not (isinstance(element, AnyFloat) or (isinstance(element, IntegerType) and element.width.data in (32, 64))):
        return None
    if any(isinstance(op, ReadOp) and op.tensor == update.tensor for op in stmt.body.walk()):
        return None  # it reads its own element: the partial would hide the value
    return update


def _path_to(root: DomainOp, instances: isl.UnionSet) -> list[ScheduleNodeOp] | None:
    """The nodes from `root` down to the one leaf that all `instances` reach,
    or None where they are split over several leaves."""
    path: list[ScheduleNodeOp] = [root]
    node: ScheduleNodeOp | None = root.child
    while node is not None:
        if isinstance(node, FilterListNodeOp):
            reaching = [f for f in node.children if not instances.intersect(isl.UnionSet(f.value)).is_empty()]
            if len(reaching) != 1:
                return None
            node = reaching[0]
            continue
        if isinstance(node, FilterOp):
            kept = instances.intersect(isl.UnionSet(node.value))
            if not kept.is_equal(instances):
                return None
        path.append(node)
        node = node.child
    return path


def _pieces(band: BandOp, name: str) -> list[list[isl.Aff]]:
    """Per member of `band`, the affine pieces of statement `name`."""
    partial = isl.MultiUnionPwAff(band.schedule.data)
    members: list[list[isl.Aff]] = []
    for k in range(partial.dim(isl.dim_type.set)):
        functions = partial.get_union_pw_aff(k).get_pw_aff_list()
        pieces: list[isl.Aff] = []
        for i in range(functions.n_pw_aff()):
            function = functions.get_at(i)
            if function.get_tuple_id(isl.dim_type.in_).get_name() == name:
                pieces += [aff for _, aff in function.get_pieces()]
        members.append(pieces)
    return members


def _involves(pieces: list[isl.Aff], dims: list[int]) -> bool:
    return any(aff.involves_dims(isl.dim_type.in_, d, 1) for aff in pieces for d in dims)


@dataclass
class _Plan:
    """Where a block reduction of `stmt` goes: its outermost and innermost
    bands over its reduction dimensions, and the path down to the former."""

    stmt: StmtOp
    update: UpdateOp
    path: list[ScheduleNodeOp]
    top: BandOp
    inner: BandOp


def _plan(scop: ScopOp, stmt: StmtOp) -> _Plan | None:
    update = _reducible(stmt)
    if update is None:
        return None
    name = stmt.sym_name.data
    reduced = reduction_dims(stmt)
    kept = [d for d in range(len(stmt.body.block.args)) if d not in reduced]
    path = _path_to(scop.schedule, isl.UnionSet(stmt.domain.data))
    if path is None:
        return None
    bands = [n for n in path if isinstance(n, BandOp)]
    over = [b for b in bands if any(_involves(p, reduced) for p in _pieces(b, name))]
    if not over or over[-1] is not bands[-1]:
        return None  # no band over the reduction, or one below it (threads would map that one)
    top, inner = over[0], over[-1]
    below = bands[bands.index(top) :]
    if any(_involves(p, kept) for b in below for p in _pieces(b, name)):
        return None  # the element changes below `top`: no single place for the combine
    if top is bands[0] or any(any(b.coincident_flags) for b in below[1:-1]):
        return None  # blocks would take the reduction, or threads a band above its own
    plan = _Plan(stmt, update, path[: path.index(top) + 1], top, inner)
    return plan if _varies(plan) else None


def _varies(plan: _Plan) -> bool:
    """Whether some member of the innermost band takes several values for
    `plan`'s statement once the bands above are fixed: threads then map it
    (a skewed schedule can leave it one value, and threads the output)."""
    path = _path_down_to(plan)
    own = isl.UnionSet(plan.stmt.domain.data)
    outer = _prefix(path, own, include_last=False)
    partial = isl.MultiUnionPwAff(plan.inner.schedule.data)
    for k in range(partial.dim(isl.dim_type.set)):
        member = isl.UnionMap.from_union_pw_aff(partial.get_union_pw_aff(k)).intersect_domain(own)
        if not outer.reverse().apply_range(member).is_single_valued():
            return True
    return False


def _instances_at(path: list[ScheduleNodeOp]) -> isl.UnionSet:
    """The statement instances reaching the last node of `path`."""
    root = path[0]
    assert isinstance(root, DomainOp)
    instances = isl.UnionSet(root.value)
    for node in path:
        if isinstance(node, FilterOp):
            instances = instances.intersect(isl.UnionSet(node.value))
    return instances


def _projection(stmt: StmtOp, combine: str) -> isl.Map:
    """`{ S[i] -> S_combine[i without the reduced dimensions] }`."""
    domain = isl.Set(stmt.domain.data)
    projection = isl.Map.identity(domain.get_space().map_from_set())
    for d in reversed(reduction_dims(stmt)):
        projection = projection.project_out(isl.dim_type.out, d, 1)
    return projection.set_tuple_name(isl.dim_type.out, combine).intersect_domain(domain)


def _without(relation: str, tensor: str) -> str:
    """`relation` (isl text) without its maps to `tensor`."""
    kept = isl.UnionMap.empty(isl.UnionMap(relation).get_space())
    maps = isl.UnionMap(relation).get_map_list()
    for k in range(maps.n_map()):
        if maps.get_at(k).get_tuple_name(isl.dim_type.out) != tensor:
            kept = kept.union(isl.UnionMap.from_map(maps.get_at(k)))
    return kept.to_str()


Divisor = tuple[arith.DivfOp, list[Operation]]
"""A sum's division by `d` and the ops that compute `d` (see `_divisor`)."""


def _divisor(stmt: StmtOp, update: UpdateOp) -> Divisor | None:
    """Where `update` adds `e / d` for a `d` that is the same at every
    reduced point (computed without reads or reduced indices: a mean's
    `N`), the division and the ops that compute `d`, in program order."""
    division = update.value.owner
    if update.kind.data != "+=" or not isinstance(division, arith.DivfOp) or division.result.has_more_than_one_use():
        return None
    reduced = {stmt.body.block.args[d] for d in reduction_dims(stmt)}
    ops: set[Operation] = set()
    stack: list[SSAValue] = [division.rhs]
    while stack:
        value = stack.pop()
        if isinstance(value, BlockArgument):
            if value in reduced:
                return None
            continue
        owner = value.owner
        assert isinstance(owner, Operation)
        if isinstance(owner, ReadOp) or owner.regions:
            return None
        if owner not in ops:
            ops.add(owner)
            stack.extend(owner.operands)
    return division, [op for op in stmt.body.block.ops if op in ops]


def _combine_statement(plan: _Plan, projection: isl.Map, divisor: Divisor | None) -> StmtOp:
    """`S_combine`: the block's partials combined into `S`'s element. Where
    `S` adds `e / d` with `d` the same for the whole sum (`_divisor`), the
    partials sum the `e`s (`_undivided`) and `S_combine` divides their
    total by `d` once (a sum's rounding is not kept exactly anyway: its
    order changes)."""
    stmt, update = plan.stmt, plan.update
    name = projection.get_tuple_name(isl.dim_type.out)
    domain = projection.range()
    writes = isl.UnionMap(stmt.writes.data).apply_domain(isl.UnionMap.from_map(projection))
    reduced = set(reduction_dims(stmt))
    block = Block(arg_types=[IndexType()] * domain.dim(isl.dim_type.set))
    old_args = [a for a in stmt.body.block.args if a.index not in reduced]
    for old, new in zip(old_args, block.args):
        new.name_hint = old.name_hint
    element = update.tensor_type.element_type
    partial = PartialOp(stmt.sym_name.data, element)
    total = gpu.AllReduceOp.from_op(
        gpu.AllReduceOpAttr(gpu.AllReduceOpEnum(ALL_REDUCE_OPS[update.kind.data])), partial.result, UnitAttr()
    )
    block.add_ops([partial, total])
    mapper: dict[SSAValue, SSAValue] = dict(zip(old_args, block.args))
    mapper[update.value] = total.result
    if divisor is not None:
        division, ops = divisor
        block.add_ops(op.clone(value_mapper=mapper) for op in ops)
        quotient = division.clone(value_mapper={**mapper, division.lhs: total.result})
        block.add_op(quotient)
        mapper[update.value] = quotient.result
    block.add_op(update.clone(value_mapper=mapper))
    relation = writes.to_str()
    return StmtOp(name, domain.to_str(), relation, relation, Region(block))


def _undivided(update: UpdateOp, divisor: Divisor) -> None:
    """`update` adding `e` where it added `e / d` (see `_divisor`)."""
    division, ops = divisor
    update.operands[1] = division.lhs
    Rewriter.erase_op(division)
    for op in reversed(ops):
        if all(not result.uses for result in op.results):
            Rewriter.erase_op(op)


def _coincident_when_rewritten(scop: ScopOp, plan: _Plan, combine: StmtOp, tensor: str) -> bool:
    """Whether the innermost band's members carry no dependence of the
    rewritten scop (`S` without its element, `combine` after it), and no
    other statement below the outermost band depends on `S`."""
    statements = []
    for s in scop.statements:
        key = (s.domain.data, s.reads.data, s.writes.data, s.may_write is not None)
        if s is plan.stmt:
            key = (s.domain.data, _without(s.reads.data, tensor), _without(s.writes.data, tensor), key[3])
            statements.append(key)
            statements.append((combine.domain.data, combine.reads.data, combine.writes.data, False))
            continue
        statements.append(key)
    below = _instances_at(plan.path)
    own = isl.UnionSet(plan.stmt.domain.data)
    original = compute_dependences(scop).validity
    if not original.intersect_domain(own).intersect_range(below.subtract(own)).is_empty():
        return False
    loops = tuple(s.step_loop for s in scop.statements)
    loops = (*loops[: scop.statements.index(plan.stmt) + 1], None, *loops[scop.statements.index(plan.stmt) + 1 :])
    rewritten = statement_dependences(scop.context.data, tuple(statements), loops).validity
    path = _path_down_to(plan)
    inner = _instances_at(path)
    rewritten = rewritten.intersect_domain(inner).intersect_range(inner).intersect_params(scop_context(scop))
    if rewritten.is_empty():
        return True
    outer = _prefix(path, inner, include_last=False)
    full = _prefix(path, inner, include_last=True)
    same_outer = outer.apply_range(outer.reverse())
    same_full = full.apply_range(full.reverse())
    return rewritten.intersect(same_outer).is_subset(same_full)


def _path_down_to(plan: _Plan) -> list[ScheduleNodeOp]:
    """The path from the root to the innermost band of `plan`."""
    path = list(plan.path)
    node: ScheduleNodeOp | None = plan.top
    own = isl.UnionSet(plan.stmt.domain.data)
    while node is not plan.inner:
        assert node is not None
        child = node.child
        if isinstance(child, FilterListNodeOp):
            child = next(f for f in child.children if not own.intersect(isl.UnionSet(f.value)).is_empty())
        node = child
        assert node is not None
        path.append(node)
    return path


def _prefix(path: list[ScheduleNodeOp], instances: isl.UnionSet, include_last: bool) -> isl.UnionMap:
    """The schedule of `instances` by the bands on `path` (the last one only
    if `include_last`), as a map to a flat tuple (sequences ignored: the
    instances compared share every sequence position on the path)."""
    result = isl.UnionMap.from_domain(instances)
    nodes = path if include_last else path[:-1]
    for node in nodes:
        if isinstance(node, BandOp):
            partial = isl.MultiUnionPwAff(node.schedule.data)
            relation = isl.UnionMap.from_multi_union_pw_aff(partial).intersect_domain(instances)
            result = result.flat_range_product(relation)
    return result


def _with_combine(node: ScheduleNodeOp, projection: isl.Map) -> None:
    """Add `S_combine`'s instances to `node` (an ancestor of `S`'s leaf):
    to a filter's or domain's set, to a band's members (`S`'s functions
    through `projection`, which they do not depend on the reduced part of)."""
    instances = isl.UnionSet.from_set(projection.range())
    if isinstance(node, FilterOp | DomainOp):
        node.properties[node.ISL_FIELD] = StringAttr(isl.UnionSet(node.value).union(instances).to_str())
        return
    if not isinstance(node, BandOp):
        return
    partial = isl.MultiUnionPwAff(node.schedule.data)
    upas = []
    inverse = isl.UnionMap.from_map(projection.reverse())
    for k in range(partial.dim(isl.dim_type.set)):
        upa = partial.get_union_pw_aff(k)
        values = inverse.apply_range(isl.UnionMap.from_union_pw_aff(upa))  # { S_combine[i] -> [v] }
        function = isl.UnionPwAff.from_pw_aff(isl.PwMultiAff.from_map(isl.Map.from_union_map(values)).get_pw_aff(0))
        upas.append(upa.union_add(function))
    space = partial.get_space()
    result = isl.MultiUnionPwAff.from_union_pw_aff_list(space, _upa_list(upas))
    node.properties["schedule"] = StringAttr(result.to_str())


def _upa_list(upas: list[isl.UnionPwAff]) -> isl.UnionPwAffList:
    result = isl.UnionPwAffList.alloc(isl.DEFAULT_CONTEXT, len(upas))
    for upa in upas:
        result = result.add(upa)
    return result


def _mark_coincident(band: BandOp) -> None:
    """Make every member of `band` coincident, each statement's function
    without its constant term: no dependence is carried there any more, so
    the statements' relative shifts (isl fuses loops by shifting them) do
    not order anything, and without them threads get the same elements in
    every statement."""
    partial = isl.MultiUnionPwAff(band.schedule.data)
    upas = []
    for k in range(partial.dim(isl.dim_type.set)):
        functions = partial.get_union_pw_aff(k).get_pw_aff_list()
        upa = isl.UnionPwAff.empty(partial.get_space().params())
        for i in range(functions.n_pw_aff()):
            function = functions.get_at(i)
            unshifted = None
            for domain, aff in function.get_pieces():
                piece = isl.PwAff.alloc(domain, aff.set_constant_val(isl.Val.zero(aff.get_ctx())))
                unshifted = piece if unshifted is None else unshifted.union_add(piece)
            assert unshifted is not None
            upa = upa.union_add(isl.UnionPwAff.from_pw_aff(unshifted))
        upas.append(upa)
    result = isl.MultiUnionPwAff.from_union_pw_aff_list(partial.get_space(), _upa_list(upas))
    band.properties["schedule"] = StringAttr(result.to_str())
    band.properties["coincident"] = DenseArrayBase.from_list(i1, [1] * len(band.coincident_flags))


def _apply(scop: ScopOp, plan: _Plan) -> None:
    stmt = plan.stmt
    name = stmt.sym_name.data
    tensor = isl.UnionMap(stmt.writes.data).get_map_list().get_at(0).get_tuple_name(isl.dim_type.out)
    projection = _projection(stmt, f"{name}{COMBINE_SUFFIX}")
    divisor = _divisor(stmt, plan.update)
    combine = _combine_statement(plan, projection, divisor)
    if not _coincident_when_rewritten(scop, plan, combine, tensor):
        return
    reaching = _instances_at(plan.path)
    for node in plan.path[:-1]:
        _with_combine(node, projection)
    below = FilterOp(reaching.to_str())
    Rewriter.insert_op(SequenceOp([below, FilterOp(combine.domain.data)]), InsertPoint.before(plan.top))
    plan.top.detach()
    below.body.block.add_op(plan.top)
    _mark_coincident(plan.inner)
    stmt.properties["reads"] = StringAttr(_without(stmt.reads.data, tensor))
    stmt.properties["writes"] = StringAttr(_without(stmt.writes.data, tensor))
    plan.update.attributes[BLOCK_REDUCTION] = UnitAttr()
    if divisor is not None:
        _undivided(plan.update, divisor)
    Rewriter.insert_op(combine, InsertPoint.after(stmt))


def _child_path(node: ScheduleNodeOp) -> tuple[int, ...]:
    """The positions of `node` and its ancestors among their parents' children, from the root."""
    path: list[int] = []
    while not isinstance(node, DomainOp):
        parent = node.parent_op()
        assert isinstance(parent, ScheduleNodeOp)
        path.append(parent.children.index(node))
        node = parent
    return tuple(reversed(path))


def _dependents(scop: ScopOp, plan: _Plan) -> isl.UnionSet:
    """The instances below the outermost band of the other statements that
    depend on `plan`'s statement, directly or through others there."""
    below = _instances_at(plan.path)
    validity = compute_dependences(scop).validity.intersect_domain(below).intersect_range(below)
    own = isl.UnionSet(plan.stmt.domain.data)
    reached = isl.UnionSet.empty(own.get_space())
    sources = own
    while True:
        targets = validity.intersect_domain(sources).range().subtract(own)
        statements = _statements_of(targets)
        more = reached.union(below.intersect(statements))
        if more.is_equal(reached):
            return reached
        reached = sources = more


def _statements_of(instances: isl.UnionSet) -> isl.UnionSet:
    """Every instance (the universe) of the statements that `instances` has some of."""
    sets = instances.get_set_list()
    result = isl.UnionSet.empty(instances.get_space())
    for k in range(sets.n_set()):
        result = result.union(isl.UnionSet.from_set(isl.Set.universe(sets.get_at(k).get_space())))
    return result


def _distributed(scop: ScopOp, plan: _Plan) -> bool:
    """Run what depends on `plan`'s statement below its outermost band after
    the rest, in a copy of the band of its own (loop distribution: isl's
    `order_after`), where no dependence runs from them back to the rest in
    one iteration of the loops above. Returns whether it did."""
    dependents = _dependents(scop, plan)
    if dependents.is_empty():
        return False
    rest = _instances_at(plan.path).subtract(dependents)
    schedule = scop_schedule(scop)
    node = schedule.get_root()
    for position in _child_path(plan.top):
        node = node.child(position)
    prefix = node.get_prefix_schedule_union_map()
    same = prefix.apply_range(prefix.reverse())
    backward = compute_dependences(scop).validity.intersect_domain(dependents).intersect_range(rest)
    if not backward.intersect(same).is_empty():
        return False
    set_scop_schedule(scop, node.order_after(dependents).get_schedule())
    return True


def _merged(scop: ScopOp, plan: _Plan) -> bool:
    """Make the bands from `plan`'s outermost band over the reduction down
    to its innermost one a single band, so that threads map every reduced
    dimension. Other statements that share the outermost band (a sum's
    initialization, which isl fuses into the loop over the first reduced
    dimension) run before the sum (isl's `order_before`), where no
    dependence runs from the sum back to them in one iteration of the loops
    above. Returns whether it did."""
    own = isl.UnionSet(plan.stmt.domain.data)
    others = _instances_at(plan.path).subtract(own)
    node = scop_schedule(scop).get_root()
    for position in _child_path(plan.top):
        node = node.child(position)
    if not others.is_empty():
        prefix = node.get_prefix_schedule_union_map()
        same = prefix.apply_range(prefix.reverse())
        backward = compute_dependences(scop).validity.intersect_domain(own).intersect_range(others)
        if not backward.intersect(same).is_empty():
            return False
        node = node.order_before(others)
    bands = []
    while node.get_type() == isl.schedule_node_type.band:
        bands.append(node.band_get_partial_schedule())
        node = node.delete()
    if len(bands) < 2 or node.get_type() != isl.schedule_node_type.leaf:
        return False  # something other than bands lies between the two
    merged = bands[0]
    for band in bands[1:]:
        merged = merged.flat_range_product(band)
    set_scop_schedule(scop, node.insert_partial_schedule(merged).get_schedule())
    return True


def block_reductions(scop: ScopOp) -> list[str]:
    """Rewrite every reduction of `scop` that can run block-cooperatively
    (see the module docstring), first distributing the loops that fuse it
    with what reads its result, and merging the bands over its reduced
    dimensions into one; returns the names of the statements rewritten."""
    done: list[str] = []
    for stmt in list(scop.statements):
        plan = _plan(scop, stmt)
        if plan is not None and _distributed(scop, plan):
            plan = _plan(scop, stmt)
        if plan is not None and plan.top is not plan.inner and _merged(scop, plan):
            plan = _plan(scop, stmt)
        if plan is None:
            continue
        before = len(scop.statements)
        _apply(scop, plan)
        if len(scop.statements) > before:
            done.append(stmt.sym_name.data)
    return done


def combine_statements(scop: ScopOp) -> Iterator[StmtOp]:
    """The block-wide statements of `scop` (those that combine partials)."""
    for stmt in scop.statements:
        if any(isinstance(op, PartialOp) for op in stmt.body.block.ops):
            yield stmt
