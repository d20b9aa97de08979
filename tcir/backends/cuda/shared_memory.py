"""A kernel's shared memory: its buffers, their bytes, and where they go.

A kernel may declare at most 48 KiB of shared memory statically; past that
its buffers live in dynamic shared memory (up to 227 KiB a block on an
H100), which the launch requests and the kernel function must be allowed
(`cuFuncSetAttribute` of `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
"""

from __future__ import annotations

import math

from xdsl.dialects import gpu, memref
from xdsl.dialects.builtin import MemRefType

from tcir.backends.cuda.scalar_types import SHARED_SPACE, memory_space

STATIC_SHARED_LIMIT = 49152
"""Bytes of shared memory a kernel may declare statically."""
DYNAMIC_ALIGNMENT = 16
"""Every buffer of dynamic shared memory starts at a multiple of this (a float4)."""


def shared_buffers(kernel: gpu.FuncOp) -> list[memref.AllocaOp]:
    """The `memref.alloca`s of `kernel` in shared memory, in order."""
    return [
        op for op in kernel.walk()
        if isinstance(op, memref.AllocaOp) and memory_space(op.memref.type) == SHARED_SPACE
    ]


def buffer_bytes(alloca: memref.AllocaOp) -> int:
    """The bytes of a statically shaped buffer."""
    memref_type = alloca.memref.type
    assert isinstance(memref_type, MemRefType)
    return math.prod(memref_type.get_shape()) * memref_type.element_type.bitwidth // 8  # pyright: ignore[reportAttributeAccessIssue]


def dynamic_shared_bytes(kernel: gpu.FuncOp) -> int:
    """The dynamic shared memory a launch of `kernel` requests, its buffers
    laid out as `dynamic_offsets` does: 0 where they fit in static shared memory."""
    buffers = shared_buffers(kernel)
    if sum(map(buffer_bytes, buffers)) <= STATIC_SHARED_LIMIT:
        return 0
    return max((offset + _aligned(buffer_bytes(b), DYNAMIC_ALIGNMENT) for b, offset in dynamic_offsets(kernel)), default=0)


def dynamic_offsets(kernel: gpu.FuncOp) -> list[tuple[memref.AllocaOp, int]]:
    """Each shared buffer of `kernel` and its byte offset in dynamic shared
    memory (a multiple of its alignment)."""
    offsets, offset = [], 0
    for buffer in shared_buffers(kernel):
        offset = _aligned(offset, alignment(buffer))
        offsets.append((buffer, offset))
        offset += buffer_bytes(buffer)
    return offsets


def alignment(buffer: memref.AllocaOp) -> int:
    """The bytes `buffer`'s start is a multiple of: its own alignment, at least a float4's."""
    own = buffer.alignment.value.data if buffer.alignment is not None else 1
    return max(own, DYNAMIC_ALIGNMENT)


def _aligned(size: int, to: int) -> int:
    return -(-size // to) * to
