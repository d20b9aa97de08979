"""The `nvgpu` dialect's asynchronous copies (sm_80's `cp.async`), as MLIR's
`nvgpu.device_async_*` ops, without their tokens:

    "nvgpu.device_async_copy"(%A, %i, %j, %S, %k, %l) <{dstElements = 4 : index}>
        : (memref<64x64xf32>, index, index, memref<32x36xf32, 3>, index, index) -> ()
    "nvgpu.device_async_create_group"() : () -> ()
    "nvgpu.device_async_wait"() <{numGroups = 0 : i32}> : () -> ()

`device_async_copy` starts copying `dstElements` consecutive elements of a
global memref to a shared one (4, 8 or 16 bytes); `device_async_create_group`
closes the group of the copies the thread started since the last one (PTX's
`cp.async.commit_group`); `device_async_wait` waits until at most
`numGroups` of the thread's groups are pending (`cp.async.wait_group`). MLIR
threads tokens from the copies to the group and to the wait; the groups here
are implicit, as in PTX: a group holds the copies its thread issued before
it, and a wait counts groups. A copy's elements are in shared memory for
the thread once a wait covers its group, and for the block after a barrier
that follows the wait.

And the warp-level matrix multiply-accumulate of the tensor cores (sm_80's
`mma.sync`), as MLIR's `nvgpu.mma.sync`, for TF32:

    %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a0, %a1, %a2, %a3, %b0, %b1, %c0, %c1, %c2, %c3)
        <{mmaShape = [16, 8, 8], tf32Enabled}> : (f32, ..., f32) -> (f32, f32, f32, f32)

The 32 threads of a warp run it together, each with its registers of the
fragments (PTX's layout of m16n8k8, g = lane / 4, t = lane % 4): a0..a3 are
A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4] of the 16x8 A; b0, b1 are
B[t][g], B[t+4][g] of the 8x8 B; c0..c3 (and the results d0..d3) are
C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1] of the 16x8 accumulator:
D = A B + C, A and B read as TF32 (their top 19 bits: 10 of mantissa).
MLIR passes the fragments as vectors; they are the scalars of their
registers here, as in the rest of tcir's kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, ArrayAttr, Float32Type, IndexType, IntegerAttr, MemRefType, UnitAttr, i64
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

COPY_BYTES = (4, 8, 16)
"""The sizes one `cp.async` moves."""
SHARED_SPACE = 3


def _space(t: Attribute) -> int:
    space = t.memory_space if isinstance(t, MemRefType) else None
    return space.value.data if isinstance(space, IntegerAttr) else 0


@irdl_op_definition
class DeviceAsyncCopyOp(IRDLOperation):
    """Start copying `dstElements` elements from global to shared memory."""

    name = "nvgpu.device_async_copy"

    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    dst_elements = prop_def(IntegerAttr[IndexType], prop_name="dstElements")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, src: SSAValue, src_indices: Sequence[SSAValue], dst: SSAValue, dst_indices: Sequence[SSAValue],
        elements: int,
    ):
        super().__init__(
            operands=[src, src_indices, dst, dst_indices],
            properties={"dstElements": IntegerAttr(elements, IndexType())},
        )

    @property
    def elements(self) -> int:
        return self.dst_elements.value.data

    @property
    def bytes(self) -> int:
        """The bytes the copy moves (its source's address must be a multiple of them)."""
        return self.elements * getattr(self.dst.type.element_type, "bitwidth", 0) // 8  # type: ignore[attr-defined]

    def verify_(self) -> None:
        for ref, indices, what in ((self.src, self.src_indices, "source"), (self.dst, self.dst_indices, "destination")):
            t = ref.type
            assert isinstance(t, MemRefType)
            if len(indices) != len(t.get_shape()):
                raise VerifyException(f"'{self.name}' op {what} of rank {len(t.get_shape())} takes {len(indices)} indices")
            if t.element_type != self.dst.type.element_type:  # type: ignore[attr-defined]
                raise VerifyException(f"'{self.name}' op source and destination element types differ")
        if _space(self.src.type) not in (0, 1) or _space(self.dst.type) != SHARED_SPACE:
            raise VerifyException(f"'{self.name}' op copies from global memory (space 0 or 1) to shared memory (space 3)")
        if self.elements < 1:
            raise VerifyException(f"'{self.name}' op dstElements must be positive")


@irdl_op_definition
class DeviceAsyncCreateGroupOp(IRDLOperation):
    """Close the group of the copies this thread started since the last group."""

    name = "nvgpu.device_async_create_group"


@irdl_op_definition
class DeviceAsyncWaitOp(IRDLOperation):
    """Wait until at most `numGroups` of this thread's groups are in flight."""

    name = "nvgpu.device_async_wait"

    num_groups = prop_def(IntegerAttr[I32], prop_name="numGroups")

    def __init__(self, groups: int = 0):
        super().__init__(properties={"numGroups": IntegerAttr(groups, 32)})

    @property
    def groups(self) -> int:
        return self.num_groups.value.data


MMA_SHAPE = (16, 8, 8)
"""The m, n, k of the TF32 `mma.sync` (m16n8k8)."""
MMA_REGISTERS = (4, 2, 4)
"""Registers a thread holds of the A, B and C fragments of m16n8k8 (TF32)."""


@irdl_op_definition
class MmaSyncOp(IRDLOperation):
    """A warp's D = A B + C on the tensor cores, from its threads' fragments."""

    name = "nvgpu.mma.sync"

    matrix_a = var_operand_def(Float32Type)
    matrix_b = var_operand_def(Float32Type)
    matrix_c = var_operand_def(Float32Type)
    res = var_result_def(Float32Type)
    mma_shape = prop_def(ArrayAttr[IntegerAttr], prop_name="mmaShape")
    tf32_enabled = opt_prop_def(UnitAttr, prop_name="tf32Enabled")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, a: Sequence[SSAValue], b: Sequence[SSAValue], c: Sequence[SSAValue]):
        super().__init__(
            operands=[a, b, c],
            result_types=[[c_.type for c_ in c]],
            properties={
                "mmaShape": ArrayAttr(IntegerAttr(d, i64) for d in MMA_SHAPE),
                "tf32Enabled": UnitAttr(),
            },
        )

    def verify_(self) -> None:
        shape = tuple(d.value.data for d in self.mma_shape.data)
        if shape != MMA_SHAPE or self.tf32_enabled is None:
            raise VerifyException(f"'{self.name}' op supports mmaShape = [16, 8, 8] with tf32Enabled only")
        counts = (len(self.matrix_a), len(self.matrix_b), len(self.matrix_c))
        if counts != MMA_REGISTERS or len(self.res) != MMA_REGISTERS[2]:
            raise VerifyException(
                f"'{self.name}' op takes 4, 2 and 4 registers of A, B and C and gives 4, "
                f"got {counts[0]}, {counts[1]}, {counts[2]} and {len(self.res)}"
            )


NVGPU = Dialect("nvgpu", [DeviceAsyncCopyOp, DeviceAsyncCreateGroupOp, DeviceAsyncWaitOp, MmaSyncOp])
