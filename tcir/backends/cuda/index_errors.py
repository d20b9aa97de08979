"""Index errors that kernels report, raised on the host without waiting for them.

A kernel with `check.index` ops (indirect subscripts, `gpu-check-indices`)
clamps an out-of-range subscript to 0 and reports the first one of its
module: the check id, the subscript and the index tensor's value go to that
module's record in pinned host memory, then the record's flag and the
process-wide flag are set. With unified addressing (every 64-bit CUDA
platform), pinned host memory has the same address on the device.

On every call, the CUDA runtime reads the process-wide flag (a load from
host memory: no synchronization, no extra launch); once set, the next call
of any tcir function, or `synchronize()`, raises the recorded error as a
`TCError` naming the index tensor, the value and its position (looked up in
that tensor as the last call of those kernels passed it: a best effort).
A kernel's report is visible once the kernel has run: a call that the GPU
has not reached yet reports at a later call, and `synchronize()` waits for
the GPU first. `TCIR_SYNC=1` makes every call wait for its kernels and
raise at once, as `CUDA_LAUNCH_BLOCKING=1` does for CUDA errors.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from tcir.errors import TCError
from tcir.runtime.host_program import HostProgram

SLOTS = 4096
"""Records in the pinned buffer; a process loading more modules reuses them
in turn (the newest owner names the error)."""

_GLOBALS = ("tc_index_error", "tc_index_error_any", "tc_index_error_claimed")


class IndexErrors:
    """The pinned buffer: word 0 is the process-wide flag, then per module
    [flag, check id, subscript, index value] (64-bit words)."""

    def __init__(self, cupy: Any):
        self.runtime = cupy.cuda.runtime
        words = 1 + 4 * SLOTS
        self.pointer = cupy.cuda.runtime.hostAlloc(8 * words, 0)  # freed with the process
        self.words = np.ctypeslib.as_array((ctypes.c_longlong * words).from_address(self.pointer))
        self.words[:] = 0
        self.next_slot = 0
        self.owners: dict[int, tuple[HostProgram | None, int]] = {}
        """Slot -> (the host program of its kernels, the module's claim word)."""
        self.last: dict[int, dict[int, Any]] = {}
        """Slot -> the index tensors of the last call of its kernels, by position."""

    def attach(self, module: Any) -> int:
        """Point `module`'s kernels at a free record (a cupy `Module` or
        `RawModule` compiled with the `tc_checked_index` helper); its slot."""
        slot = self.next_slot % SLOTS
        self.next_slot += 1
        record = self.pointer + 8 * (1 + 4 * slot)
        self.words[1 + 4 * slot : 5 + 4 * slot] = 0
        for name, value in ((_GLOBALS[0], record), (_GLOBALS[1], self.pointer)):
            pointer = ctypes.c_void_p(value)
            self.runtime.memcpy(_global(module, name), ctypes.addressof(pointer), 8, 1)  # host to device
        self.owners[slot] = (None, _global(module, _GLOBALS[2]))
        return slot

    def own(self, slot: int, host: HostProgram) -> None:
        """`host` runs `slot`'s kernels (programs of one source share a slot,
        and their host programs are the same)."""
        _, claim = self.owners[slot]
        self.owners[slot] = (host, claim)

    def raise_pending(self) -> None:
        """Raise the first recorded error, clearing it (and every flag)."""
        self.words[0] = 0
        found: TCError | None = None
        for slot in np.flatnonzero(self.words[1::4][:SLOTS]):
            base = 1 + 4 * int(slot)
            check, subscript, value = (int(w) for w in self.words[base + 1 : base + 4])
            self.words[base : base + 4] = 0
            host, claim = self.owners.get(int(slot), (None, None))
            if claim is not None:
                self.runtime.memset(claim, 0, 4)  # let the module report again
            if found is None and host is not None:
                found = host.index_error(check, subscript, value, self.last.get(int(slot), {}))
        if found is not None:
            raise found


def _global(module: Any, name: str) -> int:
    """The device address of `__device__` variable `name` of a loaded module."""
    if hasattr(module, "get_global_var"):  # cupy.cuda.function.Module
        return int(module.get_global_var(name))
    return int(module.get_global(name).ptr)  # cupy.RawModule


_errors: IndexErrors | None = None


def index_errors(cupy: Any) -> IndexErrors:
    """The process's pinned error records (allocated on first use)."""
    global _errors
    if _errors is None:
        _errors = IndexErrors(cupy)
    return _errors


def check_pending() -> None:
    """Raise an index error that a kernel reported, if any (no synchronization)."""
    if _errors is not None and _errors.words[0]:
        _errors.raise_pending()


SYNC_EACH_CALL = os.environ.get("TCIR_SYNC", "") not in ("", "0")
"""`TCIR_SYNC=1` (read when tcir's CUDA runtime loads): every call waits for
its kernels and raises their errors."""


def uses_index_checks(source: str) -> bool:
    """Whether CUDA `source` holds kernels that report index errors."""
    return _GLOBALS[0] in source
