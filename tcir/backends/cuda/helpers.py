"""Inline device functions that the emitted kernels call for ops C lacks.

Each helper is emitted once per translation unit, only when a kernel uses it,
in the order of `HELPERS`.
"""

from __future__ import annotations

#: Helper name -> its CUDA C definition.
HELPERS: dict[str, str] = {
    # Signed division rounding toward -inf / +inf (arith.floordivsi / ceildivsi).
    "tc_floordiv": """\
template <typename T>
__device__ __forceinline__ T tc_floordiv(T a, T b) {
  const T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}""",
    "tc_ceildiv": """\
template <typename T>
__device__ __forceinline__ T tc_ceildiv(T a, T b) {
  const T q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}""",
    # Unsigned division rounding up (arith.ceildivui); T is an unsigned type.
    "tc_ceildivu": """\
template <typename T>
__device__ __forceinline__ T tc_ceildivu(T a, T b) {
  return a / b + (a % b != 0 ? 1 : 0);
}""",
    # arith.maximumf / minimumf: NaN if either operand is NaN (fmax/fmin return
    # the other operand), as LLVM's llvm.maximum / llvm.minimum on the CPU.
    "tc_maximum": """\
__device__ __forceinline__ float tc_maximum(float a, float b) {
  return (a != a || b != b) ? a + b : fmaxf(a, b);
}
__device__ __forceinline__ double tc_maximum(double a, double b) {
  return (a != a || b != b) ? a + b : fmax(a, b);
}""",
    "tc_minimum": """\
__device__ __forceinline__ float tc_minimum(float a, float b) {
  return (a != a || b != b) ? a + b : fminf(a, b);
}
__device__ __forceinline__ double tc_minimum(double a, double b) {
  return (a != a || b != b) ? a + b : fmin(a, b);
}""",
}


def helper_definitions(used: set[str]) -> list[str]:
    """The definitions of the `used` helpers, in a stable order."""
    return [text for name, text in HELPERS.items() if name in used]
