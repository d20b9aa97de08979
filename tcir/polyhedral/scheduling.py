"""Scheduling strategies over isl's scheduler (the paper's section 4.2).

The original TC steered fusion with a merge callback of its own isl fork;
upstream isl lacks it, so each fusion strategy is a list of isl option sets,
tried in order until one gives an acceptable schedule:

- `min`: every strongly connected component of the dependence graph on its
  own (`schedule_serialize_sccs`), i.e. no fusion;
- `max`: isl's clustering, its top-level sequence's outer members fused
  where every dependence keeps them equal (`fuse_outer_members`: a row-wise
  chain over one outer band); else the whole dependence graph at once
  (`schedule_whole_component`, `schedule_maximize_band_depth`, proximity =
  all dependences), with coefficients and constant terms bounded so the
  ILPs stay small; then `min`. (The whole-component ILPs grow with the
  sizes' constants: seconds for a 32768x4096 softmax, where clustering
  takes milliseconds.)
- `preserve3`: the same attempts as `max`, but one is only accepted if the
  outermost band keeps as many leading coincident members as the statements
  have parallel dimensions, up to three (blocks and threads); else `min`;
- `outer`: `preserve3`, then the outermost members of the bands of a
  top-level sequence fused into one outer band where every dependence keeps
  its instances at equal values of it: a chain of layers over a batch
  (MLP3) becomes one band over the batch with each layer's own parallel band
  below it, so one kernel's blocks own slices of the batch and run every
  layer on them (see `fuse_outer_members`).

Each attempt runs under `max_operations` (isl's operation counter), so a
scheduler run that would take too long fails and the next, less fused,
attempt runs; the canonical tree is the last resort. isl options are per
context: they are set on the context of the scop's objects and restored.

isl has no option to forbid skewing or negative coefficients; instead the
computed tree is cut at the first band member that has them and the
canonical order of the statements there is put below (any subtree of a valid
schedule may execute its statements in program order). Finally, members
that involve a reduction dimension are never coincident.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import islpy as isl
from xdsl.dialects.builtin import DenseArrayBase, i1
from xdsl.rewriter import Rewriter

from tcir.dialects.poly import (
    BandOp,
    DomainOp,
    FilterOp,
    ScheduleNodeOp,
    ScopOp,
    SequenceOp,
    StmtOp,
)
from tcir.errors import TCError
from tcir.polyhedral.bands import statement_names
from tcir.polyhedral.canonical import canonical_subtree, reduction_dims
from tcir.polyhedral.dependences import compute_dependences
from tcir.polyhedral.schedule_tree import schedule_from_isl
from tcir.polyhedral.scop import scop_context, scop_domain

IslOptions = dict[str, int]

_MIN: IslOptions = {"schedule_serialize_sccs": 1, "schedule_whole_component": 0}
_WHOLE: IslOptions = {
    "schedule_serialize_sccs": 0,
    "schedule_whole_component": 1,
    "schedule_max_coefficient": 1,
    "schedule_max_constant_term": 0,
}
_CLUSTER: IslOptions = {
    "schedule_serialize_sccs": 0,
    "schedule_whole_component": 0,
    "schedule_maximize_band_depth": 1,
    "schedule_maximize_coincidence": 1,
    "schedule_outer_coincidence": 1,
}

WHOLE_COMPONENT_STATEMENTS = 16
"""Most statements a scop may have for the whole-component attempt: isl's
ILPs there ignore `max_operations`, and an attention's derived backward (28
statements) did not finish in 5 minutes."""

WHOLE_COMPONENT_EXTENT = 1024
"""Longest loop a scop may have for the whole-component attempt, for the
same reason: a column-wise softmax of 2048 x 1024 points took isl 27 s
there, of 4096 x 1024 60 s (1024 x 1024: 0.4 s)."""


def _largest_extent(scop: ScopOp) -> int:
    """The most values any dimension of a statement's domain takes (0 where
    one is unbounded)."""
    largest = 0
    for stmt in scop.statements:
        domain = isl.Set(stmt.domain.data)
        for d in range(domain.dim(isl.dim_type.set)):
            low, high = domain.dim_min_val(d), domain.dim_max_val(d)
            if low.is_int() and high.is_int():
                largest = max(largest, int(high.to_python()) - int(low.to_python()) + 1)
    return largest


FUSION_ATTEMPTS: dict[str, list[IslOptions]] = {
    "min": [_MIN],
    "max": [_CLUSTER, _WHOLE, _MIN],
    "preserve3": [_CLUSTER, _WHOLE, _MIN],
    "outer": [_CLUSTER, _WHOLE, _MIN],
}
"""The isl option sets tried, in order, for each fusion strategy."""


@contextmanager
def isl_options(ctx: isl.Context, options: IslOptions) -> Iterator[None]:
    """Set isl options on `ctx` for the duration of the block."""
    saved = {name: getattr(ctx, f"get_{name}")() for name in options}
    try:
        for name, value in options.items():
            getattr(ctx, f"set_{name}")(value)
        yield
    finally:
        for name, value in saved.items():
            getattr(ctx, f"set_{name}")(value)


@dataclass(frozen=True)
class SchedulingStrategy:
    """How to schedule: fusion strategy, allowed transformations, isl budget."""

    fusion: str = "max"
    allow_skewing: bool = False
    positive_coefficients: bool = True
    max_operations: int = 2_000_000

    def __post_init__(self) -> None:
        if self.fusion not in FUSION_ATTEMPTS:
            raise TCError(
                f"poly-schedule: unknown fusion '{self.fusion}' "
                f"(expected one of {', '.join(FUSION_ATTEMPTS)})"
            )

    def schedule(self, scop: ScopOp) -> DomainOp:
        """A new schedule tree for `scop` (ops, not yet inserted): the first
        attempt that is acceptable and has one outer band over all statements,
        else the first acceptable one, else the canonical tree; with `outer`,
        its outer members fused where legal."""
        root = self._schedule(scop)
        if self.fusion == "outer":
            return fuse_outer_members(root, compute_dependences(scop).validity) or root
        return root

    def _schedule(self, scop: ScopOp) -> DomainOp:
        constraints = _constraints(scop)
        fallback = None
        for options in FUSION_ATTEMPTS[self.fusion]:
            if options is _WHOLE and (
                len(scop.statements) > WHOLE_COMPONENT_STATEMENTS or _largest_extent(scop) > WHOLE_COMPONENT_EXTENT
            ):
                continue
            schedule = self._run(constraints, options)
            if schedule is None:
                continue
            root = self.restrict(scop, schedule_from_isl(schedule))
            if self.fusion in ("preserve3", "outer") and not _preserves_parallelism(scop, root):
                continue
            if isinstance(root.child, BandOp):
                return root
            if self.fusion == "max":  # the clusters' outer members fused: one outer band, cheaply
                fused = fuse_outer_members(root, compute_dependences(scop).validity)
                if fused is not None:
                    return fused
            fallback = fallback or root
        return fallback or DomainOp(scop.schedule.value, canonical_subtree(scop.statements))

    def _run(
        self, constraints: isl.ScheduleConstraints, options: IslOptions
    ) -> isl.Schedule | None:
        """isl's schedule under `options`, or None if it ran out of operations."""
        ctx = constraints.get_ctx()
        limits = {"max_operations": self.max_operations}
        with isl_options(ctx, {**options, **limits}):
            ctx.reset_operations()
            try:
                return constraints.compute_schedule()
            except isl.Error:
                return None

    def restrict(self, scop: ScopOp, root: DomainOp) -> DomainOp:
        """`root` with disallowed members cut away and reduction members made
        non-coincident."""
        self._restrict(root, {stmt.sym_name.data: stmt for stmt in scop.statements})
        return root

    def _restrict(self, node: ScheduleNodeOp, statements: dict[str, StmtOp]) -> None:
        if isinstance(node, BandOp):
            members = band_members(node)
            first_bad = next(
                (k for k, m in enumerate(members) if not self._allowed(m)), None
            )
            if first_bad is not None:
                kept = _cut(node, first_bad, _reaching_statements(node, statements))
                if kept is not None:
                    _mark_reductions(kept, statements)
                    _split_parallel_prefix(kept)
                return
            _mark_reductions(node, statements)
            node = _split_parallel_prefix(node)
        for child in node.children:
            self._restrict(child, statements)

    def _allowed(self, member: list[tuple[str, isl.Aff]]) -> bool:
        for _, aff in member:
            coefficients = [
                aff.get_coefficient_val(isl.dim_type.in_, d).to_python()
                for d in range(aff.dim(isl.dim_type.in_))
            ]
            if self.positive_coefficients and any(c < 0 for c in coefficients):
                return False
            if not self.allow_skewing and sum(c != 0 for c in coefficients) > 1:
                return False
        return True


