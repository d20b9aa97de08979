"""Print the `gpu.func` kernels of a gpu-level module as CUDA C.

    source = print_cuda(module)

Every kernel becomes an `extern "C" __global__` function taking `__restrict__`
pointers (`const` where the kernel never stores) for memref arguments and
values for scalars. Kernels read as written by hand: a value used once is
printed inside its user's expression (`C[0][0] += As[ty][k] * Bs[tx][k]`,
`A[(32 * by + ty) * 1024 + k]`), with parentheses only where C's precedence
needs them. Index arithmetic may move into a nested region (nvcc hoists it
again), other values stay in their block, and a load moves only past ops
that neither write memory nor synchronize nor call (`KernelPrinter.inline`).
A value used several times is one `const` local named after its SSA name
hint, but for simple index arithmetic (`ty + 16`, `4 * k + 1`);
constants are literals; a store of `x op e` to the element `x` was loaded
from is `x op= e`; casts to the same C type are no-ops; what nothing uses
is not printed (an unused `blockIdx.z`). Arithmetic prints as the IR has
it: `gpu-simplify-index` folds and shares it before. Memref arguments are
flat row-major arrays indexed from their static shapes; `memref.alloca`s in
address space 3 become `__shared__` arrays declared at kernel scope (with
`__align__(n)` where the alloca has an alignment), or, past the 48 KiB a
kernel may declare, array references into its dynamic shared memory
(`tcir.backends.cuda.shared_memory`), those in space 5 (or none)
per-thread local arrays. Semantics chosen for C:

- `arith.maximumf`/`minimumf` propagate NaN (helpers `tc_maximum`/`tc_minimum`,
  as the CPU backend's `llvm.maximum`); `maxnumf`/`minnumf` are `fmaxf`/`fminf`.
- Signless integers are signed C types; unsigned ops cast both operands to the
  unsigned type of the same width. Integer overflow is left to C (nvcc wraps).
- f16 is `__half` and bf16 `__nv_bfloat16`; their arithmetic uses the
  `cuda_fp16.h` and `cuda_bf16.h` operators and their math
  functions go through `float`.
- `func.call`s name CUDA math library functions (`erfcf`, `lgamma`, ...).
- `index` is 32-bit `int` (64-bit integer multiplies are slow on GPUs) when a
  kernel's index values provably fit: every memref it names (arguments,
  allocas, any other value) has a static shape of fewer than 2^31 elements,
  every `index` constant lies in [-2^31, 2^31), and no kernel argument is an
  `index` scalar (the host passes those as 64-bit values). Loop bounds and
  subscripts then stay within the arrays' extents, and flattened offsets
  below 2^31. Otherwise `index` is `long long` (`index32_fits`).

Ops without a CUDA translation raise `TCError` naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import singledispatchmethod

import numpy as np
from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, get_effects
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from tcir.backends.cuda.helpers import helper_definitions
from tcir.dialects.check import IndexOp
from tcir.ir.integer_forms import trip_count
from tcir.ir.loop_hints import unroll_factor
from tcir.backends.cuda.helpers import HALF_MMA, wgmma_name
from tcir.dialects.nvgpu import (
    COPY_BYTES,
    SWIZZLE_BYTES,
    DeviceAsyncCopyOp,
    DeviceAsyncCreateGroupOp,
    DeviceAsyncWaitOp,
    MmaSyncOp,
    SubgroupBarrierOp,
    SubgroupReduceOp,
    WarpgroupGenerateDescriptorOp,
    WarpgroupMmaOp,
    WarpgroupMmaWaitOp,
    element_bytes,
    swizzled,
)
from tcir.backends.cuda.launch import constant_block_size, kernel_symbol, kernels
from tcir.backends.cuda.naming import NameTable
from tcir.backends.cuda.shared_memory import alignment, dynamic_offsets, dynamic_shared_bytes, shared_buffers
from tcir.backends.cuda.scalar_types import (
    ATOMIC_EXTREMUM,
    ATOMIC_KINDS,
    HALF_TYPES,
    PRIVATE_SPACE,
    SHARED_SPACE,
    HalfType,
    c_type,
    int_width,
    is_float,
    is_unsigned,
    memory_space,
    static_shape,
    unsigned_c_type,
    written_memrefs,
)
from tcir.backends.source_text import IndentedLines
from tcir.errors import TCError
from tcir.ir.float_types import is_half

_BUILTINS = {
    gpu.ThreadIdOp: "threadIdx",
    gpu.BlockIdOp: "blockIdx",
    gpu.BlockDimOp: "blockDim",
    gpu.GridDimOp: "gridDim",
}

_FLOAT_BINARY = {arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}
_SIGNED_BINARY = {
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivSIOp: "/",
    arith.RemSIOp: "%",
    arith.AndIOp: "&",
    arith.OrIOp: "|",
    arith.XOrIOp: "^",
    arith.ShRSIOp: ">>",
}
#: Ops computed on the unsigned type of the operands' width.
_UNSIGNED_BINARY = {arith.DivUIOp: "/", arith.RemUIOp: "%", arith.ShRUIOp: ">>", arith.ShLIOp: "<<"}
#: On i1 (`bool`), modular add/sub/mul are logical ops.
_BOOL_BINARY = {arith.AddiOp: "^", arith.SubiOp: "^", arith.MuliOp: "&"}
INDEX_FAULT = "tc_fault"
"""The local holding a kernel's first bad subscript (`tc_index_fault`)."""
DYNAMIC_SHARED = "tc_dynamic_shared"
"""The kernel's dynamic shared memory, where its buffers live past 48 KiB."""
_MIN_MAX_INT = {arith.MinSIOp: "<", arith.MaxSIOp: ">", arith.MinUIOp: "<", arith.MaxUIOp: ">"}
_DIV_HELPERS = {
    arith.FloorDivSIOp: "tc_floordiv",
    arith.CeilDivSIOp: "tc_ceildiv",
    arith.CeilDivUIOp: "tc_ceildivu",
}

