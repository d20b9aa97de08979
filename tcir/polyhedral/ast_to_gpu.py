"""isl ASTs of mapped schedules as `gpu.func` kernel bodies.

Like `ast_to_loops`, plus: the block and thread parameters are the kernel's
`gpu.block_id`/`gpu.thread_id` values, and a `gpu.barrier` separates the
parts of a sequence wherever all threads of a block run it together (not
under a loop or condition that depends on the thread ids), since one part
may read what other threads wrote in the previous one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import islpy as isl
from xdsl.builder import Builder
from xdsl.dialects import gpu

from tcir.polyhedral.ast_to_loops import AstLowering
from tcir.polyhedral.gpu_mapping import KERNEL_MARK, THREAD_IDS


def _ids(expr: isl.AstExpr) -> Iterator[str]:
    kind = expr.get_type()
    if kind == isl.ast_expr_type.id:
        yield expr.get_id().get_name()
    elif kind == isl.ast_expr_type.op:
        for k in range(expr.get_op_n_arg()):
            yield from _ids(expr.get_op_arg(k))


def _depends_on_threads(*exprs: isl.AstExpr) -> bool:
    return any(name in THREAD_IDS for e in exprs for name in _ids(e))


def kernel_roots(ast: isl.AstNode) -> list[isl.AstNode]:
    """The AST of each kernel: the children of a top-level block of kernels,
    or the whole AST for one kernel."""
    if ast.get_type() != isl.ast_node_type.block:
        return [ast]
    children = ast.block_get_children()
    return [children.get_at(k) for k in range(children.n_ast_node())]


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
    """Lowers the AST of one kernel, inserting barriers between the parts of
    block-uniform sequences."""

    uniform: list[bool] = field(default_factory=lambda: [True])

    def node(self, builder: Builder, node: isl.AstNode) -> None:
        kind = node.get_type()
        if kind == isl.ast_node_type.block and self.uniform[-1]:
            children = node.block_get_children()
            for k in range(children.n_ast_node()):
                if k:
                    builder.insert(gpu.BarrierOp())
                self.node(builder, children.get_at(k))
        elif kind == isl.ast_node_type.for_:
            exprs = (node.for_get_init(), node.for_get_cond(), node.for_get_inc())
            self._scoped(not _depends_on_threads(*exprs), lambda: super(GpuAstLowering, self).node(builder, node))
        elif kind == isl.ast_node_type.if_:
            uniform = not _depends_on_threads(node.if_get_cond())
            self._scoped(uniform, lambda: super(GpuAstLowering, self).node(builder, node))
        else:
            super().node(builder, node)

    def _scoped(self, uniform: bool, lower: object) -> None:
        self.uniform.append(self.uniform[-1] and uniform)
        try:
            lower()  # type: ignore[operator]
        finally:
            self.uniform.pop()
