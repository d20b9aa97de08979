"""`poly-promote{shared=true private=true max-shared-bytes=49152 max-private-elements=32 vector-width=1 copy-vector-width=1 transpose-copies=false}`: memory promotion.

Runs on scops mapped by `poly-map-to-gpu` (see
`tcir.polyhedral.promotion.promote` for the heuristic). For every kernel
with a band mapped to blocks, groups of references to a tensor are promoted
to a per-thread private buffer (accumulators, at the block's tile, of at
most `max-private-elements` elements: a thread's register tile) or to a
shared buffer (data reused by the block and accessed uncoalesced, at the
innermost tile loop of the block, within `max-shared-bytes`). The result:
- the scop's `buffers` attribute: buffer name -> memref type (space 3 for
  shared, 5 for private memory);
- copy statements `read_<buffer>` / `write_<buffer>` (`poly.stmt`s whose
  bodies move elements between the tensor and the buffer), introduced into
  the schedule tree by extension nodes around the tile's subtree, between
  `sync_` statements for shared buffers, their loops mapped to threads;
- every promoted `tc.read`/`tc.update` carries `promoted` (its buffer) and
  `promoted_map` (the buffer index as a function of its statement's
  iterators), which `convert-poly-to-gpu` honours.
Shared buffers' rows are padded against bank conflicts: by one element, or,
with `vector-width` W above 1 where W divides a row, to an odd multiple of W
(`memref<128x20xf32, 3>` for a 128x16 tile and W = 4), so that reads of W
consecutive elements (`poly-vectorize`) are aligned vector loads that
consecutive rows spread over all banks.

With `copy-vector-width` W above 1, a copy into a shared buffer whose
tiles are whole aligned groups of W consecutive 32-bit elements (rows
padded to a multiple of W) deals the groups to the threads instead of the
elements: its band's last member becomes the group, `floor(a / W)`, and a
new innermost member the element within it, `a mod W` (a loop of W
iterations), the groups of a row on consecutive threads. `gpu-vectorize-
copies` turns each such loop into one vector load and store.
With `transpose-copies`, a read-only shared tile whose reads index a
dimension other than the last by their statement's innermost reduction
iterator (`B[kk][n]` in a matmul) is laid out with that dimension last
(`memref<32x20xf32, 3>` for 16 values of kk by 32 of n), as the other
operand's tile is: its copy reads along the tensor's rows and writes the
tile transposed, an element at a time. Where threads take their points in
groups (`poly-map-to-gpu{size-per-thread=...}`), a thread's reads run along
the output's rows and columns instead: a tile read by an output iterator
in a dimension other than the last (`A[m][kk]`) is laid out with that one
last (`[kk][m]`), its copy again an element at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.errors import TCError
from tcir.polyhedral.promotion.promote import BUFFERS, Promoter
from tcir.ir.vectors import VECTOR_WIDTHS
from tcir.polyhedral.scop import module_scops, require_mapping, scop_schedule, set_scop_schedule


@dataclass(frozen=True)
class PolyPromotePass(ModulePass):
    """Promote reference groups of mapped scops to shared and private memory."""

    name = "poly-promote"

    shared: bool = True
    private: bool = True
    max_shared_bytes: int = 49152
    max_private_elements: int = 32
    vector_width: int = 1
    copy_vector_width: int = 1
    transpose_copies: bool = False

    def __post_init__(self) -> None:
        if self.max_shared_bytes < 0:
            raise TCError(
                f"poly-promote: max-shared-bytes must be >= 0, got {self.max_shared_bytes}"
            )
        if self.max_private_elements < 0:
            raise TCError(
                f"poly-promote: max-private-elements must be >= 0, got {self.max_private_elements}"
            )
        for name, width in (("vector-width", self.vector_width), ("copy-vector-width", self.copy_vector_width)):
            if width not in VECTOR_WIDTHS:
                raise TCError(
                    f"poly-promote: {name} must be one of {', '.join(map(str, VECTOR_WIDTHS))}, got {width}"
                )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in module_scops(op):
            require_mapping(scop, True, "run poly-map-to-gpu first")
            if BUFFERS in scop.attributes:
                continue  # promoted already
            promoter = Promoter(
                scop,
                scop_schedule(scop),
                self.shared,
                self.private,
                self.max_shared_bytes,
                self.max_private_elements,
                self.vector_width,
                self.copy_vector_width,
                self.transpose_copies,
            )
            schedule = promoter.run()
            if not promoter.buffers:
                continue
            Rewriter.insert_op(
                [copy.statement() for copy in promoter.copies],
                InsertPoint.before(scop.schedule),
            )
            set_scop_schedule(scop, schedule)
            scop.attributes[BUFFERS] = DictionaryAttr(dict(promoter.buffers))