def _constraints(scop: ScopOp) -> isl.ScheduleConstraints:
    """Validity, proximity and coincidence: all dependences."""
    dependences = compute_dependences(scop).validity
    return (
        isl.ScheduleConstraints.on_domain(scop_domain(scop))
        .set_context(scop_context(scop))
        .set_validity(dependences)
        .set_proximity(dependences)
        .set_coincidence(dependences)
    )


def band_members(band: BandOp) -> list[list[tuple[str, isl.Aff]]]:
    """Per member of `band`: (statement name, affine function) pieces."""
    partial = isl.MultiUnionPwAff(band.schedule.data)
    members: list[list[tuple[str, isl.Aff]]] = []
    for k in range(partial.dim(isl.dim_type.set)):
        functions = partial.get_union_pw_aff(k).get_pw_aff_list()
        pieces: list[tuple[str, isl.Aff]] = []
        for i in range(functions.n_pw_aff()):
            function = functions.get_at(i)
            name = function.get_tuple_id(isl.dim_type.in_).get_name()
            pieces += [(name, aff) for _, aff in function.get_pieces()]
        members.append(pieces)
    return members


def _reaching_statements(
    node: ScheduleNodeOp, statements: dict[str, StmtOp]
) -> list[StmtOp]:
    """The statements whose instances reach `node`, in statement order."""
    parent = node.parent_op()
    while not isinstance(parent, FilterOp | DomainOp):
        assert parent is not None, "a schedule node lies below a filter or the domain"
        parent = parent.parent_op()
    names = statement_names(isl.UnionSet(parent.value))
    return [stmt for name, stmt in statements.items() if name in names]


