"""`poly-block-reduction`: reductions cooperative within a block.

Runs on scheduled (and tiled) scops, before `poly-map-to-gpu`. Each reduction
whose innermost band over its reduced dimensions can run on the threads of a
block (see `tcir.polyhedral.block_reduction` for where and when) is split in
two: the statement itself, whose update now goes to a partial value of each
thread (`tc.update ... {block_reduction}`, the reduced tensor gone from its
access relations), and a block-wide `<S>_combine` statement after the
outermost band over the reduced dimensions, which combines the partials of
the block's threads with `gpu.all_reduce` and updates the element. The
innermost band's members become coincident, so that threads map them:

    poly.stmt @S4 domain "{ S4[b, n] : ... }" reads "{ S4[b, n] -> s[b]; S4[b, n] -> e[b, n] }"
        writes "{ S4[b, n] -> s[b] }" { ... tc.update %s[%b] "+=" %v }
    poly.band "[{ S4[b, n] -> [(b)] }]" coincident = [1] {
      poly.band "[{ S4[b, n] -> [(n)] }]" coincident = [0] }

becomes

    poly.stmt @S4 domain "{ S4[b, n] : ... }" reads "{ S4[b, n] -> e[b, n] }" writes "{  }" {
      ... tc.update %s[%b] "+=" %v {block_reduction} }
    poly.stmt @S4_combine domain "{ S4_combine[b] : ... }" reads "{ S4_combine[b] -> s[b] }"
        writes "{ S4_combine[b] -> s[b] }" {
      %p = poly.partial @S4 : f32
      %t = "gpu.all_reduce"(%p) <{op = #gpu<all_reduce_op add>, uniform}> ({}) : (f32) -> f32
      tc.update %s[%b] "+=" %t }
    poly.band "[{ S4[b, n] -> [(b)]; S4_combine[b] -> [(b)] }]" coincident = [1] {
      poly.sequence {
        poly.filter "{ S4[b, n] }" { poly.band "[{ S4[b, n] -> [(n)] }]" coincident = [1] }
        poly.filter "{ S4_combine[b] }" } }

Where the reduced dimensions have bands of their own (a sum over an image's
plane, whose initialization isl fuses into the loop over its rows), the
initialization runs first and the bands become one, so that threads map
every reduced dimension. A sum of `e / d` with `d` the same at every reduced
point (a mean's `N`) sums the `e`s and `<S>_combine` divides the total once.

A kernel's threads then each sum a share of a row, and the row's sum is
the block's: the softmax, norm and attention rows of one block in one
kernel. Reductions that do not qualify stay serial in a thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcir.dialects.poly import ScopOp
from tcir.polyhedral.block_reduction import block_reductions


@dataclass(frozen=True)
class PolyBlockReductionPass(ModulePass):
    """Spread qualifying reductions over the threads of a block."""

    name = "poly-block-reduction"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for scop in [o for o in op.walk() if isinstance(o, ScopOp)]:
            block_reductions(scop)
