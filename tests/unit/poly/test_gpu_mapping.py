"""`poly-map-to-gpu` runs every statement instance exactly once."""

from pathlib import Path

import islpy as isl
import pytest

import tcir
from tcir.dialects.poly import ScopOp
from tcir.passmanager import PassManager
from tcir.polyhedral.gpu_mapping import BLOCK_IDS, THREAD_IDS
from tcir.polyhedral.scop import scop_schedule

NodeType = isl.schedule_node_type
EXAMPLES = Path(__file__).parents[3] / "examples"


def _leaf_domains(schedule: isl.Schedule) -> list[isl.UnionSet]:
    """The instances reaching each leaf, the mapping ids as parameters."""
    found: list[isl.UnionSet] = []

    def visit(node: isl.ScheduleNode, domain: isl.UnionSet) -> None:
        kind = node.get_type()
        if kind == NodeType.filter:
            domain = domain.intersect(node.filter_get_filter())
        elif kind == NodeType.context:
            domain = domain.intersect_params(node.context_get_context())
        elif kind == NodeType.leaf:
            found.append(domain)
        for k in range(node.n_children()):
            visit(node.child(k), domain)

    visit(schedule.get_root(), schedule.get_domain())
    return found


def _runners(schedule: isl.Schedule, statement: str) -> isl.Map:
    """`{ S[i] -> [block and thread ids] }`: who runs each instance of `statement`."""
    result: isl.Map | None = None
    for domain in _leaf_domains(schedule):
        sets = domain.get_set_list()
        for s in (sets.get_at(k) for k in range(sets.n_set())):
            if s.get_tuple_name() != statement:
                continue
            runners = isl.Map.from_domain(s)
            for ident in (*BLOCK_IDS, *THREAD_IDS):
                position = runners.find_dim_by_name(isl.dim_type.param, ident)
                if position >= 0:
                    runners = runners.move_dims(
                        isl.dim_type.out, runners.dim(isl.dim_type.out), isl.dim_type.param, position, 1
                    )
            result = runners if result is None else result.union(runners)
    assert result is not None, f"{statement} runs nowhere"
    return result


CASES = [
    ("tmm", {"M": 64, "K": 96, "N": 128}, tcir.MappingOptions()),
    # Two kernels (init, update) of different tile counts on one automatic grid.
    (
        "tmm",
        {"M": 128, "K": 1024, "N": 1024},
        tcir.MappingOptions(fusion="min", allow_skewing=True, tile=[41, 12, 9], threads=[12, 54]),
    ),
    ("MLP3", {"B": 16, "N": 24, "O": 20, "P": 12, "Q": 5}, tcir.MappingOptions(fusion="min")),
    ("tbmm", {"B": 5, "N": 26, "M": 72, "K": 26}, tcir.MappingOptions(blocks=[3, 2], threads=[16, 4])),
    # More thread dimensions than a branch maps: the others must be 0 there.
    (
        "tmm",
        {"M": 37, "K": 29, "N": 45},
        tcir.MappingOptions(blocks=[19, 16], threads=[6, 32], tile=[16, 1, 15], unroll=1024, max_shared_memory=24576),
    ),
    (
        "sconv2d",
        {"sh": 2, "sw": 1, "N": 2, "C": 3, "H": 9, "W": 7, "F": 2, "KH": 3, "KW": 2},
        tcir.MappingOptions(allow_skewing=True, blocks=[6, 7, 7], threads=[3, 9, 9], tile=[6, 1, 1, 4, 3]),
    ),
    # A kernel without a parallel band (the reduction into O3 under min
    # fusion) on a grid that other kernels make larger: one block runs it.
    (
        "MLP3",
        {"B": 7, "N": 13, "O": 11, "P": 9, "Q": 5},
        tcir.MappingOptions(fusion="preserve3", positive_coefficients=False, blocks=[7, 9], threads=[2], tile=[13, 9, 9], unroll=8),
    ),
    # One kernel over the batch: each layer's band below the fused one mapped to threads.
    ("MLP3", {"B": 7, "N": 13, "O": 11, "P": 9, "Q": 5}, tcir.MappingOptions(fusion="outer", tile=[3, 4], threads=[3, 4])),
]


@pytest.mark.parametrize("name, sizes, options", CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_every_instance_runs_on_exactly_one_thread(
    name: str, sizes: dict[str, int], options: tcir.MappingOptions
) -> None:
    function = tcir.define((EXAMPLES / f"{name}.tc").read_text())[name]
    module = function.def_ir.module.clone()
    pipeline = options.pipeline(sizes, "cuda").split(",poly-promote")[0].removesuffix(",convert-poly-to-gpu")
    PassManager.parse(pipeline).run(module)
    scop = next(o for o in module.walk() if isinstance(o, ScopOp))
    schedule = scop_schedule(scop)
    for stmt in scop.statements:
        runners = _runners(schedule, stmt.sym_name.data)
        domain = isl.Set(stmt.domain.data)
        assert runners.domain().is_equal(domain.intersect_params(runners.domain().params()))
        assert runners.is_single_valued(), f"{stmt.sym_name.data} runs on several threads"


def test_other_thread_is_a_nonzero_thread_difference():
    """`_other_thread` (whether a barrier is needed) answers as subtracting
    the identity would: pairs of the same thread need none."""
    from tcir.polyhedral.gpu_mapping import _other_thread

    same = isl.UnionMap("{ T[x, y] -> T[x, y] : 0 <= x < 32 and 0 <= y < 8 }")
    shifted = isl.UnionMap("{ T[x, y] -> T[x + 1, y] : 0 <= x < 31 and 0 <= y < 8 }")
    across = isl.UnionMap("[n] -> { T[x] -> T[o] : 0 <= x < 32 and o = x + n }")
    assert not _other_thread(same)
    assert _other_thread(shifted) and _other_thread(same.union(shifted))
    assert _other_thread(across), "for some parameter value"
    assert not _other_thread(isl.UnionMap("{ T[] -> T[] }"))
