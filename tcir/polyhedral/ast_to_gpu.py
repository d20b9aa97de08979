"""isl ASTs of mapped schedules as `gpu.func` kernel bodies.

Like `ast_to_loops`, plus: the block and thread parameters are the kernel's
`gpu.block_id`/`gpu.thread_id` values, and the synchronization statements
that `poly-map-to-gpu` inserted become `gpu.barrier`s.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.builder import Builder
from xdsl.dialects import gpu

from tcir.polyhedral.ast_to_loops import AstLowering
from tcir.polyhedral.gpu_mapping import SYNC_PREFIX


def statement_names(node: isl.AstNode) -> list[str]:
    """The names of the statements that the AST `node` runs, in order."""
    names: list[str] = []

    def visit(child: isl.AstNode) -> bool:
        if child.get_type() == isl.ast_node_type.user:
            names.append(child.user_get_expr().get_op_arg(0).get_id().get_name())
        return True

    node.foreach_descendant_top_down(visit)
    return list(dict.fromkeys(names))


@dataclass
class GpuAstLowering(AstLowering):
    """Lowers the AST of one kernel; `sync_<k>()` statements become barriers."""

    def user(self, builder: Builder, call: isl.AstExpr) -> None:
        if call.get_op_arg(0).get_id().get_name().startswith(SYNC_PREFIX):
            builder.insert(gpu.BarrierOp())
        else:
            super().user(builder, call)
