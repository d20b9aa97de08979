"""Full tiles apart from partial ones (`tcir.polyhedral.full_tiles`,
`poly-separate-full-tiles`): the blocks found, the split, the numbers."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

import tcir
from tcir.polyhedral.full_tiles import full_blocks, separate_full_tiles

# A 40 x 72 output on 32 x 32 tiles, a block a tile (2 x 3 blocks), its
# points dealt to 8 x 32 threads.
MAPPED = """{ domain: "{ T[i, j] : 0 <= i < 40 and 0 <= j < 72 }",
  child: { mark: "kernel",
    child: { filter: "[block_y, block_x] -> { T[i, j] : block_y = floor(i/32) and block_x = floor(j/32) }",
      child: { schedule: "[{ T[i, j] -> [(floor((i)/32))] }, { T[i, j] -> [(floor((j)/32))] }]",
        child: { filter: "[thread_y, thread_x] -> { T[i, j] : (i - thread_y) mod 8 = 0 and j mod 32 = thread_x }",
          child: { schedule: "[{ T[i, j] -> [((i) mod 32)] }, { T[i, j] -> [((j) mod 32)] }]" } } } } } }"""
CONTEXT = isl.Set(
    "[block_y, block_x, thread_y, thread_x] -> { : 0 <= block_y <= 1 and 0 <= block_x <= 2 and 0 <= thread_y < 8 and 0 <= thread_x < 32 }"
)
BLOCKS = isl.Set("[block_y, block_x] -> { : 0 <= block_y <= 1 and 0 <= block_x <= 2 }")


def _schedule(text: str = MAPPED) -> isl.Schedule:
    return isl.Schedule.read_from_str(isl.DEFAULT_CONTEXT, text)


def _band(schedule: isl.Schedule) -> isl.ScheduleNode:
    return schedule.get_root().child(0).child(0).child(0)


def test_blocks_of_full_tiles():
    full = full_blocks(_band(_schedule()), BLOCKS)
    assert full is not None and full.is_equal(isl.Set("[block_y, block_x] -> { : block_y = 0 and 0 <= block_x <= 1 }"))


def test_no_split_where_every_tile_is_full():
    whole = MAPPED.replace("i < 40", "i < 64").replace("j < 72", "j < 96")
    assert full_blocks(_band(_schedule(whole)), BLOCKS) is None
    assert separate_full_tiles(_schedule(whole), CONTEXT, 8, {"T"}).plain_is_equal(_schedule(whole))


def test_split_keeps_every_instance_once():
    result = separate_full_tiles(_schedule(), CONTEXT, 8, {"T"})
    sequence = result.get_root().child(0).child(0).child(0)
    assert sequence.get_type() == isl.schedule_node_type.sequence and sequence.n_children() == 2
    first, second = (sequence.child(k).filter_get_filter().intersect_params(BLOCKS) for k in range(2))
    assert first.intersect(second).is_empty()
    assert first.union(second).is_equal(_band(_schedule()).get_domain().intersect_params(BLOCKS))
    assert separate_full_tiles(_schedule(), CONTEXT, 0, {"T"}).plain_is_equal(_schedule())
    assert separate_full_tiles(_schedule(), CONTEXT, 8, {"U"}).plain_is_equal(_schedule())  # no register tile


TMM = """def tmm(float(M,K) A, float(N,K) B) -> (C) {
  C(m,n) +=! A(m,kk) * B(n,kk)
}"""


@pytest.mark.parametrize(
    "options",
    [
        {"tile": [32, 32, 16], "threads": [16, 8]},
        {"tile": [32, 32, 16], "threads": [16, 8], "blocks": [2, 1]},  # blocks loop over several tiles
        {"tile": [16, 32, 8], "threads": [8, 4], "vector_width": 4, "copy_vector_width": 4, "num_stages": 2},
    ],
)
def test_ragged_contraction_computes_right_on_the_simulated_gpu(options):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((72, 24)).astype(np.float32)
    f = tcir.define(TMM).tmm
    mapping = tcir.MappingOptions(**options)
    assert "poly.sequence" in f.ir(a, b, backend="cuda", until="poly-separate-full-tiles", options=mapping)
    np.testing.assert_allclose(f(a, b, backend="cuda-sim", options=mapping), a @ b.T, rtol=1e-5, atol=1e-5)


def test_pass_errors():
    with pytest.raises(tcir.TCError, match="max-kernels must be at least 0"):
        tcir.PassManager.parse("poly-separate-full-tiles{max-kernels=-1}")


def test_a_ragged_loop_of_every_block_leaves_it_full():
    """The last of a block's k tiles is partial in every block: at each k
    tile, a block is compared with the others there, so the blocks of the
    first 32 rows stay full."""
    ragged_k = """{ domain: "{ T[i, j, k] : 0 <= i < 40 and 0 <= j < 32 and 0 <= k < 40 }",
      child: { mark: "kernel",
        child: { filter: "[block_y, block_x] -> { T[i, j, k] : block_y = floor(i/32) and block_x = floor(j/32) }",
          child: { schedule: "[{ T[i, j, k] -> [(floor((i)/32))] }, { T[i, j, k] -> [(floor((j)/32))] }]",
            child: { schedule: "[{ T[i, j, k] -> [(floor((k)/32))] }]",
              child: { filter: "[thread_y, thread_x] -> { T[i, j, k] : (i - thread_y) mod 8 = 0 and j mod 32 = thread_x }",
                child: { schedule: "[{ T[i, j, k] -> [((k) mod 32)] }, { T[i, j, k] -> [((i) mod 32)] }, { T[i, j, k] -> [((j) mod 32)] }]" } } } } } } }"""
    full = full_blocks(_band(_schedule(ragged_k)), isl.Set("[block_y, block_x] -> { : 0 <= block_y <= 1 and block_x = 0 }"))
    assert full is not None and full.is_equal(isl.Set("[block_y, block_x] -> { : block_y = 0 and block_x = 0 }"))
