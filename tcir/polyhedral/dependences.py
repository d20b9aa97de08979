"""Dependences of a `poly.scop`, computed by isl's dataflow analysis.

- flow (read after write): value-based, from `compute_flow` with the must- and
  may-writes as sources, so that `S(i, j)` initializing `C(i, j)` only feeds
  `T(i, j, 0)`;
- false (anti and output: write after read, write after write): the
  memory-based dependences that validity needs when storage is not renamed,
  reduced to each write's previous write and the reads in between (the others
  follow by transitivity).

All are relative to the scop's current schedule (the original program order
for a canonical tree). A `+=` chain only relates instances that update the
same element, so it is carried by the reduction dimensions alone and leaves
the left-hand side dimensions parallel.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from tcir.dialects.poly import ScopOp
from tcir.polyhedral.scop import (
    scop_context,
    scop_must_writes,
    scop_reads,
    scop_schedule,
    scop_writes,
)


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
    schedule: isl.Schedule,
) -> isl.UnionMap:
    info = (
        isl.UnionAccessInfo.from_sink(sinks)
        .set_must_source(must_sources)
        .set_may_source(may_sources)
        .set_schedule(schedule)
    )
    return info.compute_flow().get_may_dependence()


def compute_dependences(scop: ScopOp) -> Dependences:
    """The flow and false dependences of `scop` under its schedule."""
    schedule = scop_schedule(scop)
    context = scop_context(scop)
    reads = scop_reads(scop)
    writes = scop_writes(scop)
    must_writes = scop_must_writes(scop)
    may_writes = writes.subtract(must_writes)
    flow = _flow(reads, must_writes, may_writes, schedule)
    false = _flow(writes, must_writes, may_writes.union(reads), schedule)
    return Dependences(
        flow.intersect_params(context).coalesce(),
        false.intersect_params(context).coalesce(),
    )
