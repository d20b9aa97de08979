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
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
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


NVGPU = Dialect("nvgpu", [DeviceAsyncCopyOp, DeviceAsyncCreateGroupOp, DeviceAsyncWaitOp])
