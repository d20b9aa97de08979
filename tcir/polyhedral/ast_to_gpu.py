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
from tcir.polyhedral.gpu_mapping import KERNEL_MARK, SYNC_PREFIX


def kernel_roots(ast: isl.AstNode) -> list[isl.AstNode]:
    """The AST of each kernel: the children of a top-level block of kernels,
    or the whole AST for one kernel."""
    if ast.get_type() != isl.ast_node_type.block:
        return [ast]
    children = ast.block_get_children()
    return [children.get_at(k) for k in range(children.n_ast_node())]


def statement_names(node: isl.AstNode) -> list[str]:
    """The names of the statements that the AST `node` runs, in order."""
    names: list[str] = []

    def visit(child: isl.AstNode) -> bool:
        if child.get_type() == isl.ast_node_type.user:
            names.append(child.user_get_expr().get_op_arg(0).get_id().get_name())
        return True

    node.foreach_descendant_top_down(visit)
    return list(dict.fromkeys(names))


def has_kernel_mark(node: isl.AstNode) -> bool:
    kind = node.get_type()
    if kind == isl.ast_node_type.mark:
        return node.mark_get_id().get_name() == KERNEL_MARK or has_kernel_mark(node.mark_get_node())
    if kind == isl.ast_node_type.if_:
        return has_kernel_mark(node.if_get_then_node())
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        return any(has_kernel_mark(children.get_at(k)) for k in range(children.n_ast_node()))
    return False


@dataclass
class GpuAstLowering(AstLowering):
    """Lowers the AST of one kernel; `sync_<k>()` statements become barriers."""

    def user(self, builder: Builder, call: isl.AstExpr) -> None:
        if call.get_op_arg(0).get_id().get_name().startswith(SYNC_PREFIX):
            builder.insert(gpu.BarrierOp())
        else:
            super().user(builder, call)
