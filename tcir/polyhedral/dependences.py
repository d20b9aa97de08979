"""Dependences of a `poly.scop`, computed by isl's dataflow analysis.

- flow (read after write): value-based, from `compute_flow` with the must- and
  may-writes as sources, so that `S(i, j)` initializing `C(i, j)` only feeds
  `T(i, j, 0)`;
- false (anti and output: write after read, write after write): the
  memory-based dependences that validity needs when storage is not renamed,
  reduced to each write's previous write and the reads in between (the others
  follow by transitivity).

All are relative to program order: the statements one after the other, each
over its domain in lexicographic order (the canonical tree's order). A valid
schedule keeps these relations, so they depend only on the scop's statements
and are computed once per scop content (a tuning candidate re-tiles and
re-maps the same scop). A `+=` chain only relates instances that update the
same element, so it is carried by the reduction dimensions alone and leaves
the left-hand side dimensions parallel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import islpy as isl

from tcir.dialects.poly import ScopOp
from tcir.polyhedral.scop import union_of_accesses


@dataclass(frozen=True)
class Dependences:
    """The dependence relations of a scop (statement instance -> instance)."""

    flow: isl.UnionMap
    false: isl.UnionMap

    @property
    def validity(self) -> isl.UnionMap:
        """Every dependence a valid schedule must respect."""
        return self.flow.union(self.false)


def _flow(
    sinks: isl.UnionMap,
    must_sources: isl.UnionMap,
    may_sources: isl.UnionMap,
    order: isl.UnionMap,
) -> isl.UnionMap:
    info = (
        isl.UnionAccessInfo.from_sink(sinks)
        .set_must_source(must_sources)
        .set_may_source(may_sources)
        .set_schedule_map(order)
    )
    return info.compute_flow().get_may_dependence()


StmtKey = tuple[str, str | None, str | None, bool]
"""A statement's domain, reads, writes and whether its writes are may-writes."""


def compute_dependences(scop: ScopOp) -> Dependences:
    """The flow and false dependences of `scop` in program order."""
    statements = tuple(
        (s.domain.data, s.reads.data, s.writes.data, s.may_write is not None) for s in scop.statements
    )
    return statement_dependences(scop.context.data, statements)


@lru_cache(maxsize=64)
def statement_dependences(context_text: str, statements: tuple[StmtKey, ...]) -> Dependences:
    """The dependences of statements given by their isl texts (`StmtKey`),
    in program order, under the parameter context `context_text`."""
    context = isl.Set(context_text)
    reads = union_of_accesses(context, ((domain, read) for domain, read, _, _ in statements))
    writes = union_of_accesses(context, ((domain, write) for domain, _, write, _ in statements))
    must_writes = union_of_accesses(
        context, ((domain, None if may else write) for domain, _, write, may in statements)
    )
    # S_k[i] -> [k, i, 0, ...]: statement k after statement k - 1, each in
    # lexicographic order.
    domains = [isl.Set(domain) for domain, *_ in statements]
    depth = max((d.dim(isl.dim_type.set) for d in domains), default=0)
    order = isl.UnionMap.empty(context.get_space())
    for position, domain in enumerate(domains):
        n = domain.dim(isl.dim_type.set)
        names = [f"i{d}" for d in range(n)]
        target = ", ".join([str(position), *names, *["0"] * (depth - n)])
        tuple_name = domain.get_tuple_name() if domain.has_tuple_name() else ""
        order = order.union(
            isl.UnionMap(f"{{ {tuple_name}[{', '.join(names)}] -> [{target}] }}").intersect_domain(
                isl.UnionSet.from_set(domain)
            )
        )
    may_writes = writes.subtract(must_writes)
    flow = _flow(reads, must_writes, may_writes, order)
    false = _flow(writes, must_writes, may_writes.union(reads), order)
    return Dependences(
        flow.intersect_params(context).coalesce(),
        false.intersect_params(context).coalesce(),
    )