def _members(band: BandOp, start: int, stop: int) -> str:
    """The partial schedule of members `[start, stop)` of `band`."""
    partial = isl.MultiUnionPwAff(band.schedule.data)
    n_member = partial.dim(isl.dim_type.set)
    partial = partial.drop_dims(isl.dim_type.set, stop, n_member - stop)
    return partial.drop_dims(isl.dim_type.set, 0, start).to_str()


def _split_parallel_prefix(band: BandOp) -> BandOp:
    """Split `band` after its leading coincident members, if it has others too,
    so that the outer band is the parallel one (as mapping to blocks needs).
    Returns the innermost band of the split."""
    n_member = len(band.coincident_flags)
    parallel = _leading_coincident(band)
    if parallel in (0, n_member):
        return band
    permutable = band.permutable is not None
    child = band.child
    if child is not None:
        child.detach()
    flags = band.coincident_flags
    inner = BandOp(_members(band, parallel, n_member), flags[parallel:], permutable, None, child)
    outer = BandOp(_members(band, 0, parallel), flags[:parallel], permutable, None, inner)
    Rewriter.replace_op(band, outer)
    return inner


def _cut(band: BandOp, keep: int, statements: list[StmtOp]) -> BandOp | None:
    """Keep the first `keep` members of `band`; the canonical order of
    `statements` replaces the rest and the subtree below. Returns the band
    left, if any."""
    replacement = canonical_subtree(statements)
    kept = None
    if keep > 0:
        flags = band.coincident_flags[:keep]
        permutable = band.permutable is not None
        partial = _members(band, 0, keep)
        replacement = kept = BandOp(partial, flags, permutable, None, replacement)
    if replacement is None:
        Rewriter.erase_op(band)
    else:
        Rewriter.replace_op(band, replacement)
    return kept


