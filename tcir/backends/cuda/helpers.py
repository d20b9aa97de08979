"""Inline device functions that the emitted kernels call for ops C lacks.

Each helper is emitted once per translation unit, only when a kernel uses it,
in the order of `HELPERS`.
"""

from __future__ import annotations

import re

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
    # gpu.all_reduce over a block of THREADS threads (x fastest, as the
    # hardware numbers lanes): each warp combines its lanes' values down to
    # lane 0 by shuffles (a partial last warp included), lane 0 of each warp
    # puts its value in shared memory, and every thread combines those in
    # warp order, so all of them return the same value. `combine` is a
    # lambda, distinct per call site: each site has its own shared array,
    # whose second barrier frees it for the site's next call.
    "tc_all_reduce": """\
template <int THREADS, typename T, typename F>
__device__ __forceinline__ T tc_all_reduce(T value, F combine) {
  constexpr int WARPS = (THREADS + 31) / 32;
  const int linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int lane = linear & 31;
  const int width = (linear >> 5) == WARPS - 1 ? THREADS - 32 * (WARPS - 1) : 32;
  const unsigned mask = width == 32 ? 0xffffffffu : (1u << width) - 1u;
  for (int offset = 16; offset > 0; offset /= 2) {
    const T other = __shfl_down_sync(mask, value, offset);
    if (lane + offset < width) value = combine(value, other);
  }
  if (WARPS == 1) return __shfl_sync(mask, value, 0);
  __shared__ T warps[WARPS];
  if (lane == 0) warps[linear >> 5] = value;
  __syncthreads();
  T total = warps[0];
  for (int w = 1; w < WARPS; ++w) total = combine(total, warps[w]);
  __syncthreads();
  return total;
}""",
    # nvgpu.subgroup_reduce: the 32 lanes of a warp exchange values in a
    # butterfly, so that every one of them ends with the warp's total.
    "tc_warp_reduce": """\
template <typename T, typename F>
__device__ __forceinline__ T tc_warp_reduce(T value, F combine) {
  for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}""",
    # memref.atomic_rmw addf/addi whose old value is unused: the active lanes
    # of a warp that add to one address first sum their values (shuffles),
    # then one of them adds the sum. Many threads adding to few addresses
    # (parallel reductions) otherwise queue at the L2 one atomic at a time.
    # Where every lane has an address of its own (split-K's private sums),
    # each adds at once: the shuffles would only cost. The shuffles are a
    # call, not inlined: a kernel unrolled around its atomics (145 of them in
    # a gconv candidate) took ptxas 309 s with them inlined, 6 s so.
    "tc_atomic_add": """\
template <typename T>
__device__ __noinline__ void tc_atomic_add_shared(T* address, T value, unsigned active, unsigned peers, unsigned lane) {
  T sum = value;
  if (peers == 0xffffffffu) {
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  } else {
    sum = 0;
    for (int source = 0; source < 32; ++source) {
      if (!((active >> source) & 1u)) continue;
      const T other = __shfl_sync(active, value, source);
      if ((peers >> source) & 1u) sum += other;
    }
  }
  if (lane == __ffs(peers) - 1) atomicAdd(address, sum);
}

template <typename T>
__device__ __forceinline__ void tc_atomic_add(T* address, T value) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, (unsigned long long)address);
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (__all_sync(active, peers == (1u << lane))) {  // no two lanes share an address
    atomicAdd(address, value);
    return;
  }
  tc_atomic_add_shared(address, value, active, peers, lane);
}""",
    # memref.atomic_rmw maximumf/minimumf: CUDA has no floating-point
    # atomicMax, so a compare-and-swap loop on the bits combines with
    # tc_maximum/tc_minimum (a NaN wins, as in a serial `max=`); a value
    # that changes nothing stores nothing.
    "tc_atomic_extremum": """\
template <bool MAXIMUM>
__device__ __forceinline__ void tc_atomic_extremum(float* address, float value) {
  int old = __float_as_int(*address);
  for (;;) {
    const float current = __int_as_float(old);
    const int next = __float_as_int(MAXIMUM ? tc_maximum(current, value) : tc_minimum(current, value));
    if (next == old) return;
    const int seen = atomicCAS(reinterpret_cast<int*>(address), old, next);
    if (seen == old) return;
    old = seen;
  }
}
template <bool MAXIMUM>
__device__ __forceinline__ void tc_atomic_extremum(double* address, double value) {
  unsigned long long old = __double_as_longlong(*address);
  for (;;) {
    const double current = __longlong_as_double(old);
    const unsigned long long next =
        __double_as_longlong(MAXIMUM ? tc_maximum(current, value) : tc_minimum(current, value));
    if (next == old) return;
    const unsigned long long seen = atomicCAS(reinterpret_cast<unsigned long long*>(address), old, next);
    if (seen == old) return;
    old = seen;
  }
}""",
    # check.index: an out-of-range subscript reads element 0 instead. The check
    # is branch-free (a call in the loop would keep the compiler from issuing
    # the next gathers early: docs/guide/benchmarks.md has 1LUT's times); a
    # thread notes its first bad subscript in registers (`tc_index_fault`) and
    # reports it when the kernel ends: the check id, subscript and index value,
    # then the flags, into pinned host memory, which the host reads on every
    # call (tcir/backends/cuda/index_errors.py sets the pointers when it loads
    # the module). The first report of the module wins.
    "tc_checked_index": """\
__device__ volatile long long* tc_index_error;
__device__ volatile long long* tc_index_error_any;
__device__ int tc_index_error_claimed;
__device__ __noinline__ void tc_report_index_error(int check, long long subscript, long long value) {
  if (tc_index_error != nullptr && atomicCAS(&tc_index_error_claimed, 0, 1) == 0) {
    tc_index_error[1] = check;
    tc_index_error[2] = subscript;
    tc_index_error[3] = value;
    __threadfence_system();
    tc_index_error[0] = 1;
    __threadfence_system();
    *tc_index_error_any = 1;
  }
}
struct tc_index_fault {
  int check;
  long long subscript, value;
};
template <typename T>
__device__ __forceinline__ T tc_checked_index(T subscript, long long extent, long long value, int check,
                                              tc_index_fault& fault) {
  const bool ok = subscript >= 0 && subscript < extent;
  if (!ok && fault.check < 0) fault = {check, subscript, value};
  return ok ? subscript : T(0);
}""",
    # nvgpu.device_async_copy / create_group / wait: sm_80's cp.async of 4, 8
    # or 16 bytes from global to shared memory (16 bypass L1: .cg), its
    # commit_group and wait_group. Compiled for an older GPU the copy is a plain
    # load and store, complete at once, and the group ops do nothing.
    "tc_cp_async": """\
__device__ __forceinline__ void tc_cp_async_16(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(shared)), "l"(global));
#else
  *reinterpret_cast<int4*>(shared) = *reinterpret_cast<const int4*>(global);
#endif
}
__device__ __forceinline__ void tc_cp_async_8(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"((unsigned)__cvta_generic_to_shared(shared)), "l"(global));
#else
  *reinterpret_cast<int2*>(shared) = *reinterpret_cast<const int2*>(global);
#endif
}
__device__ __forceinline__ void tc_cp_async_4(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((unsigned)__cvta_generic_to_shared(shared)), "l"(global));
#else
  *reinterpret_cast<int*>(shared) = *reinterpret_cast<const int*>(global);
#endif
}
__device__ __forceinline__ void tc_cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void tc_cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
#endif
}""",
    # nvgpu.mma.sync (m16n8k8, TF32): the warp's D = A B + C from its
    # threads' fragment registers (g = lane / 4, t = lane % 4; a0..a3 =
    # A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; b0, b1 = B[t][g], B[t+4][g];
    # c, d = [g][2t], [g][2t+1], [g+8][2t], [g+8][2t+1]), the f32 registers
    # of A and B as they are: the tensor cores read their top 19 bits (TF32,
    # truncated; rounding them first with cvt.rna costs more instructions than
    # the mmas: the compiler repeats inline asm for each mma that reads a
    # register). Not volatile: loads of a fragment shared by several mmas are
    # then loaded once. Before sm_80, the same sums in f32 from the other
    # threads' registers by shuffles.
    "tc_mma_tf32": """\
__device__ __forceinline__ void tc_mma_tf32(float& d0, float& d1, float& d2, float& d3,
                                            float a0, float a1, float a2, float a3, float b0, float b1,
                                            float c0, float c1, float c2, float c3) {
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
        "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)),
        "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
  const int lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  const int g = lane / 4, t = lane % 4;
  d0 = c0, d1 = c1, d2 = c2, d3 = c3;
  for (int k = 0; k < 8; ++k) {
    const int from = k % 4;
    const float low = __shfl_sync(0xffffffffu, k < 4 ? a0 : a2, 4 * g + from);
    const float high = __shfl_sync(0xffffffffu, k < 4 ? a1 : a3, 4 * g + from);
    const float left = __shfl_sync(0xffffffffu, k < 4 ? b0 : b1, 8 * t + from);
    const float right = __shfl_sync(0xffffffffu, k < 4 ? b0 : b1, 8 * t + 4 + from);
    d0 += low * left, d1 += low * right, d2 += high * left, d3 += high * right;
  }
#endif
}""",
    # nvgpu.warpgroup.*: sm_90a's wgmma reads its operands by 64-bit
    # descriptors (start >> 4, leading byte offset >> 4: 16 for K-major
    # tiles, where it is unused, or the bytes from one 128-byte column block
    # of an MN-major tile to the next; 8-row stride 1024 >> 4, 128-byte
    # swizzle) of shared tiles in rows of 128 bytes that start 1024-aligned;
    # shared memory that ordinary stores or cp.async wrote needs a proxy
    # fence before the tensor cores read it. Elsewhere (before sm_90a) each
    # thread reads the swizzled tiles itself.
    "tc_wgmma": """\
__device__ __forceinline__ unsigned long long tc_wgmma_descriptor(const void* start, unsigned leading = 16) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(start);
  return (unsigned long long)((address & 0x3FFFF) >> 4) | ((unsigned long long)(leading >> 4) << 16) | (64ull << 32) | (1ull << 62);
}
template <int N>
__device__ __forceinline__ void tc_wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
#endif
}
__device__ __forceinline__ void tc_fence_proxy_async() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
// Element (r, k) of the swizzled tile whose element (0, 0) is `start`, as float.
template <typename T>
__device__ __forceinline__ float tc_swizzled(const T* start, int r, int k) {
  constexpr int per_chunk = 16 / sizeof(T);
  const unsigned long long at = (unsigned long long)start;
  const char* row = (const char*)start - (at & 127) + 128 * r;
  const int column = (int)((at & 127) / sizeof(T)) + k;
  const int chunk = (column / per_chunk) ^ (int)(((at >> 7) + r) & 7);
  return (float)*(const T*)(row + 16 * chunk + sizeof(T) * (column % per_chunk));
}
// Element (k, c) of the MN-major swizzled tile whose element (0, 0) is
// `start`, its 128-byte column blocks `leading` bytes apart, as float.
template <typename T>
__device__ __forceinline__ float tc_swizzled_mn(const T* start, unsigned leading, int k, int c) {
  constexpr int per_chunk = 16 / sizeof(T), per_row = 128 / sizeof(T);
  const unsigned long long at = (unsigned long long)start;
  const int column = (int)((at & 127) / sizeof(T)) + c;
  const char* row = (const char*)start - (at & 127) + leading * (column / per_row) + 128 * k;
  const int chunk = ((column % per_row) / per_chunk) ^ (int)(((at >> 7) + k) & 7);
  return (float)*(const T*)(row + 16 * chunk + sizeof(T) * (column % per_chunk));
}""",
}
HALF_MMA = {"__half": ("tc_mma_f16", "f16", "__half_as_short", "__half2float"),
            "__nv_bfloat16": ("tc_mma_bf16", "bf16", "__bfloat16_as_short", "__bfloat162float")}
