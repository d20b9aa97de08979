"""`convert-poly-to-gpu`: CUDA kernels and their host launch from mapped scops.

Every `tc.def` holding a `poly.scop` mapped by `poly-map-to-gpu` becomes:
- in a `gpu.module @kernels`, one `gpu.func` kernel per kernel of the
  schedule (one for all the kernels of a top-level set, being independent), whose arguments are the def's tensors (inputs, outputs, then
  temporaries) as global memrefs, its scalars, and its remaining symbolic
  sizes; its body is isl's AST of the kernel with `gpu.block_id` and
  `gpu.thread_id` for the mapping parameters and `gpu.barrier`s between the
  block-uniform parts of sequences, and a `memref.alloca` per buffer that
  `poly-promote` gave the statements it runs (space 3: shared, 5: private);
- a host `func.func` with the signature of `convert-tc-to-loops` that
  allocates the temporaries and `gpu.launch_func`s the kernels in order with
  the grid and block sizes of the mapping.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import (
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcir.dialects.poly import ScopOp, StmtOp
from tcir.dialects.tc import DefOp
from tcir.errors import TCError
from tcir.lowering.affine_to_arith import index_constant
from tcir.lowering.def_function import DefFunction
from tcir.lowering.tc_point import PROMOTED, PointLowering
from tcir.polyhedral.ast_to_gpu import GpuAstLowering, statement_names
from tcir.polyhedral.gpu_mapping import BLOCK_IDS, THREAD_IDS, kernel_domains, split_context
from tcir.polyhedral.promotion.promote import BUFFERS
from tcir.polyhedral.scop import scop_context, scop_schedule

KERNEL_MODULE = "kernels"
_DIMS = ("x", "y", "z")


def launch_sizes(context: isl.Set, idents: tuple[str, ...]) -> list[int]:
    """Sizes of the mapping parameters `idents` (1 for absent ones), x first."""
    sizes = []
    for ident in idents:
        position = context.find_dim_by_name(isl.dim_type.param, ident)
        if position < 0:
            sizes.append(1)
            continue
        values = context.move_dims(isl.dim_type.set, 0, isl.dim_type.param, position, 1)
        sizes.append(int(values.dim_max_val(0).to_python()) + 1)
    return sizes


@dataclass
class KernelBuilder:
    """Builds the kernels of one def and their launches from its host function."""

    definition: DefOp
    scop: ScopOp
    host: DefFunction
    kernels: list[gpu.FuncOp]

    def build(self) -> None:
        schedule, mapping = split_context(scop_schedule(self.scop))
        if mapping is None:
            raise TCError("convert-poly-to-gpu: the scop is not mapped; run poly-map-to-gpu first")
        context = scop_context(self.scop).align_params(mapping.get_space())
        build = isl.AstBuild.from_context(context.intersect(mapping.align_params(context.get_space())))
        grid = launch_sizes(mapping, BLOCK_IDS)
        block = launch_sizes(mapping, THREAD_IDS)
        # The kernels of a top-level set are independent: one launch runs them all.
        # Otherwise each kernel gets its own AST (isl could hoist a guard common
        # to several kernels above all of them, so the AST's shape cannot tell
        # where one kernel ends).
        independent = schedule.get_root().child(0).get_type() == isl.schedule_node_type.set
        domains = [schedule.get_domain()] if independent else kernel_domains(schedule)
        for domain in domains:
            self.kernel(build.node_from_schedule(schedule.intersect_domain(domain)), grid, block)

    def kernel(self, root: isl.AstNode, grid: list[int], threads: list[int]) -> None:
        point = self.host.lowering.point
        tensors = list(point.values.items())  # def arguments, then temporaries
        sizes = list(point.sizes.items())
        host_args = [h for _, h in tensors] + [h for _, h in sizes]
        base = self.definition.sym_name.data
        base = base if base.isidentifier() else f"tc_{base}"  # CUDA names: `2LUT` is not one
        name = f"{base}_kernel{len(self.kernels)}"
        body = Block(arg_types=[h.type for h in host_args])
        for arg, (tc, host) in zip(body.args, tensors):
            arg.name_hint = host.name_hint or tc.name_hint
        for arg, (size, _) in zip(body.args[len(tensors) :], sizes):
            arg.name_hint = size
        builder = Builder(InsertPoint.at_end(body))
        kernel_point = PointLowering(
            {tc: arg for (tc, _), arg in zip(tensors, body.args)},
            {n: arg for (n, _), arg in zip(sizes, body.args[len(tensors) :])},
        )
        ids: dict[str, SSAValue] = {n: kernel_point.sizes[n] for n in self.scop.param_names}
        for k, dim in enumerate(_DIMS):
            ids[BLOCK_IDS[k]] = builder.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum(dim)))).result
            ids[THREAD_IDS[k]] = builder.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum(dim)))).result
        statements = {stmt.sym_name.data: stmt for stmt in self.scop.statements}
        kernel_point.buffers = self.buffers(builder, [statements[n] for n in statement_names(root) if n in statements])
        GpuAstLowering(kernel_point, statements, ids).node(builder, root)
        builder.insert(gpu.ReturnOp([]))
        self.kernels.append(gpu.FuncOp(name, (body.arg_types, []), Region(body), kernel=True))
        host = self.host.builder
        host.insert(
            gpu.LaunchFuncOp(
                SymbolRefAttr(KERNEL_MODULE, [name]),
                [index_constant(host, g) for g in grid],
                [index_constant(host, t) for t in threads],
                kernelOperands=host_args,
            )
        )


    def buffers(self, builder: Builder, statements: list[StmtOp]) -> dict[str, SSAValue]:
        """An alloca for each promoted buffer that `statements` access."""
        types = self.scop.attributes.get(BUFFERS, DictionaryAttr({}))
        assert isinstance(types, DictionaryAttr)
        used = [
            op.attributes[PROMOTED].data  # pyright: ignore[reportAttributeAccessIssue]
            for stmt in statements
            for op in stmt.body.walk()
            if PROMOTED in op.attributes
        ]
        buffers: dict[str, SSAValue] = {}
        for name in dict.fromkeys(used):
            type = types.data[name]
            assert isinstance(type, MemRefType)
            alloca = memref.AllocaOp.get(
                type.element_type, shape=type.get_shape(), memory_space=type.memory_space
            )
            alloca.memref.name_hint = name
            buffers[name] = builder.insert(alloca).memref
        return buffers


@dataclass(frozen=True)
class ConvertPolyToGpuPass(ModulePass):
    """Replace every mapped `tc.def` by GPU kernels and a host launching them."""

    name = "convert-poly-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: list[gpu.FuncOp] = []
        for definition in [o for o in op.walk() if isinstance(o, DefOp)]:
            scop = next((s for s in definition.body.block.ops if isinstance(s, ScopOp)), None)
            if scop is None:
                continue
            host = DefFunction.start(definition)
            KernelBuilder(definition, scop, host, kernels).build()
            Rewriter.replace_op(definition, host.finish())
        if kernels:
            # Kernels call C math functions: their declarations move into the gpu.module.
            declarations = [
                f for f in op.body.block.ops if isinstance(f, func.FuncOp) and f.is_declaration
            ]
            for declaration in declarations:
                declaration.detach()
            body = Block([*declarations, *kernels])
            module = gpu.ModuleOp(StringAttr(KERNEL_MODULE), Region(body))  # pyright: ignore
            op.body.block.insert_op_before(module, op.body.block.first_op)  # pyright: ignore
            op.attributes["gpu.container_module"] = UnitAttr()