#: math ops -> CUDA math function (f64 name; f32 appends `f`).
_MATH_FUNCTIONS: dict[type[Operation], str] = {
    mathd.AbsFOp: "fabs",
    mathd.AcosOp: "acos",
    mathd.AcoshOp: "acosh",
    mathd.AsinOp: "asin",
    mathd.AsinhOp: "asinh",
    mathd.AtanOp: "atan",
    mathd.Atan2Op: "atan2",
    mathd.AtanhOp: "atanh",
    mathd.CbrtOp: "cbrt",
    mathd.CeilOp: "ceil",
    mathd.CopySignOp: "copysign",
    mathd.CosOp: "cos",
    mathd.CoshOp: "cosh",
    mathd.ErfOp: "erf",
    mathd.ExpOp: "exp",
    mathd.Exp2Op: "exp2",
    mathd.ExpM1Op: "expm1",
    mathd.FloorOp: "floor",
    mathd.FmaOp: "fma",
    mathd.LogOp: "log",
    mathd.Log10Op: "log10",
    mathd.Log1pOp: "log1p",
    mathd.Log2Op: "log2",
    mathd.PowFOp: "pow",
    mathd.RoundOp: "round",
    mathd.RoundEvenOp: "rint",
    mathd.RsqrtOp: "rsqrt",
    mathd.SinOp: "sin",
    mathd.SinhOp: "sinh",
    mathd.SqrtOp: "sqrt",
    mathd.TanOp: "tan",
    mathd.TanhOp: "tanh",
    mathd.TruncOp: "trunc",
}
_FLOAT_MIN_MAX = {
    arith.MaxnumfOp: ("fmax", False),
    arith.MinnumfOp: ("fmin", False),
    arith.MaximumfOp: ("tc_maximum", True),
    arith.MinimumfOp: ("tc_minimum", True),
}

#: Functions `func.call` may name (CUDA math library, f64 names; f32 appends `f`).
CALLABLE_FUNCTIONS = frozenset(
    """
    acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh cospi cyl_bessel_i0
    cyl_bessel_i1 erf erfc erfcinv erfcx erfinv exp exp10 exp2 expm1 fabs fdim floor fma
    fmax fmin fmod hypot j0 j1 lgamma log log10 log1p log2 logb nearbyint nextafter
    normcdf normcdfinv pow rcbrt remainder rint round rsqrt sin sinh sinpi sqrt tan
    tanh tgamma trunc y0 y1
    """.split()
)

#: C precedence levels (lower binds tighter); ATOM needs no parentheses anywhere.
ATOM, UNARY, TERNARY, ANY = 1, 3, 15, 16
_PRECEDENCE = {
    "*": 5, "/": 5, "%": 5, "+": 6, "-": 6, "<<": 7, ">>": 7,
    "<": 8, "<=": 8, ">": 8, ">=": 8, "==": 9, "!=": 9, "&": 10, "^": 11, "|": 12,
}
#: arith.cmpf predicate -> its C expression and that expression's precedence.
_CMPF = {
    "oeq": ("{a} == {b}", 9),
    "ogt": ("{a} > {b}", 8),
    "oge": ("{a} >= {b}", 8),
    "olt": ("{a} < {b}", 8),
    "ole": ("{a} <= {b}", 8),
    "one": ("({a} < {b} || {a} > {b})", ATOM),
    "ord": ("({a} == {a} && {b} == {b})", ATOM),
    "ueq": ("!({a} < {b} || {a} > {b})", UNARY),
    "ugt": ("!({a} <= {b})", UNARY),
    "uge": ("!({a} < {b})", UNARY),
    "ult": ("!({a} >= {b})", UNARY),
    "ule": ("!({a} > {b})", UNARY),
    "une": ("{a} != {b}", 9),
    "uno": ("({a} != {a} || {b} != {b})", ATOM),
    "false": ("false", ATOM),
    "true": ("true", ATOM),
}
_CMPI = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
#: Ops whose C text names an operand twice (`a < b ? a : b`): their operands
#: stay variables, or the text would grow exponentially with nesting.
_REPEATS_OPERANDS = (
    arith.MinSIOp, arith.MaxSIOp, arith.MinUIOp, arith.MaxUIOp, arith.CmpfOp, mathd.AbsIOp,
)

#: Float C type -> (reinterpret as integer, reinterpret integer as it).
_FLOAT_BITS = {
    **{name: (half.as_short, half.from_short) for name, half in HALF_TYPES.items()},
    "float": ("__float_as_int", "__int_as_float"),
    "double": ("__double_as_longlong", "__longlong_as_double"),
}


def float_literal(value: float, t: Attribute) -> str:
    """A C expression of type `t` (f16/f32/f64) with exactly `value`."""
    ctype = c_type(t)
    if ctype == "double":
        if math.isfinite(value):
            return repr(value)
        bits = "0x7ff8000000000000LL" if math.isnan(value) else "0x7ff0000000000000LL"
        text = f"__longlong_as_double({bits})"
    elif math.isfinite(value):
        text = str(np.float32(value)) + "f"
    else:
        bits = "0x7fc00000" if math.isnan(value) else "0x7f800000"
        text = f"__int_as_float({bits})"
    if math.isinf(value) and value < 0:
        text = "-" + text
    return f"{HALF_TYPES[ctype].from_float}({text})" if ctype in HALF_TYPES else text


def int_literal(value: int, t: Attribute, index32: bool = False) -> str:
    """A C literal of signless integer type `t` (`value` wrapped to its width;
    `index` is 32 bits wide where `index32`)."""
    bits = 32 if index32 and isinstance(t, IndexType) else int_width(t)
    if bits == 1:
        return "true" if value & 1 else "false"
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    if value == -(1 << 63):
        return "(-9223372036854775807LL - 1)"
    return str(value) if -(1 << 31) <= value < 1 << 31 else f"{value}LL"


INT32_MIN, INT32_LIMIT = -(1 << 31), 1 << 31


def _memref_fits(t: MemRefType[Attribute]) -> bool:
    shape = tuple(t.get_shape())
    return all(size >= 0 for size in shape) and math.prod(shape) < INT32_LIMIT


