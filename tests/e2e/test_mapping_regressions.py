"""Mappings that options fuzzing found wrong, racy or crashing, at the sizes
of `tcir.tools.options_fuzz.PROBLEMS`: each compiles and computes the right numbers
on the simulated GPU (and, where there is one, on a real GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcir.backends.cuda.runtime import cuda_available
from tcir.tools.options_fuzz import Candidate, check

EXAMPLES = Path(__file__).parents[2] / "examples"
BACKENDS = ("cuda-sim", "cuda") if cuda_available() else ("cuda-sim",)

REGRESSIONS = {
    # The reproducers of the issue (H100, max rel. error 20.0, 0.16, 0.95):
    # thread ids a branch did not map ran its instances again.
    "tmm-min-fusion-threads-37x23": (
        "tmm",
        '{"fusion":"min","allow_skewing":false,"positive_coefficients":false,"blocks":[10,8],"threads":[37,23],"tile":[29,45,13],"unroll":64,"use_shared_memory":false,"use_private_memory":false,"max_shared_memory":49152,"specialize":true}',
    ),
    "tmm-threads-6x32": (
        "tmm",
        '{"fusion":"max","allow_skewing":false,"positive_coefficients":true,"blocks":[19,16],"threads":[6,32],"tile":[16,1,15],"unroll":1024,"use_shared_memory":true,"use_private_memory":true,"max_shared_memory":24576,"specialize":true}',
    ),
    "sconv2d-threads-3x9x9": (
        "sconv2d",
        '{"fusion":"max","allow_skewing":true,"positive_coefficients":true,"blocks":[6,7,7],"threads":[3,9,9],"tile":[6,1,1,4,3],"unroll":1,"use_shared_memory":true,"use_private_memory":true,"max_shared_memory":24576,"specialize":true}',
    ),
    # A kernel without a parallel band ran on every block of the shared grid.
    "MLP3-preserve3-blocks-7x9": (
        "MLP3",
        '{"fusion":"preserve3","positive_coefficients":false,"blocks":[7,9],"threads":[2],"tile":[13,9,9],"unroll":8,"use_shared_memory":false,"use_private_memory":false}',
    ),
    # Minimized: isl could not bound the per-thread extent of a scaled member
    # (`isl_pw_aff_max_val`: expecting integer affine expression).
    "tmm-tile-10-threads-7": ("tmm", '{"threads": [7], "tile": [10]}'),
    "tmm-tile-12x3-threads-1x5": ("tmm", '{"threads": [1, 5], "tile": [12, 3]}'),
    # isl's stride detection on a per-thread band ran for minutes (an H100
    # fuzzing run timed out at 120 s): the analysis now has an isl budget.
    "tmm-min-fusion-threads-5x45": (
        "tmm",
        '{"fusion": "min", "blocks": [19, 23], "threads": [5, 45], "tile": [12], "unroll": 16, "use_private_memory": false, "max_shared_memory": 12288}',
    ),
    # Minimized: a temporary's private copy was not written back although a
    # later tile of the kernel read it from global memory (its copy-out was
    # taken for dead: no other statement reads it).
    "attention-outer-tile-1x2x4x2": (
        "attention",
        '{"fusion": "outer", "positive_coefficients": false, "tile": [1, 2, 4, 2]}',
    ),
    # A skewed reduction band (2kh + kw, then kh: one value at fixed outer
    # loops) left threads on the output, whose partial sums the block
    # combined together (a divergent gpu.all_reduce): no block reduction there.
    "sconv2d-skewed-block-reduction": (
        "sconv2d",
        '{"allow_skewing": true, "block_reductions": true, "fusion": "outer", "threads": [3, 4, 5], "use_shared_memory": false, "max_private_elements": 16}',
    ),
    # isl could not write a private copy's index as a function (`isl_pw_multi_aff_from_map`:
    # unable to find suitable equality): the group stays unpromoted.
    "layernorm-skewed-private-index": (
        "layernorm",
        '{"allow_skewing": true, "allow_tf32": false, "async_copies": false, "block_reductions": true, "blocks": [1, 3], "copy_vector_width": 1, "fusion": "min", "max_private_elements": 64, "max_shared_memory": 12288, "num_stages": 4, "parallel_reductions": true, "positive_coefficients": true, "specialize": true, "split_k": 1, "threads": [1, 1], "tile": [15, 15], "unroll": 512, "use_private_memory": true, "use_shared_memory": true, "vector_width": 2, "warpgroup_mma": false, "warps": [4, 4]}',
    ),
    # Warps of 8 rows dealt to 6 threads from the tile's start: the sub-tiles
    # were dealt unalike, and every sub-tile's last row was never computed
    # (fuzzed on the float16 tmm, whose f32 accumulator made it show). Where
    # threads do not divide the sub-tiles, the other warps now idle. (Dealing
    # each sub-tile from its own start was right too, but isl took minutes to
    # generate some of those kernels: tmm@bf16, tile 45x16x5, warps 2x4.)
    "tmm-f16-warps-threads-6-of-8": (
        "tmm@f16",
        '{"tile": [32, 4, 8], "threads": [1, 6], "warps": [4, 4], "fusion": "preserve3", "num_stages": 4, "vector_width": 4, "unroll": 8, "allow_skewing": true, "max_private_elements": 64, "max_shared_memory": 12288, "use_shared_memory": false}',
    ),
    "tmm-bf16-warps-threads-7-slow": (
        "tmm@bf16",
        '{"allow_skewing": true, "async_copies": true, "block_reductions": true, "blocks": [5, 23], "copy_vector_width": 2, "fusion": "min", "num_stages": 5, "positive_coefficients": false, "threads": [1, 7], "tile": [45, 16, 5], "unroll": 8, "use_private_memory": false, "vector_width": 4, "warps": [2, 4]}',
    ),
    "tmm-warps-threads-4-of-10": (
        "tmm",
        '{"tile": [40, 4, 8], "threads": [1, 4], "warps": [4, 4]}',
    ),
    # Fuzzed on an H100 (max rel. error 0.888), minimized: float2 copies of
    # rows of 16 groups on 36 threads, 2 rows at once, 3 rows in the tile;
    # isl's AST generator copied each thread's first row only (the row dealt
    # at `L / 16`, a division of the thread ids) until the copy loops had
    # the rounds of rows and groups as members of their own.
    "conv2d_1x1-float2-copies-threads-3x2x6": (
        "zoo/conv:conv2d_1x1",
        '{"copy_vector_width": 2, "threads": [3, 2, 6], "tile": [2, 3, 4, 32]}',
    ),
    # Drawn by CI's randomly seeded fuzz test, minimized: a shared temporary
    # (`d`) written by thread 0 and read by both sub-tiles of `warps`, the
    # block running the rows in turn; thread 0 overwrote the next row while
    # thread 1 read the last (cuda-sim: data race on `shared_d`).
    "layernorm-outer-warps-2-shared-temporary": (
        "layernorm",
        '{"fusion": "outer", "threads": [1], "warps": [2], "tile": [], "blocks": [1]}',
    ),
    # Drawn by CI's randomly seeded fuzz test, minimized (max rel. error
    # 0.92): split-K's slice member bounds V's rows besides the k tile's, and
    # with both in the copy's footprint isl's AST generator copied the
    # first k tile of each slice only. Footprints are now simplified in the
    # context of the prefix values (the slice bounds are implied there).
    "attention-split-k-4-blocks-3": (
        "attention",
        '{"blocks": [3, 1, 1], "split_k": 4, "tile": [2, 2, 2, 2], "use_private_memory": false, "fusion": "min"}',
    ),
    # Drawn by CI's randomly seeded fuzz test: isl's coalescing of a padded
    # convolution's split-K copy footprint failed inside isl ("original
    # tableau does not correspond to original basic map"): a crash of
    # poly-promote. The footprint is now kept uncoalesced where that fails.
    "conv2d_pad1-split-k-2-coalesce": (
        "zoo/conv:conv2d_pad1",
        '{"async_copies": true, "blocks": [3, 7, 4], "copy_vector_width": 2, "max_private_elements": 64, '
        '"max_shared_memory": 12288, "num_stages": 4, "positive_coefficients": false, "split_k": 2, '
        '"threads": [4, 3, 3], "tile": [], "unroll": 4096, "use_shared_memory": false, "vector_width": 2}',
    ),
    # CI's randomly seeded fuzz: isl gave a private copy's buffer index in
    # two pieces (by the parity of a warp's index) and poly-promote crashed.
    # Such a group is now left unpromoted.
    "mv-warps-2x2-private-index": (
        "mv",
        '{"async_copies": true, "blocks": [13, 8], "copy_vector_width": 2, "fusion": "min", '
        '"max_private_elements": 16, "num_stages": 3, "parallel_reductions": true, "positive_coefficients": false, '
        '"threads": [1, 1], "tile": [6, 21], "transpose_copies": true, "unroll": 8, "use_private_memory": true, '
        '"vector_width": 2, "warps": [2, 2]}',
    ),
    # H200, max rel. error 1.16 (simulated: right): 8-byte cp.async copies
    # into the swizzled tile that wgmma reads. Those copies are now ordinary
    # loads and stores (gpu-prefetch-copies takes cp.async of 16 bytes only
    # for wgmma's tiles).
    "tmm-f16-wgmma-cp-async-8": (
        "tmm@mma@f16",
        '{"async_copies": true, "blocks": [1, 8], "copy_vector_width": 4, "max_private_elements": 32, '
        '"max_shared_memory": 49152, "num_stages": 3, "threads": [4, 8], "tile": [64, 16, 64], '
        '"transpose_copies": true, "unroll": 256, "use_private_memory": true, "vector_width": 4, '
        '"warpgroup_mma": true, "warps": [1, 4]}',
    ),
    # H200, max rel. error 0.73 (simulated: right; ptxas -O1: right): padded,
    # the sum accumulating in memory computed each product before the test of
    # its point against C's shape, and ptxas -O2 miscompiled the unrolled k
    # loop. A padded point's whole statement is now under the test.
    "matmul-tn-f16-padded-accumulator-in-memory": (
        "zoo/matmul:matmul_tn@mma@f16",
        '{"allow_skewing": true, "blocks": [1, 3], "copy_vector_width": 8, "fusion": "max", '
        '"max_private_elements": 16, "max_shared_memory": 12288, "num_stages": 2, "pad_tiles": true, '
        '"threads": [11, 1], "tile": [12, 13], "unroll": 16, "vector_width": 8, "warps": [1, 4]}',
    ),
}


@pytest.mark.parametrize("name", REGRESSIONS)
def test_fuzzed_mapping_is_correct(name):
    problem, options = REGRESSIONS[name]
    verdicts = check(Candidate(str(EXAMPLES), problem, options), BACKENDS)
    assert [v.status for v in verdicts] == ["ok"] * len(BACKENDS), [v.detail for v in verdicts]