def _mark_reductions(band: BandOp, statements: dict[str, StmtOp]) -> None:
    """Members that involve a reduction dimension are not coincident."""
    flags = list(band.coincident_flags)
    for k, member in enumerate(band_members(band)):
        for name, aff in member:
            for d in reduction_dims(statements[name]):
                if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero():
                    flags[k] = False
    band.properties["coincident"] = DenseArrayBase.from_list(i1, [int(f) for f in flags])


def _leading_coincident(band: BandOp) -> int:
    flags = band.coincident_flags
    return next((k for k, flag in enumerate(flags) if not flag), len(flags))


def _outermost_bands(node: ScheduleNodeOp) -> Iterator[BandOp]:
    if isinstance(node, BandOp):
        yield node
        return
    for child in node.children:
        yield from _outermost_bands(child)


def _preserves_parallelism(scop: ScopOp, root: DomainOp) -> bool:
    """Whether every outermost band has as many leading coincident members as
    the statements it schedules have parallel dimensions, up to three."""
    statements = {stmt.sym_name.data: stmt for stmt in scop.statements}
    for band in _outermost_bands(root):
        names = {name for member in band_members(band) for name, _ in member}
        target = 3
        for name in names:
            stmt = statements[name]
            n_dim = isl.Set(stmt.domain.data).dim(isl.dim_type.set)
            target = min(target, n_dim - len(reduction_dims(stmt)))
        if _leading_coincident(band) < target:
            return False
    return True


def fuse_outer_members(root: DomainOp, validity: isl.UnionMap) -> DomainOp | None:
    """`root`'s top-level sequence of bands as one band of their first
    members above the sequence of what remains of them, or None where the
    tree has no such sequence or a dependence would relate different values
    of the first member (it must be coincident, hence also legal: the
    sequence below keeps the order of the rest). As many leading members
    are fused as every band has coincident and no dependence relates
    different values of (a softmax over the rows of a 3-d tensor: both row
    indices)."""
    sequence = root.child
    if not isinstance(sequence, SequenceOp):
        return None
    filters = list(sequence.children)
    assert all(isinstance(f, FilterOp) for f in filters), "a sequence's children are filters"
    bands = [f.child for f in filters]
    if not all(isinstance(b, BandOp) and b.coincident_flags[0] for b in bands):
        return None
    depth = min(_leading_coincident(b) for b in bands)  # type: ignore[arg-type]
    partials = [isl.MultiUnionPwAff(b.schedule.data) for b in bands]  # type: ignore[union-attr]
    for count in range(depth, 0, -1):
        outer = _union_of_members(partials, count)
        time = isl.UnionMap.from_multi_union_pw_aff(outer)
        distances = validity.apply_domain(time).apply_range(time)
        zero = isl.UnionSet(f"{{ [{', '.join(['0'] * count)}] }}", context=validity.get_ctx())
        if distances.deltas().is_subset(zero):
            break
    else:
        return None
    fused: list[FilterOp] = []
    for node, band in zip(filters, bands):
        assert isinstance(band, BandOp)
        child = band.child
        if child is not None:
            child.detach()
        flags = band.coincident_flags
        if len(flags) > count:
            permutable = band.permutable is not None
            child = BandOp(_members(band, count, len(flags)), flags[count:], permutable, None, child)
        fused.append(FilterOp(node.value, child))
    band = BandOp(outer.to_str(), [True] * count, True, None, SequenceOp(fused))
    return DomainOp(root.value, band)


def _union_of_members(partials: list[isl.MultiUnionPwAff], count: int) -> isl.MultiUnionPwAff:
    """The first `count` members of the bands' partial schedules, on the union of their domains."""
    members = []
    for k in range(count):
        member = partials[0].get_union_pw_aff(k)
        for partial in partials[1:]:
            member = member.union_add(partial.get_union_pw_aff(k))
        members.append(member)
    space = partials[0].get_space().drop_dims(isl.dim_type.set, count, partials[0].dim(isl.dim_type.set) - count)
    result = isl.UnionPwAffList.alloc(isl.DEFAULT_CONTEXT, count)
    for member in members:
        result = result.add(member)
    return isl.MultiUnionPwAff.from_union_pw_aff_list(space, result)
