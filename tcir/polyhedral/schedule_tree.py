"""Convert between `poly` schedule-tree ops and `islpy.Schedule`.

Ops go to isl through isl's YAML schedule syntax (`isl.Schedule.read_from_str`);
isl comes back to ops by walking the `isl.ScheduleNode`s.  Strings coming from isl
are isl's canonical text, so ops -> isl -> ops reproduces IR that was itself
built from isl exactly.
"""

from __future__ import annotations

import islpy as isl

from tcir.dialects.poly import (
    BandOp,
    ContextOp,
    DomainOp,
    ExtensionOp,
    FilterListNodeOp,
    FilterOp,
    MarkOp,
    ScheduleNodeOp,
    SequenceOp,
    SetOp,
    SingleChildNodeOp,
)

_YAML_KEYS: dict[type[SingleChildNodeOp], str] = {
    DomainOp: "domain",
    FilterOp: "filter",
    ContextOp: "context",
    MarkOp: "mark",
    ExtensionOp: "extension",
}


def _quote(text: str) -> str:
    return f'"{text}"'


def _to_yaml(node: ScheduleNodeOp) -> str:
    """The isl YAML (flow style) text of the subtree rooted at `node`."""
    entries: list[str]
    if isinstance(node, FilterListNodeOp):
        kind = "sequence" if isinstance(node, SequenceOp) else "set"
        children = ", ".join(_to_yaml(child) for child in node.children)
        return f"{{ {kind}: [ {children} ] }}"
    if isinstance(node, BandOp):
        flags = ", ".join(str(int(c)) for c in node.coincident_flags)
        entries = [
            f"schedule: {_quote(node.schedule.data)}",
            f"permutable: {int(node.permutable is not None)}",
            f"coincident: [ {flags} ]",
        ]
        if node.options is not None:
            entries.append(f"options: {_quote(node.options.data)}")
        child = node.child
    elif isinstance(node, SingleChildNodeOp):
        entries = [f"{_YAML_KEYS[type(node)]}: {_quote(node.value)}"]
        child = node.child
    else:
        raise ValueError(f"unknown schedule tree node '{node.name}'")
    # isl's reader insists on a child below a mark; `{ leaf }` is an explicit leaf.
    entries.append(f"child: {'{ leaf }' if child is None else _to_yaml(child)}")
    return f"{{ {', '.join(entries)} }}"


def schedule_to_isl(root: DomainOp) -> isl.Schedule:
    """Build the isl schedule described by the tree rooted at `root`."""
    text = _to_yaml(root)
    schedule = _PARSED.get(text)
    if schedule is None:
        schedule = isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)
        _remember(text, schedule)
    return schedule


_PARSED: dict[str, isl.Schedule] = {}
"""isl schedules by the text of their trees: a pass reads the schedule that
the pass before it wrote (`schedule_from_isl` keeps it; a `functools`
cache could not be given it), and isl's parse of a large tree costs
milliseconds. isl objects are immutable from Python: sharing one is safe."""
_PARSED_LIMIT = 64
"""Schedules kept (the cache is emptied when it grows past them)."""


def _remember(text: str, schedule: isl.Schedule) -> None:
    """Keep `schedule` as the parse of `text` (the text of its tree)."""
    if len(_PARSED) >= _PARSED_LIMIT:
        _PARSED.clear()
    _PARSED[text] = schedule


def node_from_isl(node: isl.ScheduleNode) -> ScheduleNodeOp | None:
    """Build ops for the subtree rooted at `node`; None for a leaf."""
    kind = node.get_type()
    if kind == isl.schedule_node_type.leaf:
        return None
    if kind in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        filters: list[FilterOp] = []
        for position in range(node.n_children()):
            child = node_from_isl(node.child(position))
            assert isinstance(child, FilterOp), "isl sequence/set child is a filter"
            filters.append(child)
        if kind == isl.schedule_node_type.sequence:
            return SequenceOp(filters)
        return SetOp(filters)
    child = node_from_isl(node.child(0))
    if kind == isl.schedule_node_type.band:
        options = node.band_get_ast_build_options()
        return BandOp(
            node.band_get_partial_schedule().to_str(),
            [
                node.band_member_get_coincident(member)
                for member in range(node.band_n_member())
            ],
            permutable=node.band_get_permutable(),
            options=None if options.is_empty() else options.to_str(),
            child=child,
        )
    if kind == isl.schedule_node_type.domain:
        return DomainOp(node.domain_get_domain().to_str(), child)
    if kind == isl.schedule_node_type.filter:
        return FilterOp(node.filter_get_filter().to_str(), child)
    if kind == isl.schedule_node_type.context:
        return ContextOp(node.context_get_context().to_str(), child)
    if kind == isl.schedule_node_type.mark:
        return MarkOp(node.mark_get_id().get_name(), child)
    if kind == isl.schedule_node_type.extension:
        return ExtensionOp(node.extension_get_extension().to_str(), child)
    raise ValueError(f"schedule node kind '{kind.name}' has no poly op")


def schedule_from_isl(schedule: isl.Schedule) -> DomainOp:
    """Build the `poly.domain`-rooted tree of ops for an isl schedule."""
    root = node_from_isl(schedule.get_root())
    assert isinstance(root, DomainOp), "an isl schedule is rooted at a domain node"
    _remember(_to_yaml(root), schedule)
    return root
