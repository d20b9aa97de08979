"""Out-of-range indirect subscripts on the simulated GPU: the kernels check
them (`gpu-check-indices`, `check.index`) and the call raises a `TCError`
naming the index tensor, the value's position and the value; nothing is
read out of bounds (the simulator would report that as a bounds fault)."""

from __future__ import annotations

import numpy as np
import pytest

import tcir
from tcir.backends.cuda.launch import extract_host_program
from tcir.backends.cuda_sim.runtime import SimProgram

SOURCE = """
def lut(float(E,D) LUT, int32(B,L) I) -> (O) { O(i,j) +=! LUT(I(i,k),j) }
def gather(float(N) X, int32(A,B) I) -> (Z) { Z(i,j) = X(I(i,j)) }
def shifted(float(N) X, int32(A) I) -> (Z) { Z(i) = X(I(i) + 2) }
def two(float(E1,D) L1, int32(B,K) I1, float(E2,D) L2, int32(B,K) I2) -> (O1, O2) {
  O1(i,j) +=! L1(I1(i,k),j)
  O2(i,j) +=! L2(I2(i,k),j)
}
"""
mod = tcir.define(SOURCE)
rng = np.random.default_rng(0)
TABLE = rng.standard_normal((50, 64)).astype(np.float32)
X = rng.standard_normal(20).astype(np.float32)

# Mappings that promote the index tensor to shared memory (the default) or not.
OPTIONS = [None, tcir.MappingOptions(use_shared_memory=False, use_private_memory=False, tile=[4, 8])]


@pytest.mark.parametrize("options", OPTIONS)
def test_lut_index_out_of_range_names_tensor_position_and_value(options):
    index = rng.integers(0, 50, (37, 11)).astype(np.int32)
    good = mod.lut(TABLE, index, backend="cuda-sim", options=options)
    np.testing.assert_allclose(good, TABLE[index].sum(1), rtol=1e-5, atol=1e-5)
    index[5, 7] = 50
    message = r"lut: index tensor 'I' holds 50 at \(5, 7\), which gives subscript 50 for dimension 0 of 'LUT' \(size 50\)"
    with pytest.raises(tcir.TCError, match=message):
        mod.lut(TABLE, index, backend="cuda-sim", options=options)
    index[5, 7] = -3
    with pytest.raises(tcir.TCError, match=r"holds -3 at \(5, 7\)"):
        mod.lut(TABLE, index, backend="cuda-sim", options=options)


def test_gather_and_a_computed_subscript():
    index = rng.integers(0, 20, (5, 7)).astype(np.int32)
    np.testing.assert_array_equal(mod.gather(X, index, backend="cuda-sim"), X[index])
    index[2, 3] = 99
    with pytest.raises(tcir.TCError, match=r"'I' holds 99 at \(2, 3\), which gives subscript 99 for dimension 0 of 'X' \(size 20\)"):
        mod.gather(X, index, backend="cuda-sim")
    shift = np.array([0, 17, 5], np.int32)
    np.testing.assert_array_equal(mod.shifted(X, shift, backend="cuda-sim"), X[shift + 2])
    shift[1] = 18  # the subscript is 18 + 2: the message gives both
    with pytest.raises(tcir.TCError, match=r"'I' holds 18 at \(1,\), which gives subscript 20 for dimension 0 of 'X'"):
        mod.shifted(X, shift, backend="cuda-sim")


def test_second_table_of_two_is_named():
    i1 = rng.integers(0, 50, (6, 4)).astype(np.int32)
    i2 = rng.integers(0, 30, (6, 4)).astype(np.int32)
    l2 = rng.standard_normal((30, 64)).astype(np.float32)
    o1, o2 = mod.two(TABLE, i1, l2, i2, backend="cuda-sim")
    np.testing.assert_allclose(o2, l2[i2].sum(1), rtol=1e-5, atol=1e-5)
    i2[4, 1] = 30
    with pytest.raises(tcir.TCError, match=r"index tensor 'I2' holds 30 at \(4, 1\), which gives subscript 30 for dimension 0 of 'L2' \(size 30\)"):
        mod.two(TABLE, i1, l2, i2, backend="cuda-sim")


def test_without_the_check_the_simulator_sees_the_bad_read():
    """The check is what keeps the read in bounds: the same kernel with its
    check.index removed by hand reads outside X, a bounds fault."""
    index = np.array([[1, 25]], np.int32)
    text = mod.gather.ir(X, index, backend="cuda-sim")
    assert "check.index" in text
    lines = [line for line in text.splitlines() if "check.index" not in line]
    checked = next(line for line in text.splitlines() if "check.index" in line)
    result, rest = checked.split(" = check.index ")
    subscript = rest.split(",")[0]
    unchecked = "\n".join(lines).replace(f"[{result.strip()}]", f"[{subscript}]")
    module = tcir.parse_ir(unchecked)
    program = SimProgram(module, extract_host_program(module))
    with pytest.raises(tcir.KernelFault, match=r"out-of-bounds access to global memory .X. of shape \[20\].* accesses \[25\]") as fault:
        program(X, index, np.zeros((1, 2), np.float32))
    assert fault.value.fault == "bounds"


def test_a_64_bit_index_is_checked_before_any_narrowing():
    """An int64 value of 2^32 + 3 must not pass as 3: kernels checking 64-bit
    index tensors compute their indices in 64 bits (`long long`)."""
    wide = tcir.define("def gather(float(N) X, int64(A,B) I) -> (Z) { Z(i,j) = X(I(i,j)) }").gather
    index = np.zeros((3, 4), np.int64)
    index[1, 2] = (1 << 32) + 3
    with pytest.raises(tcir.TCError, match=r"'I' holds 4294967299 at \(1, 2\), which gives subscript 4294967299"):
        wide(X, index, backend="cuda-sim")
    cuda = wide.ir(X, index, backend="cuda")
    assert "const long long v2 = I[" in cuda and "tc_checked_index(v2, 20, v2, 0, tc_fault)" in cuda
    assert "const int v2 = I[" in mod.gather.ir(X, index.astype(np.int32), backend="cuda")


def test_an_index_into_an_empty_dimension_is_an_error_before_launching():
    """Every value is out of range and the fallback element 0 does not exist."""
    index = np.zeros((2, 3), np.int32)
    with pytest.raises(tcir.TCError, match=r"gather: index tensor 'I' indexes dimension 0 of 'X', which is empty"):
        mod.gather(np.zeros(0, np.float32), index, backend="cuda-sim")
    assert mod.gather(np.zeros(0, np.float32), np.zeros((0, 3), np.int32), backend="cuda-sim").shape == (0, 3)