def index32_fits(kernel: gpu.FuncOp) -> bool:
    """Whether `kernel`'s `index` values may be printed as 32-bit `int`: its
    memrefs are static with fewer than 2^31 elements, its `index` constants
    fit in 32 bits, it has no `index` scalar argument, and no subscript it
    checks comes from a 64-bit index tensor (narrowed to `int` before
    `check.index`, 2^32 + 3 would pass as 3)."""
    args = kernel.body.block.args
    if any(isinstance(arg.type, IndexType) for arg in args):
        return False
    values: list[SSAValue] = list(args)
    for op in kernel.walk():
        values.extend(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.extend(block.args)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            if isinstance(op.value.type, IndexType):
                if not INT32_MIN <= op.value.value.data < INT32_LIMIT:
                    return False
        if isinstance(op, IndexOp) and int_width(op.value.type) not in (None, 8, 16, 32):
            return False
    return all(_memref_fits(v.type) for v in values if isinstance(v.type, MemRefType))


HALF_VECTORS = {2: "unsigned", 4: "uint2", 8: "uint4"}
"""The C types that carry vectors of 16-bit floats (which copies only move)."""


class KernelPrinter(IndentedLines):
    """Prints one `gpu.func` kernel; collects the helpers and headers it needs."""

    def __init__(self, kernel: gpu.FuncOp, block_size: tuple[int, int, int] | None):
        self.kernel = kernel
        self.index32 = index32_fits(kernel)
        self.block_size = block_size
        self.names = NameTable()
        self.literals: dict[SSAValue, str] = {}
        self.inlined: dict[SSAValue, tuple[str, int]] = {}
        """Values printed inline: their expression and its precedence."""
        self.reading: set[SSAValue] = set()
        """The inlined values whose expression reads memory."""
        self.unused = unused_ops(kernel)
        self.flat_buffers: dict[SSAValue, tuple[int, ...]] = {}
        self.yield_targets: list[list[str]] = []
        self.lines: list[str] = []
        self.depth = 0
        self.helpers: set[str] = set()
        self.tensor_core_tiles = any(isinstance(op, WarpgroupMmaOp) for op in kernel.walk())
        """Whether `nvgpu.warpgroup.mma` reads shared tiles (barriers then fence them)."""
        self.headers: set[str] = set()
        """The CUDA headers of the 16-bit float types the kernel uses."""

    # Output ---------------------------------------------------------------

    def ctype(self, t: Attribute) -> str:
        if self.index32 and isinstance(t, IndexType):
            return "int"
        if isinstance(t, VectorType):  # float2, float4, int4...: what gpu-vectorize-copies makes
            element = c_type(t.element_type)
            (lanes,) = t.get_shape()
            if element in HALF_TYPES and lanes in HALF_VECTORS:  # only copied: their bits
                return HALF_VECTORS[lanes]
            if element not in ("float", "int") or lanes not in (2, 4):
                raise TCError(f"cuda backend: type '{t}' is not supported")
            return f"{element}{lanes}"
        name = c_type(t)
        if name in HALF_TYPES:
            self.headers.add(HALF_TYPES[name].header)
        return name

    def half(self, t: Attribute) -> HalfType | None:
        """The conversions of 16-bit float type `t`, None for other types."""
        return HALF_TYPES.get(self.ctype(t)) if is_half(t) else None

    def utype(self, t: Attribute) -> str:
        """The unsigned C type of integer type `t` of the same (printed) width."""
        if self.index32 and isinstance(t, IndexType):
            return "unsigned int"
        return unsigned_c_type(t)

    def expr(self, value: SSAValue, context: int = ATOM, right: bool = False) -> str:
        """The C expression of `value` (its variable, literal or inline
        expression) as an operand of an operator of precedence `context`
        (`right`: its right operand), parenthesized where needed."""
        if value in self.literals:  # `-3 * x` is `(-3) * x`, but `x - (-3)`, `(float)(-3)`
            literal = self.literals[value]
            return f"({literal})" if literal.startswith("-") and (right or context <= UNARY) else literal
        if value in self.inlined:
            text, precedence = self.inlined[value]
            if precedence > context or precedence == context and right:
                return f"({text})"
            return text
        return self.names[value]

    def define(self, result: SSAValue, expression: str, precedence: int = ANY) -> None:
        """Print `result` inline where it is used (see `inline`), as a
        statement where nothing uses it, else as the `const` local holding it."""
        op = result.owner
        assert isinstance(op, Operation)
        reads = isinstance(op, memref.LoadOp | vector.LoadOp) or any(v in self.reading for v in op.operands)
        if not self.live_uses(result):
            self.line(f"{expression};")
        elif self.inline(result, reads):
            self.inlined[result] = (expression, precedence)
            if reads:
                self.reading.add(result)
        else:
            name = self.names.declare(result)
            self.line(f"const {self.ctype(result.type)} {name} = {expression};")

    def live_uses(self, result: SSAValue) -> list[Operation]:
        """The printed ops that use `result`."""
        return [use.operation for use in result.uses if use.operation not in self.unused]

    def inline(self, result: SSAValue, reads: bool) -> bool:
        """Whether `result` prints inside the expressions of its users: a
        value of a pure op or a load, not used as a loop-carried value (the
        moves of `scf.yield` compare names) nor by an op that repeats its
        operands, and used once, or a `simple` index op (`ty + 16` reads
        better than a name for it). Index arithmetic may move into a nested
        region, other values stay in their block. An expression that `reads`
        memory moves only past ops that neither write memory nor synchronize
        nor call (`quiet`), and not into a loop's bounds (C evaluates them
        each trip)."""
        op = result.owner
        assert isinstance(op, Operation)
        uses = self.live_uses(result)
        if isinstance(op, (*_BUILTINS, gpu.GlobalIdOp, memref.AtomicRMWOp)) or any(
            isinstance(user, (scf.YieldOp, *_REPEATS_OPERANDS)) for user in uses
        ):
            return False
        is_index = isinstance(result.type, IndexType) or (
            isinstance(op, arith.CmpiOp) and isinstance(op.lhs.type, IndexType)
        )
        if len(uses) != 1:
            return is_index and self.simple(op)
        user = uses[0]
        if reads:
            return user.parent is op.parent and not isinstance(user, scf.ForOp) and self.quiet_until(op, user)
        return is_index or user.parent is op.parent

    def simple(self, op: Operation) -> bool:
        """Whether `op` adds, subtracts, multiplies or compares two variables
        or literals (`ty + c`), or a literal and a variable times a literal
        (`4 * k + 1`)."""
        if not isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.CmpiOp)):
            return False
        nested = [v for v in op.operands if v in self.inlined]
        if not nested:
            return True
        scaled = nested[0].owner
        return (
            len(nested) == 1
            and all(v in self.literals for v in op.operands if v is not nested[0])
            and isinstance(scaled, arith.MuliOp)
            and not any(v in self.inlined for v in scaled.operands)
            and any(v in self.literals for v in scaled.operands)
        )

    def quiet_until(self, op: Operation, user: Operation) -> bool:
        """Whether every printed op after `op` and before `user` (in one block) is `quiet`."""
        following = op.next_op
        while following is not user:
            assert following is not None
            if following not in self.unused and not quiet(following):
                return False
            following = following.next_op
        return True

    # Kernel ---------------------------------------------------------------

    def print_kernel(self) -> str:
        """The CUDA C definition of the kernel."""
        block = self.kernel.body.block
        stored = written_memrefs(self.kernel)
        shared = exchanged_memrefs(self.kernel, stored)
        params = [self.param(arg, arg in stored, arg not in shared) for arg in block.args]
        name = self.kernel.sym_name.data
        bounds = f"__launch_bounds__({math.prod(self.block_size)}) " if self.block_size else ""
        self.depth = 1
        self.declare_shared()
        checks = any(isinstance(op, IndexOp) for op in self.kernel.walk())
        if checks:  # a thread's first bad subscript (`tc_checked_index`)
            self.line(f"tc_index_fault {INDEX_FAULT} = {{-1, 0, 0}};")
        self.block(block, [])
        if checks:
            self.line(f"if ({INDEX_FAULT}.check >= 0) {{")
            self.line(f"  tc_report_index_error({INDEX_FAULT}.check, {INDEX_FAULT}.subscript, {INDEX_FAULT}.value);")
            self.line("}")
        body = self.lines
        head = f'extern "C" __global__ void {bounds}{name}({", ".join(params)}) {{'
        return "\n".join([head, *body, "}"])

    def param(self, arg: SSAValue, stored: bool, restrict: bool) -> str:
        t = arg.type
        name = self.names.declare(arg)
        if isinstance(t, MemRefType):
            if memory_space(t) not in (0, 1):
                raise TCError(f"cuda backend: kernel argument '{name}' must be in global memory")
            self.flat_buffers[arg] = static_shape(t)
            const = "" if stored else "const "
            return f"{const}{self.ctype(t.element_type)}*{' __restrict__' if restrict else ''} {name}"
        return f"const {self.ctype(t)} {name}"

    def declare_shared(self) -> None:
        """Static `__shared__` arrays; past 48 KiB, references into the
        kernel's dynamic shared memory (which its launches request)."""
        if dynamic_shared_bytes(self.kernel):
            base = max(alignment(b) for b in shared_buffers(self.kernel))
            self.line(f"extern __shared__ __align__({base}) unsigned char {DYNAMIC_SHARED}[];")
            for op, offset in dynamic_offsets(self.kernel):
                name = self.names.declare(op.memref)
                element, dims = self.ctype(op.memref.type.element_type), _dims(op.memref.type)
                self.line(f"{element} (&{name}){dims} = *reinterpret_cast<{element} (*){dims}>({DYNAMIC_SHARED} + {offset});")
            return
        for op in shared_buffers(self.kernel):
            name = self.names.declare(op.memref)
            align = f"__align__({op.alignment.value.data}) " if op.alignment is not None else ""
            self.line(f"__shared__ {align}{self.array_declaration(op.memref.type, name)};")

    def array_declaration(self, t: MemRefType[Attribute], name: str) -> str:
        return f"{self.ctype(t.element_type)} {name}{_dims(t)}"

    def block(self, block: Block, targets: list[str]) -> None:
        self.yield_targets.append(targets)
        for op in block.ops:
            if op not in self.unused:
                self.emit(op)
        self.yield_targets.pop()

    # Helpers for op handlers -----------------------------------------------

    def binary(self, op: Operation, symbol: str) -> None:
        result = op.results[0]
        precedence = _PRECEDENCE[symbol]
        # Comparisons inside bitwise ops get parentheses too (as people write them).
        context = _PRECEDENCE["+"] if symbol in ("&", "^", "|") else precedence
        a, b = self.expr(op.operands[0], context), self.expr(op.operands[1], context, True)
        if all(v in self.literals for v in op.operands) and not is_float(result.type):
            a = f"(({self.ctype(result.type)}){a})"  # int literal op int literal: keep the type
        self.define(result, f"{a} {symbol} {b}", precedence)

    def unsigned_binary(self, op: Operation, symbol: str) -> None:
        t = op.results[0].type
        u = self.utype(t)
        a, b = (self.expr(v) for v in op.operands)
        if u == "bool" or is_unsigned(t):
            self.define(op.results[0], f"{a} {symbol} {b}")
        else:
            self.define(op.results[0], f"({self.ctype(t)})(({u}){a} {symbol} ({u}){b})")

    def float_call(
        self, name: str, args: Sequence[SSAValue | str], t: Attribute, overloaded: bool = False
    ) -> str:
        """A call of math function `name` (f64 spelling) on values of float type `t`.

        f32 appends `f` unless `overloaded`; f16 computes in float. Strings in
        `args` are expressions already of the computation type.
        """
        half = self.half(t)
        fn = name if overloaded or c_type(t) == "double" else name + "f"
        texts = [
            a if isinstance(a, str) else f"{half.to_float}({self.expr(a, ANY)})" if half else self.expr(a, ANY)
            for a in args
        ]
        call = f"{fn}({', '.join(texts)})"
        return f"{half.from_float}({call})" if half else call

    def compute_type(self, t: Attribute) -> str:
        """The C type math functions compute `t` in (`float` for f16)."""
        return "float" if is_half(t) else self.ctype(t)

    def convert(self, value: SSAValue, target: Attribute) -> tuple[str, int]:
        """`value` converted (numerically) to scalar type `target`: the C
        expression and its precedence."""
        source = value.type
        src, dst = self.ctype(source), self.ctype(target)
        argument, operand = self.expr(value, ANY), self.expr(value, UNARY)
        if src in HALF_TYPES:
            argument = operand = f"{HALF_TYPES[src].to_float}({argument})"
            src = "float"
        if dst in HALF_TYPES:
            half = HALF_TYPES[dst]
            if src == "double":
                return f"{half.from_double}({argument})", ATOM
            return f"{half.from_float}({argument if src == 'float' else f'(float){operand}'})", ATOM
        if dst == src:  # from a 16-bit float
            return argument, ATOM
        if dst == "bool" and not is_float(source):
            return f"({operand} & 1) != 0", _PRECEDENCE["!="]
        return f"({dst}){operand}", UNARY

    # Op handlers ----------------------------------------------------------

    @singledispatchmethod
    def emit(self, op: Operation) -> None:
        kind = type(op)
        if kind in _BUILTINS:
            dim = op.properties["dimension"].data  # pyright: ignore[reportAttributeAccessIssue]
            self.define(op.results[0], f"{_BUILTINS[kind]}.{dim}")
        elif kind in _FLOAT_BINARY:
            self.binary(op, _FLOAT_BINARY[kind])
        elif kind in _BOOL_BINARY and c_type(op.results[0].type) == "bool":
            self.binary(op, _BOOL_BINARY[kind])
        elif kind in _SIGNED_BINARY:
            self.binary(op, _SIGNED_BINARY[kind])
        elif kind in _UNSIGNED_BINARY:
            self.unsigned_binary(op, _UNSIGNED_BINARY[kind])
        elif kind in _MIN_MAX_INT:
            self.min_max_int(op)
        elif kind in _DIV_HELPERS:
            self.div_helper(op, _DIV_HELPERS[kind])
        elif kind in _FLOAT_MIN_MAX:
            name, is_helper = _FLOAT_MIN_MAX[kind]
            if is_helper:
                self.helpers.add(name)
            result = op.results[0]
            self.define(result, self.float_call(name, op.operands, result.type, is_helper), ATOM)
        elif kind in _MATH_FUNCTIONS:
            result = op.results[0]
            self.define(result, self.float_call(_MATH_FUNCTIONS[kind], op.operands, result.type), ATOM)
        else:
            raise TCError(f"cuda backend: op '{op.name}' is not supported")

    @emit.register
    def _(self, op: arith.ConstantOp) -> None:
        attr = op.value
        if isinstance(attr, FloatAttr):
            self.literals[op.result] = float_literal(attr.value.data, attr.type)
            self.ctype(attr.type)  # its header
        elif isinstance(attr, IntegerAttr):
            self.literals[op.result] = int_literal(attr.value.data, attr.type)
        else:
            raise TCError(f"cuda backend: op 'arith.constant' with value {attr} is not supported")

    def min_max_int(self, op: Operation) -> None:
        a, b = (self.expr(v) for v in op.operands)
        symbol = _MIN_MAX_INT[type(op)]
        t = op.results[0].type
        if isinstance(op, (arith.MinUIOp, arith.MaxUIOp)) and not is_unsigned(t):
            u = self.utype(t)
            self.define(op.results[0], f"({u}){a} {symbol} ({u}){b} ? {a} : {b}", TERNARY)
        else:
            self.define(op.results[0], f"{a} {symbol} {b} ? {a} : {b}", TERNARY)

    def div_helper(self, op: Operation, helper: str) -> None:
        self.helpers.add(helper)
        t = op.results[0].type
        ctype = self.utype(t) if helper == "tc_ceildivu" else self.ctype(t)
        a, b = (self.expr(v, ANY) for v in op.operands)
        if ctype != self.ctype(t):
            a, b = (f"({ctype}){self.expr(v)}" for v in op.operands)
        call = f"{helper}<{ctype}>({a}, {b})"
        if ctype == self.ctype(t):
            self.define(op.results[0], call, ATOM)
        else:
            self.define(op.results[0], f"({self.ctype(t)}){call}", UNARY)

    @emit.register
    def _(self, op: arith.NegfOp) -> None:
        self.define(op.result, f"-{self.expr(op.operand)}", UNARY)

    @emit.register
    def _(self, op: arith.CmpfOp) -> None:
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = self.expr(op.lhs), self.expr(op.rhs)
        text, precedence = _CMPF[predicate]
        self.define(op.result, text.format(a=a, b=b), precedence)

    @emit.register
    def _(self, op: arith.CmpiOp) -> None:
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        symbol = _CMPI[predicate.lstrip("su")]
        precedence = _PRECEDENCE[symbol]
        a, b = self.expr(op.lhs, precedence), self.expr(op.rhs, precedence, True)
        t = op.lhs.type
        if predicate[0] == "u" and not is_unsigned(t) and c_type(t) != "bool":
            u = self.utype(t)
            a, b = f"({u}){self.expr(op.lhs)}", f"({u}){self.expr(op.rhs)}"
        self.define(op.result, f"{a} {symbol} {b}", precedence)

    @emit.register
    def _(self, op: arith.SelectOp) -> None:
        c = self.expr(op.cond, _PRECEDENCE["|"])
        a, b = self.expr(op.lhs, ANY), self.expr(op.rhs, TERNARY)
        self.define(op.result, f"{c} ? {a} : {b}", TERNARY)

    @emit.register
    def _(
        self,
        op: arith.ExtFOp
        | arith.TruncFOp
        | arith.SIToFPOp
        | arith.FPToSIOp
        | arith.TruncIOp
        | arith.IndexCastOp,
    ) -> None:
        source, result = op.operands[0], op.results[0]
        if self.ctype(source.type) == self.ctype(result.type):
            self.same_value(result, source)
            return
        self.define(result, *self.convert(source, result.type))

    def same_value(self, result: SSAValue, source: SSAValue) -> None:
        """Print `result` as `source` (a cast to the same C type)."""
        if source in self.literals:
            self.literals[result] = self.literals[source]
        elif source in self.inlined:
            self.define(result, *self.inlined[source])
        else:
            self.names.alias(result, self.names[source])

    @emit.register
    def _(self, op: arith.ExtSIOp) -> None:
        if c_type(op.input.type) == "bool":  # i1 true is -1
            self.define(op.result, f"{self.expr(op.input, _PRECEDENCE['|'])} ? -1 : 0", TERNARY)
        else:
            self.define(op.result, f"({self.ctype(op.result.type)}){self.expr(op.input, UNARY)}", UNARY)

    @emit.register
    def _(self, op: arith.UIToFPOp | arith.ExtUIOp) -> None:
        source = op.operands[0]
        x = self.expr(source, UNARY)
        if c_type(source.type) != "bool" and not is_unsigned(source.type):
            x = f"({self.utype(source.type)}){x}"
        target = op.results[0].type
        half = self.half(target)
        if half is not None:
            self.define(op.results[0], f"{half.from_float}((float){x})", ATOM)
        else:
            self.define(op.results[0], f"({self.ctype(target)}){x}", UNARY)

    @emit.register
    def _(self, op: arith.FPToUIOp) -> None:
        x = self.expr(op.input, UNARY)
        half = self.half(op.input.type)
        if half is not None:
            x = f"{half.to_float}({self.expr(op.input, ANY)})"
        t = op.result.type
        self.define(op.result, f"({self.ctype(t)})({self.utype(t)}){x}", UNARY)

    @emit.register
    def _(self, op: arith.BitcastOp) -> None:
        source, target = self.ctype(op.input.type), self.ctype(op.result.type)
        x = self.expr(op.input, ANY)
        if source in _FLOAT_BITS:
            self.define(op.result, f"({target}){_FLOAT_BITS[source][0]}({x})", UNARY)
        elif target in _FLOAT_BITS:
            self.define(op.result, f"{_FLOAT_BITS[target][1]}({x})", ATOM)
        else:
            self.define(op.result, f"({target}){self.expr(op.input, UNARY)}", UNARY)

    @emit.register
    def _(self, op: mathd.FPowIOp) -> None:
        t = op.result.type
        exponent = f"({self.compute_type(t)}){self.expr(op.rhs)}"
        self.define(op.result, self.float_call("pow", [op.lhs, exponent], t), ATOM)

    @emit.register
    def _(self, op: mathd.AbsIOp) -> None:
        x = self.expr(op.operand)
        self.define(op.result, f"{x} < 0 ? -{x} : {x}", TERNARY)

    @emit.register
    def _(self, op: func.CallOp) -> None:
        name = op.callee.root_reference.data
        if len(op.res) != 1 or not op.arguments:
            raise TCError(f"cuda backend: op 'func.call' of '@{name}' is not supported")
        t = op.res[0].type
        base = name.removesuffix("f") if c_type(t) == "float" else name
        if (
            not is_float(t)
            or base == name
            and c_type(t) == "float"
            or base not in CALLABLE_FUNCTIONS
        ):
            raise TCError(
                f"cuda backend: op 'func.call' of '@{name}' is not supported"
                f" (not a CUDA math function of {t})"
            )
        self.define(op.res[0], self.float_call(base, op.arguments, t), ATOM)

    @emit.register
    def _(self, op: memref.LoadOp) -> None:
        self.define(op.res, self.access(op.memref, op.indices), ATOM)

    @emit.register
    def _(self, op: memref.StoreOp) -> None:
        target = self.access(op.memref, op.indices)
        update = self.update_of(op)
        if update is None:
            self.line(f"{target} = {self.expr(op.value, ANY)};")
        else:
            symbol, operand = update
            self.line(f"{target} {symbol}= {self.expr(operand, ANY)};")

    @emit.register
    def _(self, op: vector.LoadOp) -> None:
        vector_type = self.ctype(op.result.type)
        self.define(op.result, f"*reinterpret_cast<const {vector_type}*>(&{self.access(op.base, op.indices)})", UNARY)

    @emit.register
    def _(self, op: vector.StoreOp) -> None:
        target = self.access(op.base, op.indices)
        self.line(f"*reinterpret_cast<{self.ctype(op.vector.type)}*>(&{target}) = {self.expr(op.vector, ANY)};")

    def update_of(self, store: memref.StoreOp) -> tuple[str, SSAValue] | None:
        """`(op, e)` where `store` writes `x op e` (inline) to the element `x`
        was loaded from (inline, the same memref and index values): printed
        `x op= e`, the same C."""
        value = store.value.owner
        if store.value not in self.inlined or not isinstance(value, Operation) or len(value.operands) != 2:
            return None
        symbol = _FLOAT_BINARY.get(type(value))
        if symbol is None and self.ctype(store.value.type) != "bool":
            symbol = _SIGNED_BINARY.get(type(value))
        load = value.operands[0].owner
        if (
            symbol is None
            or value.operands[0] not in self.inlined
            or not isinstance(load, memref.LoadOp)
            or load.memref != store.memref
            or tuple(load.indices) != tuple(store.indices)
        ):
            return None
        return symbol, value.operands[1]

    def access(self, buffer: SSAValue, indices: Sequence[SSAValue], swizzle: bool = True) -> str:
        """`A[i * 32 + k]` for flat kernel arguments, `As[i][k]` for local
        arrays (`As[i][k ^ (i & 7) << 2]` in the 128-byte swizzle, unless
        `swizzle` is off: then the element the unswizzled layout would put there)."""
        name = self.names[buffer]
        if buffer not in self.flat_buffers:
            texts = [self.expr(i, ANY) for i in indices]
            if swizzled(buffer.type) and len(indices) >= 2:
                t = buffer.type
                assert isinstance(t, MemRefType)
                row = self.expr(indices[-2], _PRECEDENCE["*"])
                column = self.expr(indices[-1], _PRECEDENCE["*"])
                per_row = _swizzle_row(t)
                shift = (16 // element_bytes(t.element_type)).bit_length() - 1
                within = f"{column} % {per_row}" if t.get_shape()[-1] > per_row else column
                texts[-1] = f"{within} ^ (({row} & 7) << {shift})" if swizzle else within
                if t.get_shape()[-1] > per_row:  # a row's worth of columns at a time (see SwizzleLayoutAttr)
                    texts[-2:-1] = [f"{column} / {per_row}", texts[-2]]
            return name + "".join(f"[{t}]" for t in texts) if texts else f"{name}[0]"
        shape = self.flat_buffers[buffer]
        terms: list[str] = []
        for dim, index in enumerate(indices):
            stride = math.prod(shape[dim + 1 :])
            text = self.expr(index, _PRECEDENCE["+"] if stride == 1 else _PRECEDENCE["*"])
            if text.startswith("-") and terms:  # A[i * 64 + (-3 - j)]
                text = f"({text})"
            if text != "0":
                terms.append(text if stride == 1 else f"{text} * {stride}")
        return f"{name}[{' + '.join(terms) or '0'}]"

    @emit.register
    def _(self, op: memref.AtomicRMWOp) -> None:
        kind = op.kind.value.data
        if kind not in ATOMIC_KINDS.values():
            raise TCError(
                f"cuda backend: op 'memref.atomic_rmw' of kind {kind} is not supported "
                "(only addf, addi, maximumf, maxs, minimumf, mins)"
            )
        target = self.access(op.memref, op.indices)
        value = self.expr(op.value, ANY)
        if kind in ATOMIC_EXTREMUM:
            if op.result.uses:
                raise TCError(f"cuda backend: op 'memref.atomic_rmw' of kind {kind}: its old value is not supported")
            extremum = ATOMIC_EXTREMUM[kind]
            if isinstance(op.value.type, AnyFloat):
                self.helpers.update(("tc_maximum", "tc_minimum", "tc_atomic_extremum"))
                self.line(f"tc_atomic_extremum<{str(extremum == 'max').lower()}>(&{target}, {value});")
            else:
                self.line(f"atomic{extremum.capitalize()}(&{target}, {value});")
            return
        if op.result.uses:  # the old value is needed: one atomic per thread
            self.define(op.result, f"atomicAdd(&{target}, {value})", ATOM)
        else:  # summed across the warp first (`tc_atomic_add`)
            self.helpers.add("tc_atomic_add")
            self.line(f"tc_atomic_add(&{target}, {value});")

    @emit.register
    def _(self, op: DeviceAsyncCopyOp) -> None:
        size = op.bytes
        if size not in COPY_BYTES:
            raise TCError(f"cuda backend: op 'nvgpu.device_async_copy' of {size} bytes is not supported")
        self.helpers.add("tc_cp_async")
        target, source = self.access(op.dst, op.dst_indices), self.access(op.src, op.src_indices)
        self.line(f"tc_cp_async_{size}(&{target}, &{source});")

    @emit.register
    def _(self, op: DeviceAsyncCreateGroupOp) -> None:
        self.helpers.add("tc_cp_async")
        self.line("tc_cp_async_commit();")

    @emit.register
    def _(self, op: DeviceAsyncWaitOp) -> None:
        self.helpers.add("tc_cp_async")
        self.line(f"tc_cp_async_wait<{op.groups}>();")

    @emit.register
    def _(self, op: MmaSyncOp) -> None:
        helper = "tc_mma_tf32"
        if op.kind == "half":  # pairs of halves packed into the mma's 32-bit registers
            helper = HALF_MMA[c_type(op.matrix_a[0].type)][0]
            self.helpers.add("tc_pack_half2")
        self.helpers.add(helper)
        names = [self.names.declare(r) for r in op.res]
        self.line(f"float {', '.join(names)};")
        self.line(f"{helper}({', '.join([*names, *(self.expr(v, ANY) for v in op.operands)])});")

    @emit.register
    def _(self, op: WarpgroupGenerateDescriptorOp) -> None:
        self.helpers.add("tc_wgmma")
        name = self.names.declare(op.result)
        element = c_type(op.source.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
        self.line(f"const {element}* {name} = &{self.access(op.source, op.subscript_operands, swizzle=False)};")

    @emit.register
    def _(self, op: WarpgroupMmaOp) -> None:
        self.helpers.add("tc_wgmma")
        helper = wgmma_name(op.n, op.k, c_type(op.element_type), _leading_bytes(op), op.pending)
        self.helpers.add(helper)
        names = [self.names.declare(r) for r in op.res]
        self.line(f"float {', '.join(f'{n} = {self.expr(c, ANY)}' for n, c in zip(names, op.matrix_c))};")
        a, b = self.names[op.descriptor_a], self.names[op.descriptor_b]
        self.line(f"{helper}({', '.join([a, b, *names])});")

    @emit.register
    def _(self, op: WarpgroupMmaWaitOp) -> None:
        self.helpers.add("tc_wgmma")
        self.line(f"tc_wgmma_wait<{op.groups}>();")

    @emit.register
    def _(self, op: IndexOp) -> None:
        self.helpers.add("tc_checked_index")
        sub, value = self.expr(op.subscript, ANY), self.expr(op.value, ANY)
        check, extent = op.check_id.value.data, op.extent.value.data
        self.define(op.result, f"tc_checked_index({sub}, {extent}, {value}, {check}, {INDEX_FAULT})", ATOM)

    @emit.register
    def _(self, op: memref.AllocaOp) -> None:
        t = op.memref.type
        space = memory_space(t)
        if space == SHARED_SPACE:
            return  # declared at kernel scope
        if space not in (0, PRIVATE_SPACE) or op.dynamic_sizes:
            raise TCError(f"cuda backend: op 'memref.alloca' of '{t}' is not supported")
        name = self.names.declare(op.memref)
        self.line(f"{self.array_declaration(t, name)};")

    @emit.register
    def _(self, op: gpu.AllReduceOp) -> None:
        if op.op is None or self.block_size is None:
            raise TCError("cuda backend: op 'gpu.all_reduce' needs an operation and a known block size")
        self.helpers.add("tc_all_reduce")
        threads = math.prod(self.block_size)
        self._reduce(op.result, op.operand, op.op.data.value, f"tc_all_reduce<{threads}>", op.name)

    @emit.register
    def _(self, op: SubgroupReduceOp) -> None:
        self.helpers.add("tc_warp_reduce")
        self._reduce(op.result, op.value, op.op.data.value, "tc_warp_reduce", op.name)

    def _reduce(self, result: SSAValue, value: SSAValue, kind: str, helper: str, what: str) -> None:
        """`result = helper(value, combine)`, `combine` the lambda of `kind`."""
        t = result.type
        ctype = self.ctype(t)
        if kind in ("add", "mul"):
            body = f"a {'+' if kind == 'add' else '*'} b"
        elif is_float(t):
            extremum = "tc_maximum" if kind == "max" else "tc_minimum"
            self.helpers.add(extremum)
            body = f"{extremum}(a, b)"
        elif kind in ("max", "min"):
            body = f"a {'>' if kind == 'max' else '<'} b ? a : b"
        else:
            raise TCError(f"cuda backend: op '{what}' of {kind} is not supported")
        combine = f"[]({ctype} a, {ctype} b) {{ return {body}; }}"
        name = self.names.declare(result)
        self.line(f"const {ctype} {name} = {helper}({self.expr(value, ANY)}, {combine});")

    @emit.register
    def _(self, op: SubgroupBarrierOp) -> None:
        self.line("__syncwarp();")

    @emit.register
    def _(self, op: gpu.BarrierOp) -> None:
        if self.tensor_core_tiles:  # what threads wrote, the tensor cores read next
            self.line("tc_fence_proxy_async();")
        self.line("__syncthreads();")

    @emit.register
    def _(self, op: gpu.GlobalIdOp) -> None:
        d = op.dimension.data
        if self.index32:
            self.define(op.result, f"(int)(blockIdx.{d} * blockDim.{d} + threadIdx.{d})")
        else:
            self.define(op.result, f"(long long)blockIdx.{d} * blockDim.{d} + threadIdx.{d}")

    @emit.register
    def _(self, op: gpu.ReturnOp) -> None:
        if op.args:  # the end of the kernel: nothing to print
            raise TCError("cuda backend: op 'gpu.return' with operands is not supported")

    @emit.register
    def _(self, op: scf.ForOp) -> None:
        block = op.body.block
        targets: list[str] = []
        for arg, init, result in zip(block.args[1:], op.iter_args, op.res):
            name = self.names.declare(result if result.name_hint else arg)
            self.names.alias(arg, name)
            self.names.alias(result, name)
            self.line(f"{self.ctype(arg.type)} {name} = {self.expr(init)};")
            targets.append(name)
        iv = self.names.declare(block.args[0])
        step = self.expr(op.step)
        increment = f"++{iv}" if step == "1" else f"{iv} += {step}"
        lb, ub = self.expr(op.lb, ANY), self.expr(op.ub, _PRECEDENCE["<"], True)
        factor = unroll_factor(op, PRIVATE_SPACE)
        if factor is not None:
            self.line("#pragma unroll" if factor == trip_count(op) else f"#pragma unroll {factor}")
        self.line(
            f"for ({self.ctype(block.args[0].type)} {iv} = {lb}; {iv} < {ub}; {increment}) {{"
        )
        with self.indented():
            self.block(block, targets)
        self.line("}")

    @emit.register
    def _(self, op: scf.IfOp) -> None:
        targets: list[str] = []
        for result in op.output:
            name = self.names.declare(result)
            self.line(f"{self.ctype(result.type)} {name};")
            targets.append(name)
        self.line(f"if ({self.expr(op.cond, ANY)}) {{")
        with self.indented():
            self.block(op.true_region.block, targets)
        else_block = op.false_region.blocks.first
        if else_block is not None and any(
            not isinstance(o, scf.YieldOp) or o.operands for o in else_block.ops
        ):
            self.line("} else {")
            with self.indented():
                self.block(else_block, targets)
        self.line("}")

    @emit.register
    def _(self, op: scf.YieldOp) -> None:
        targets = self.yield_targets[-1]
        moves = [
            (target, self.expr(v), v.type)
            for target, v in zip(targets, op.operands)
            if target != self.expr(v)
        ]
        if len(moves) > 1 and any(value in targets for _, value, _ in moves):
            # Loop-carried values permuted: read all before writing any.
            staged: list[tuple[str, str, Attribute]] = []
            for target, value, t in moves:
                temp = self.names.fresh(f"{target}_next")
                self.line(f"const {self.ctype(t)} {temp} = {value};")
                staged.append((target, temp, t))
            moves = staged
        for target, value, _ in moves:
            self.line(f"{target} = {value};")


def quiet(op: Operation) -> bool:
    """Whether `op` neither writes memory nor synchronizes nor calls, so a
    read may move past it (its memory effects are known: reads, allocations)."""
    effects = get_effects(op)
    allowed = (MemoryEffectKind.READ, MemoryEffectKind.ALLOC)
    return effects is not None and all(effect.kind in allowed for effect in effects)


def exchanged_memrefs(kernel: gpu.FuncOp, stored: set[SSAValue]) -> set[SSAValue]:
    """The global buffers through which threads of a block may pass values:
    written and read in a kernel that synchronizes. They are not
    `__restrict__`: nvcc takes a restricted element that this thread did
    not write for unchanged across `__syncthreads()`, and reuses a value it
    loaded before the barrier (seen: a row's sum that thread 0 updated in
    global memory, read back stale by the others)."""
    synchronizing = gpu.BarrierOp | gpu.AllReduceOp | SubgroupBarrierOp | SubgroupReduceOp
    if not any(isinstance(op, synchronizing) for op in kernel.walk()):
        return set()
    loaded = {op.memref for op in kernel.walk() if isinstance(op, memref.LoadOp)}
    loaded |= {op.base for op in kernel.walk() if isinstance(op, vector.LoadOp)}
    return stored & loaded


def unused_ops(kernel: gpu.FuncOp) -> set[Operation]:
    """The ops of `kernel` that nothing printed uses and that have no effect:
    left out (an unused `blockIdx.z`, a load whose value nothing needs)."""
    unused: set[Operation] = set()
    for op in reversed(list(kernel.walk())):
        removable = isinstance(op, (*_BUILTINS, gpu.GlobalIdOp)) or would_be_trivially_dead(op)
        if op.results and not op.regions and removable and all(
            use.operation in unused for result in op.results for use in result.uses
        ):
            unused.add(op)
    return unused


def _dims(t: MemRefType[Attribute]) -> str:
    """The C array dimensions of a statically shaped memref (`[1]` for a
    scalar; a swizzled one's columns a row's worth at a time, outermost)."""
    shape = static_shape(t) or (1,)
    if swizzled(t) and shape[-1] > _swizzle_row(t):
        shape = (*shape[:-2], shape[-1] // _swizzle_row(t), shape[-2], _swizzle_row(t))
    return "".join(f"[{size}]" for size in shape)


def _leading_bytes(op: WarpgroupMmaOp) -> tuple[int | None, int | None]:
    """Per operand of `op`, read MN-major: the bytes from one column block of
    its tile to the next (its rows times 128); None for a K-major one."""
    leading: list[int | None] = []
    for descriptor, transposed in zip((op.descriptor_a, op.descriptor_b), op.transposes):
        source = descriptor.owner.operands[0].type if isinstance(descriptor.owner, Operation) else None
        assert not transposed or isinstance(source, MemRefType)
        leading.append(source.get_shape()[-2] * SWIZZLE_BYTES if transposed and isinstance(source, MemRefType) else None)
    return leading[0], leading[1]


def _swizzle_row(t: MemRefType[Attribute]) -> int:
    """The elements of a row of a swizzled memref."""
    return SWIZZLE_BYTES // element_bytes(t.element_type)


def launch_block_sizes(module: ModuleOp) -> dict[str, tuple[int, int, int]]:
    """Kernel name -> its block size, where every launch uses one constant size."""
    sizes: dict[str, set[tuple[int, int, int] | None]] = {}
    for op in module.walk():
        if isinstance(op, gpu.LaunchFuncOp):
            sizes.setdefault(kernel_symbol(op), set()).add(constant_block_size(op))
    return {
        name: size
        for name, found in sizes.items()
        if len(found) == 1 and (size := next(iter(found))) is not None
    }


def print_cuda(module: ModuleOp) -> str:
    """The CUDA C translation unit of all kernels of `module`."""
    launched = launch_block_sizes(module)
    helpers: set[str] = set()
    headers: set[str] = set()
    bodies: list[str] = []
    for kernel in kernels(module):
        known = kernel.known_block_size
        block_size = (
            tuple(known.get_values()) if known is not None else launched.get(kernel.sym_name.data)
        )
        printer = KernelPrinter(kernel, block_size)  # type: ignore[arg-type]
        bodies.append(printer.print_kernel())
        helpers |= printer.helpers
        headers |= printer.headers
    head = ["// Generated by tcir (CUDA backend).", *(f"#include <{h}>" for h in sorted(headers))]
    return "\n\n".join(["\n".join(head), *helper_definitions(helpers), *bodies]) + "\n"
