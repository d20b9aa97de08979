"""Statement domains padded to whole tiles (`poly-pad-tiles`).

A dimension whose size the tile does not divide (a 1000 x 1000 output on
64 x 64 tiles) leaves partial tiles at its edge, and isl's AST guards each
of their points: in an unrolled register tile those guards sit around
every product. Triton and CUTLASS compute every tile whole instead, the
points past the edge on values that are never stored. Here that is a
rewrite of the scop before tiling: in the outermost permutable band, a
member that is an output index of every statement below it (a subscript of
what each one writes, from 0 to a size E) and that its tile size T does not
divide gets the domains of those statements extended to the next multiple
of T. The instances past E are the padding:

- a read of a tensor names the dimensions in which it may pass the
  tensor's shape (`clamp`): the subscript is clamped to the last element
  (as is a copy's into a promoted buffer), so that every read stays within
  the tensor and every buffer element is written; a read of a tensor that
  the def writes (a ReLU after a sum, `O(b, n) = fmax(O(b, n), 0)`) is
  clipped instead (`clip`): a padded point reads zero there (a copy into a
  buffer too), where a clamped read would race with the thread that
  writes the element (in registers, it reads the padded point's own);
- an update names them too (`clip`): it runs only within the shape, and
  a copy of a promoted buffer back to the tensor copies only the elements
  within it.

A padded instance then computes something of clamped values and stores
nothing; the others compute what they did. Dependences were computed on
the exact domains, and the schedule stays valid: the padding writes no
element that anything reads. A band with a statement whose subscripts are
not all affine (gathers, scatters), that reads under a guard, or that
accumulates into a tensor that none of them sets (its values would be
copied in, clamped, while their owners store them) is left as it is; so
is a member whose index is not an output index of a box domain in every
statement of the band.
"""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr
from xdsl.ir import Block, SSAValue

from tcir.dialects.poly import ScopOp, StmtOp
from tcir.dialects.tc import AllocOp, DefOp, UpdateOp
from tcir.lowering.tc_point import ATOMIC, CLAMP, CLIP
from tcir.polyhedral.bands import is_band, statement_names
from tcir.polyhedral.promotion.references import Reference, references
from tcir.polyhedral.scop import scop_schedule
from tcir.polyhedral.tiling import tile_sizes

def _outer_bands(node: isl.ScheduleNode) -> list[isl.ScheduleNode]:
    """The outermost permutable bands below `node`, one per path."""
    if is_band(node) and node.band_get_permutable():
        return [node]
    return [band for k in range(node.n_children()) for band in _outer_bands(node.child(k))]


def _iterator(member: isl.UnionPwAff, domain: isl.Set) -> int | None:
    """The iterator of `domain`'s statement that `member` is on it, or None."""
    iterators = [_variable(domain, d) for d in range(domain.dim(isl.dim_type.set))]
    if not iterators:
        return None
    values = member.extract_pw_aff(iterators[0].get_space()).intersect_domain(domain)
    return next((d for d, iterator in enumerate(iterators) if iterator.is_equal(values)), None)


def _variable(domain: isl.Set, d: int) -> isl.PwAff:
    """Iterator `d` of `domain`'s statement, on `domain`."""
    local = isl.LocalSpace.from_space(domain.get_space())
    return isl.PwAff.var_on_domain(local, isl.dim_type.set, d).intersect_domain(domain)


def _extent(domain: isl.Set, d: int) -> int | None:
    """E where `domain` is its other dimensions' set times `0 <= i_d < E`."""
    rank = domain.dim(isl.dim_type.set)
    values = domain.project_out(isl.dim_type.set, d + 1, rank - d - 1).project_out(isl.dim_type.set, 0, d)
    if values.dim_min_val(0).to_python() != 0 or not values.dim_max_val(0).is_int():
        return None
    extent = int(values.dim_max_val(0).to_python()) + 1
    if not _with_range(domain, d, extent).is_equal(domain):
        return None
    return extent


def _with_range(domain: isl.Set, d: int, extent: int) -> isl.Set:
    """`domain` with `0 <= i_d < extent` for whatever bounds `i_d` had."""
    name = domain.get_dim_name(isl.dim_type.set, d)
    others = domain.project_out(isl.dim_type.set, d, 1).insert_dims(isl.dim_type.set, d, 1)
    others = others.set_dim_name(isl.dim_type.set, d, name).set_tuple_name(domain.get_tuple_name())
    return others.lower_bound_val(isl.dim_type.set, d, 0).upper_bound_val(isl.dim_type.set, d, extent - 1)