"""By C type of the operands: the `nvgpu.mma.sync` m16n8k16 helper, PTX's
type, and the conversions its packing and fallback use."""


def _half_mma_helper(c_type: str) -> str:
    """`tc_mma_f16`/`tc_mma_bf16(d0..d3, a0..a7, b0..b3, c0..c3)`: the warp's
    D = A B + C (m16n8k16, f32 accumulators) from its threads' fragments
    (g = lane / 4, t = lane % 4; a0..a7 = A[g][2t], A[g][2t+1], A[g+8][2t],
    A[g+8][2t+1] and the same at k + 8; b0..b3 = B[2t][g], B[2t+1][g],
    B[2t+8][g], B[2t+9][g]; c, d as for TF32), each pair packed in one
    register, its first element in the low half. Before sm_80, the same sums
    in f32 from the other threads' registers by shuffles."""
    name, ptx, as_short, to_float = HALF_MMA[c_type]
    halves = ", ".join(f"{c_type} a{k}" for k in range(8)) + ", " + ", ".join(f"{c_type} b{k}" for k in range(4))
    pack = lambda lo, hi: f'"r"(tc_pack_half2({as_short}({lo}), {as_short}({hi})))'  # noqa: E731
    a = ", ".join(pack(f"a{k}", f"a{k + 1}") for k in range(0, 8, 2))
    b = ", ".join(pack(f"b{k}", f"b{k + 1}") for k in range(0, 4, 2))
    floats = lambda n, p: ", ".join(f"{to_float}({p}{k})" for k in range(n))  # noqa: E731
    return f"""\
__device__ __forceinline__ void {name}(float& d0, float& d1, float& d2, float& d3, {halves},
                                          float c0, float c1, float c2, float c3) {{
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : {a},
        {b},
        "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
  const int lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  const int g = lane / 4, t = lane % 4;
  const float a[8] = {{{floats(8, "a")}}}, b[4] = {{{floats(4, "b")}}};
  d0 = c0, d1 = c1, d2 = c2, d3 = c3;
  for (int k = 0; k < 16; ++k) {{
    const int from = (k % 8) / 2, high = k / 8, odd = k % 2;
    const float top = __shfl_sync(0xffffffffu, a[4 * high + odd], 4 * g + from);
    const float bottom = __shfl_sync(0xffffffffu, a[4 * high + 2 + odd], 4 * g + from);
    const float left = __shfl_sync(0xffffffffu, b[2 * high + odd], 8 * t + from);
    const float right = __shfl_sync(0xffffffffu, b[2 * high + odd], 8 * t + 4 + from);
    d0 += top * left, d1 += top * right, d2 += bottom * left, d3 += bottom * right;
  }}
#endif
}}"""


