"""Dependences of a `poly.scop`, computed by isl's dataflow analysis.

- flow (read after write): value-based, from `compute_flow` with the must- and
  may-writes as sources, so that `S(i, j)` initializing `C(i, j)` only feeds
  `T(i, j, 0)`;
- false (anti and output: write after read, write after write): the
  memory-based dependences that validity needs when storage is not renamed,
  reduced to each write's previous write and the reads in between (the others
  follow by transitivity).

All are relative to program order: the statements one after the other, each
over its domain in lexicographic order, but those of a stepped loop step by
step (`tcir.polyhedral.canonical.program_order`: the canonical tree's order).
A valid schedule keeps these relations, so they depend only on the scop's statements
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
from tcir.polyhedral.canonical import Loop, program_order
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
    return statement_dependences(scop.context.data, statements, tuple(s.step_loop for s in scop.statements))


@lru_cache(maxsize=64)
def statement_dependences(
    context_text: str, statements: tuple[StmtKey, ...], loops: tuple[Loop, ...] = ()
) -> Dependences:
    """The dependences of statements given by their isl texts (`StmtKey`),
    in program order (`loops`: the stepped loop of each, none if empty),
    under the parameter context `context_text`."""
    context = isl.Set(context_text)
    reads = union_of_accesses(context, ((domain, read) for domain, read, _, _ in statements))
    writes = union_of_accesses(context, ((domain, write) for domain, _, write, _ in statements))
    must_writes = union_of_accesses(
        context, ((domain, None if may else write) for domain, _, write, may in statements)
    )
    order = program_order([(domain, loop) for (domain, *_), loop in zip(statements, loops or (None,) * len(statements))])
    may_writes = writes.subtract(must_writes)
    flow = _flow(reads, must_writes, may_writes, order)
    false = _flow(writes, must_writes, may_writes.union(reads), order)
    return Dependences(
        flow.intersect_params(context).coalesce(),
        false.intersect_params(context).coalesce(),
    )