def _written_index(refs: list[Reference], d: int) -> bool:
    """Whether iterator `d` is a subscript of what the statement writes."""
    for ref in refs:
        if ref.writes and ref.access is not None:
            subscripts = isl.PwMultiAff.from_map(ref.access)
            iterator = _variable(ref.access.domain(), d)
            if any(subscripts.get_pw_aff(k).is_equal(iterator) for k in range(subscripts.dim(isl.dim_type.out))):
                return True
    return False


def _paddable(refs: list[Reference]) -> bool:
    """Affine, unguarded accesses to tensors of static shape, one of them a write."""
    return (
        any(r.writes for r in refs)
        and all(r.access is not None and r.indirection is None and not r.conditional for r in refs)
        and all(r.op.tensor_type.static_shape() is not None for r in refs)
    )


def _initialized(refs: list[Reference]) -> bool:
    """Whether every tensor that `refs` accumulate into (but atomically) is
    set by one of them (`=`): a register tile's copy of the tensor's values,
    clamped past the edge, would read what another thread stores at the end."""
    updates = [r for r in refs if isinstance(r.op, UpdateOp)]
    set_ = {r.tensor for r in updates if r.op.kind.data == "="}
    return all(r.tensor in set_ for r in updates if r.op.kind.data != "=" and ATOMIC not in r.op.attributes)


def written_by_def(tensor: SSAValue) -> bool:
    """Whether `tensor` is an output or a temporary of its def (TC's inputs
    are read only)."""
    if isinstance(tensor.owner, AllocOp):
        return True
    definition = tensor.owner.parent_op() if isinstance(tensor.owner, Block) else None
    return isinstance(definition, DefOp) and tensor in definition.outputs


def padded_domains(scop: ScopOp, sizes: Sequence[int]) -> dict[str, isl.Set]:
    """The statements of `scop` that tiling by `sizes` leaves with partial
    tiles to pad (see the module), and their padded domains."""
    statements = {s.sym_name.data: s for s in scop.statements}
    by_statement: dict[str, list[Reference]] = {}
    for ref in references(scop.statements):
        by_statement.setdefault(ref.stmt.sym_name.data, []).append(ref)
    padded: dict[str, isl.Set] = {}
    for band in _outer_bands(scop_schedule(scop).get_root()):
        names = statement_names(band.get_domain())
        if not names or not all(n in statements and _paddable(by_statement.get(n, [])) for n in names):
            continue
        if not _initialized([r for n in names for r in by_statement[n]]):
            continue
        partial = band.band_get_partial_schedule()
        for member, size in enumerate(tile_sizes(band, sizes)):
            if size <= 1:
                continue
            found: dict[str, tuple[int, int]] = {}
            for name in names:
                domain = padded.get(name, isl.Set(statements[name].domain.data))
                d = _iterator(partial.get_union_pw_aff(member), domain)
                extent = None if d is None else _extent(domain, d)
                if d is None or extent is None or not _written_index(by_statement[name], d):
                    break
                found[name] = (d, extent)
            extents = {extent for _, extent in found.values()}
            if len(found) != len(names) or len(extents) != 1:
                continue
            (extent,) = extents
            if extent % size == 0:
                continue
            for name, (d, _) in found.items():
                domain = padded.get(name, isl.Set(statements[name].domain.data))
                padded[name] = _with_range(domain, d, -(-extent // size) * size)
    return padded


def past_shape(elements: isl.Set, shape: Sequence[int]) -> list[int]:
    """The dimensions in which some of `elements` pass `shape`."""
    return [
        k for k, size in enumerate(shape)
        if not elements.upper_bound_val(isl.dim_type.set, k, size - 1).is_equal(elements)
    ]  # fmt: skip


def _outside(ref: Reference) -> list[int]:
    """The dimensions in which `ref` accesses elements past its tensor's shape."""
    assert ref.access is not None
    shape = ref.op.tensor_type.static_shape()
    assert shape is not None
    return past_shape(ref.access.range(), shape)


def pad(scop: ScopOp, domains: dict[str, isl.Set]) -> None:
    """Give the statements of `domains` those domains, in their ops and in
    the schedule's domain node, and mark their accesses past the tensors'
    shapes (`clamp`, `clip`)."""
    statements: dict[str, StmtOp] = {s.sym_name.data: s for s in scop.statements}
    for name, domain in domains.items():
        statements[name].domain = StringAttr(domain.to_str())
    for ref in references([statements[n] for n in domains]):  # accesses on the padded domains
        outside = _outside(ref)
        if outside:
            clip = ref.writes or written_by_def(ref.tensor)
            ref.op.attributes[CLIP if clip else CLAMP] = ArrayAttr(IntegerAttr(k, 64) for k in outside)
    root = scop.schedule
    union = isl.UnionSet(root.domain.data)
    for domain in domains.values():
        union = union.subtract(isl.UnionSet.from_set(domain).universe()).union(isl.UnionSet.from_set(domain))
    root.domain = StringAttr(union.to_str())