HELPERS["tc_pack_half2"] = """\
__device__ __forceinline__ unsigned tc_pack_half2(short low, short high) {
  return (unsigned)(unsigned short)low | ((unsigned)(unsigned short)high << 16);
}"""
for _c_type, (_name, *_) in HALF_MMA.items():
    HELPERS[_name] = _half_mma_helper(_c_type)


WGMMA_TYPES = {"float": "tf32", "__half": "f16", "__nv_bfloat16": "bf16"}
"""PTX's type of `wgmma`'s operands, by their C type."""
_WGMMA_NAME = re.compile(r"tc_wgmma_m64n(\d+)k(\d+)_(tf32|f16|bf16)(?:_ta(\d+))?(?:_tb(\d+))?(?:_w(\d+))?")


def wgmma_name(n: int, k: int, c_type: str, leading: tuple[int | None, int | None] = (None, None), pending: int = 0) -> str:
    """`tc_wgmma_m64n<N>k<K>_<type>[_ta<L>][_tb<L>][_w<P>]`: the helper of
    one `nvgpu.warpgroup.mma` shape and type, A (B) MN-major with column
    blocks L bytes apart where `leading` gives L, P groups left running."""
    a, b = leading
    suffix = (f"_ta{a}" if a else "") + (f"_tb{b}" if b else "") + (f"_w{pending}" if pending else "")
    return f"tc_wgmma_m64n{n}k{k}_{WGMMA_TYPES[c_type]}{suffix}"


def wgmma_helper(
    n: int, k: int, c_type: str, leading: tuple[int | None, int | None] = (None, None), pending: int = 0
) -> str:
    """`wgmma_name(n, k, c_type, leading, pending)(a, b, d0 .. d<N/2 - 1>)`:
    the warpgroup's D += A B^T (`nvgpu.warpgroup.mma`: TF32 m64nNk8 or
    f16/bf16 m64nNk16 instructions, as many as make k; a K-major operand's
    descriptor 32 bytes further along its rows each, an MN-major one's
    (transposed, its `leading` given) 2048 bytes further down: 16 rows) on
    the thread's accumulators in place, committed as one group and waited
    for until `pending` groups run (0: complete when it returns)."""
    ptx = WGMMA_TYPES[c_type]
    step = 8 if ptx == "tf32" else 16
    transposes = "" if ptx == "tf32" else f", {int(bool(leading[0]))}, {int(bool(leading[1]))}"
    advance = [2048 >> 4 if lead else 32 >> 4 for lead in leading]
    regs = n // 2
    params = ", ".join(f"float& d{j}" for j in range(regs))
    outs = ", ".join(f"%{j}" for j in range(regs))
    constraints = ", ".join(f'"+f"(d{j})' for j in range(regs))
    refs = ", ".join(f"&d{j}" for j in range(regs))
    issue = "\n".join(
        f"""  asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n{n}k{step}.f32.{ptx}.{ptx} {{{outs}}}, %{regs}, %{regs + 1}, p, 1, 1{transposes};\\n}}"
      : {constraints}
      : "l"(da + {advance[0] * s}), "l"(db + {advance[1] * s}));"""
        for s in range(k // step)
    )
    descriptors = ", ".join(
        f"d{name} = tc_wgmma_descriptor({name}{f', {lead}' if lead else ''})" for name, lead in zip("ab", leading)
    )
    element = lambda name, lead, r: (  # noqa: E731
        f"tc_swizzled_mn({name}, {lead}, k, {r})" if lead else f"tc_swizzled({name}, {r}, k)"
    )
    return f"""\
__device__ __forceinline__ void {wgmma_name(n, k, c_type, leading, pending)}(const {c_type}* a, const {c_type}* b, {params}) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const unsigned long long {descriptors};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
{issue}
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned {pending};" ::: "memory");
#else
  const int lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 128;
  const int row = 16 * (lane / 32) + (lane % 32) / 4, column = 2 * (lane % 4);
  float* d[{regs}] = {{{refs}}};
  for (int q = 0; q < {n // 8}; ++q)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {{
        float sum = *d[4 * q + 2 * h + e];
        for (int k = 0; k < {k}; ++k)
          sum += {element("a", leading[0], "row + 8 * h")} * {element("b", leading[1], "8 * q + column + e")};
        *d[4 * q + 2 * h + e] = sum;
      }}
#endif
}}"""


def helper_definitions(used: set[str]) -> list[str]:
    """The definitions of the `used` helpers, in a stable order (`wgmma_helper`s
    last, by type and shape)."""
    lead = lambda text: int(text) if text else 0  # noqa: E731
    shapes = sorted(
        (m.group(3), int(m.group(1)), int(m.group(2)), lead(m.group(4)), lead(m.group(5)), lead(m.group(6)))
        for m in map(_WGMMA_NAME.fullmatch, used)
        if m
    )
    c_types = {ptx: c_type for c_type, ptx in WGMMA_TYPES.items()}
    return [text for name, text in HELPERS.items() if name in used] + [
        wgmma_helper(n, k, c_types[ptx], (a or None, b or None), pending) for ptx, n, k, a, b, pending in shapes
    ]
