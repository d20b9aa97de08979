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

For float16 and bfloat16 operands (f32 accumulators), m16n8k16:

    %d0, %d1, %d2, %d3 = "nvgpu.mma.sync"(%a0, ..., %a7, %b0, ..., %b3, %c0, %c1, %c2, %c3)
        <{mmaShape = [16, 8, 16]}> : (f16, ..., f16, f32, f32, f32, f32) -> (f32, f32, f32, f32)

a0..a7 are A[g][2t], A[g][2t+1], A[g+8][2t], A[g+8][2t+1], A[g][2t+8],
A[g][2t+9], A[g+8][2t+8], A[g+8][2t+9] of the 16x16 A (PTX packs each pair
in a register); b0..b3 are B[2t][g], B[2t+1][g], B[2t+8][g], B[2t+9][g] of
the 16x8 B; C and D as for TF32. The products and sums are exact in f32
but for the order of the sums: no precision is lost beyond the inputs'.

And sm_90's warpgroup-level multiply-accumulate (`wgmma.mma_async`, made
synchronous), as MLIR's `nvgpu.warpgroup.generate.descriptor` and
`nvgpu.warpgroup.mma`, with both operands in shared memory, for TF32:

    %a = "nvgpu.warpgroup.generate.descriptor"(%As, %s, %i, %k)
        : (memref<3x128x32xf32, #nvgpu.swizzle<128>, 3>, index, index, index) -> !nvgpu.warpgroup.descriptor
    %d0, ..., %d63 = "nvgpu.warpgroup.mma"(%a, %b, %c0, ..., %c63) <{mmaShape = [64, 128, 8], tf32Enabled}>

and for float16 and bfloat16 (f32 accumulators, exact products), m64nNk16:

    %d0, ..., %d63 = "nvgpu.warpgroup.mma"(%a, %b, %c0, ..., %c63) <{mmaShape = [64, 128, 16], operandType = f16}>

The 128 threads of a warpgroup (4 consecutive warps, the first a multiple
of 4) run it together: D = A B^T + C for the 64xK A whose rows start at the
A descriptor's element (consecutive rows of its buffer) and the NxK B (rows
of B likewise, the reduction along both buffers' rows: K-major). Thread
(w = warp in the group, g = lane / 4, t = lane % 4) holds accumulators
4j .. 4j + 3 at C[16w + g][8j + 2t], C[16w + g][8j + 2t + 1],
C[16w + g + 8][8j + 2t], C[16w + g + 8][8j + 2t + 1]. The operands' buffers
have rows of 128 bytes in the hardware's 128-byte swizzle
(`#nvgpu.swizzle<128>`, 1024-byte aligned). In a statement of a `poly.scop`
the descriptor's source is a tensor and its indices are affine subscripts
(`map`) of the statement's iterators, as `tc.read`'s, of an element that
`poly-promote` put in a shared buffer; lowering gives it the buffer.

And a warp's own reduction and barrier, which MLIR spells
`gpu.subgroup_reduce` and NVVM's `bar.warp.sync` and xDSL lacks:

    %t = nvgpu.subgroup_reduce add %p : (f32) -> f32
    nvgpu.subgroup_barrier

The first gives every thread of the warp the combination (`add`, `mul`,
`max`, `min`, as `gpu.all_reduce`'s) of the warp's values; the second is
CUDA's `__syncwarp()`. All 32 threads of the warp run them together:
`poly-map-to-gpu` uses them where a block's rows are a warp each.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I32,
    I64,
    AffineMapAttr,
    ArrayAttr,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefLayoutAttr,
    MemRefType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.gpu import AllReduceOpAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)

from tcir.dialects.tc import TensorType
from tcir.ir.float_types import HalfFloatType
from xdsl.parser import AttrParser
from xdsl.printer import Printer
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


class _GroupWait(IRDLOperation):
    """A wait until at most `numGroups` groups of asynchronous work run."""

    num_groups = prop_def(IntegerAttr[I32], prop_name="numGroups")

    def __init__(self, groups: int = 0):
        super().__init__(properties={"numGroups": IntegerAttr(groups, 32)})

    @property
    def groups(self) -> int:
        return self.num_groups.value.data


@irdl_op_definition
class DeviceAsyncWaitOp(_GroupWait):
    """Wait until at most `numGroups` of this thread's groups are in flight."""

    name = "nvgpu.device_async_wait"


MmaOperandType = Float32Type | HalfFloatType
"""Element types of `mma.sync`'s A and B: f32 (read as TF32), f16, bf16."""
MMA_SHAPES = {"tf32": (16, 8, 8), "half": (16, 8, 16)}
"""The m, n, k of `mma.sync` for TF32 (m16n8k8) and for the half types (m16n8k16)."""
MMA_OPERANDS = {"tf32": (4, 2, 4), "half": (8, 4, 4)}
"""Elements a thread holds of the A, B and C fragments of each."""


@irdl_op_definition
class MmaSyncOp(IRDLOperation):
    """A warp's D = A B + C on the tensor cores, from its threads' fragments."""

    name = "nvgpu.mma.sync"

    matrix_a = var_operand_def(MmaOperandType)
    matrix_b = var_operand_def(MmaOperandType)
    matrix_c = var_operand_def(Float32Type)
    res = var_result_def(Float32Type)
    mma_shape = prop_def(ArrayAttr[IntegerAttr], prop_name="mmaShape")
    tf32_enabled = opt_prop_def(UnitAttr, prop_name="tf32Enabled")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, a: Sequence[SSAValue], b: Sequence[SSAValue], c: Sequence[SSAValue]):
        kind = "tf32" if isinstance(a[0].type, Float32Type) else "half"
        super().__init__(
            operands=[a, b, c],
            result_types=[[c_.type for c_ in c]],
            properties={
                "mmaShape": ArrayAttr(IntegerAttr(d, i64) for d in MMA_SHAPES[kind]),
                **({"tf32Enabled": UnitAttr()} if kind == "tf32" else {}),
            },
        )

    @property
    def kind(self) -> str:
        """Which of `MMA_SHAPES` the operands' type asks for: `tf32` or `half`."""
        return "tf32" if all(isinstance(v.type, Float32Type) for v in self.matrix_a) else "half"

    def verify_(self) -> None:
        kind = self.kind
        shape = tuple(d.value.data for d in self.mma_shape.data)
        types = {v.type for v in (*self.matrix_a, *self.matrix_b)}
        if kind == "half" and len(types) != 1:
            raise VerifyException(f"'{self.name}' op takes A and B of one type, got {', '.join(sorted(map(str, types)))}")
        if shape != MMA_SHAPES[kind] or (self.tf32_enabled is not None) != (kind == "tf32"):
            raise VerifyException(
                f"'{self.name}' op supports mmaShape = [16, 8, 8] with tf32Enabled (f32 operands) "
                "and mmaShape = [16, 8, 16] (f16 or bf16 operands) only"
            )
        expected = MMA_OPERANDS[kind]
        counts = (len(self.matrix_a), len(self.matrix_b), len(self.matrix_c))
        if counts != expected or len(self.res) != expected[2]:
            raise VerifyException(
                f"'{self.name}' op takes {expected[0]}, {expected[1]} and {expected[2]} registers of A, B and C "
                f"and gives {expected[2]}, got {counts[0]}, {counts[1]}, {counts[2]} and {len(self.res)}"
            )


SWIZZLE_BYTES = 128
"""The row length of a swizzled buffer: 16-byte chunk c of row r lies at chunk c ^ (r mod 8)."""
SWIZZLE_ALIGNMENT = 1024
"""Bytes a swizzled buffer's start is a multiple of (8 rows: the pattern's period)."""


@irdl_attr_definition
class SwizzleLayoutAttr(MemRefLayoutAttr, ParametrizedAttribute):
    """`#nvgpu.swizzle<128>`: a memref stored in rows of `bytes`, whose 16-byte
    chunks are permuted within each row, chunk c of row r at c ^ (r mod 8)
    (the tensor cores' 128-byte swizzle: the 8 rows of a column of chunks
    fall in distinct banks). Where the last dimension is longer than a row,
    its columns are stored a row's worth at a time: columns 0 .. E - 1 of
    every row first (E elements a row), then the next E (the `wgmma` layout
    of an MN-major operand, one swizzled tile of 8-row atoms per E columns).
    Indices address elements as in the plain row-major layout; only the
    printer of CUDA applies it."""

    name = "nvgpu.swizzle"

    bytes: IntAttr

    def __init__(self, bytes: int = SWIZZLE_BYTES):
        super().__init__(IntAttr(bytes))

    def get_affine_map(self) -> AffineMap:
        raise NotImplementedError("a swizzled layout is not affine")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.bytes.data}>")


def swizzled(t: Attribute) -> bool:
    """Whether `t` is a memref in the 128-byte swizzle."""
    return isinstance(t, MemRefType) and isinstance(t.layout, SwizzleLayoutAttr)


@irdl_attr_definition
class WarpgroupDescriptorType(ParametrizedAttribute, TypeAttribute):
    """`!nvgpu.warpgroup.descriptor`: where a `nvgpu.warpgroup.mma` operand
    starts in shared memory (`wgmma`'s 64-bit matrix descriptor)."""

    name = "nvgpu.warpgroup.descriptor"


@irdl_op_definition
class WarpgroupGenerateDescriptorOp(IRDLOperation):
    """The descriptor of the operand whose first element is `source[indices]`."""

    name = "nvgpu.warpgroup.generate.descriptor"

    source = operand_def(MemRefType | TensorType)
    subscript_operands = var_operand_def(IndexType)
    map = opt_prop_def(AffineMapAttr)
    """The subscripts (affine in `subscript_operands`) of a tensor source."""
    symbols = opt_prop_def(ArrayAttr[StringAttr])
    """The size names bound to `map`'s symbols (none where absent)."""
    result = result_def(WarpgroupDescriptorType)

    def __init__(self, source: SSAValue, indices: Sequence[SSAValue], subscripts: Sequence[AffineExpr] | None = None):
        properties: dict[str, Attribute] = {}
        if subscripts is not None:
            properties["map"] = AffineMapAttr(AffineMap(len(indices), 0, tuple(subscripts)))
        super().__init__(operands=[source, indices], properties=properties, result_types=[WarpgroupDescriptorType()])

    @property
    def tensor(self) -> SSAValue:
        return self.source

    @property
    def subscripts(self) -> tuple[AffineExpr, ...]:
        assert self.map is not None
        return self.map.data.results

    @property
    def symbol_names(self) -> list[str]:
        return [s.data for s in self.symbols] if self.symbols is not None else []

    def verify_(self) -> None:
        t = self.source.type
        if isinstance(t, TensorType):
            if self.map is None or len(self.map.data.results) != t.rank:
                raise VerifyException(f"'{self.name}' op of a tensor takes {t.rank} subscripts in 'map'")
            return
        assert isinstance(t, MemRefType)
        if self.map is not None or len(self.subscript_operands) != len(t.get_shape()):
            raise VerifyException(f"'{self.name}' op of a memref takes one index per dimension and no 'map'")
        if _space(t) != SHARED_SPACE or not swizzled(t) or not isinstance(t.element_type, MmaOperandType):
            raise VerifyException(f"'{self.name}' op describes an f32, f16 or bf16 shared memref in the 128-byte swizzle, got {t}")
        if t.get_shape()[-1] * element_bytes(t.element_type) % SWIZZLE_BYTES:
            raise VerifyException(f"'{self.name}' op needs rows of a multiple of {SWIZZLE_BYTES} bytes, got {t}")


WGMMA_M = 64
"""The m of `wgmma` (m64nNkK)."""
WGMMA_K_BYTES = 32
"""The bytes of k one `wgmma` instruction takes of each row: k8 for TF32,
k16 for the half types."""


def element_bytes(t: Attribute) -> int:
    """The bytes of an `MmaOperandType` element."""
    assert isinstance(t, MmaOperandType)
    return t.bitwidth // 8


@irdl_op_definition
class WarpgroupMmaOp(IRDLOperation):
    """A warpgroup's D = A B^T + C on the tensor cores (`wgmma`), A and B
    from shared memory by their descriptors, C and D in the threads' f32
    registers (N / 2 each): TF32 products (m64nNk8, `tf32Enabled`) of f32
    tiles, or exact ones (m64nNk16) of f16 or bf16 tiles (`operandType`).
    A k of several instructions' (up to a 128-byte row) is theirs in a row
    along k, as MLIR's op lowers to, waited for once. `transposeA`
    (`transposeB`) reads a half operand MN-major, as MLIR's op does: its
    tile holds A^T (B^T), k along the rows and m (n) along the columns,
    from the descriptor's element on."""

    name = "nvgpu.warpgroup.mma"

    descriptor_a = operand_def(WarpgroupDescriptorType)
    descriptor_b = operand_def(WarpgroupDescriptorType)
    matrix_c = var_operand_def(Float32Type)
    res = var_result_def(Float32Type)
    mma_shape = prop_def(ArrayAttr[IntegerAttr], prop_name="mmaShape")
    tf32_enabled = opt_prop_def(UnitAttr, prop_name="tf32Enabled")
    operand_type = opt_prop_def(HalfFloatType, prop_name="operandType")
    transpose_a = opt_prop_def(UnitAttr, prop_name="transposeA")
    transpose_b = opt_prop_def(UnitAttr, prop_name="transposeB")
    wait_group = opt_prop_def(IntegerAttr[I64], prop_name="waitGroup")
    """Groups of the warpgroup's `wgmma`s that may still run when it
    returns, this one's last (none where absent: complete on return); its
    results are then read only after a `nvgpu.warpgroup.mma.wait`."""

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: Sequence[SSAValue],
        operand_type: Attribute = Float32Type(),
        k: int | None = None,
        transposes: tuple[bool, bool] = (False, False),
    ):
        k = k or WGMMA_K_BYTES // element_bytes(operand_type)
        properties: dict[str, Attribute] = {"mmaShape": ArrayAttr(IntegerAttr(d, i64) for d in (WGMMA_M, 2 * len(c), k))}
        properties |= {"tf32Enabled": UnitAttr()} if isinstance(operand_type, Float32Type) else {"operandType": operand_type}
        properties |= {name: UnitAttr() for name, on in zip(("transposeA", "transposeB"), transposes) if on}
        super().__init__(operands=[a, b, c], result_types=[[c_.type for c_ in c]], properties=properties)

    @property
    def n(self) -> int:
        return self.mma_shape.data[1].value.data

    @property
    def k(self) -> int:
        return self.mma_shape.data[2].value.data

    @property
    def instruction_k(self) -> int:
        """The k of one `wgmma` instruction of the operands' type."""
        return WGMMA_K_BYTES // element_bytes(self.element_type)

    @property
    def pending(self) -> int:
        """`waitGroup`: the groups that may still run on return."""
        return self.wait_group.value.data if self.wait_group is not None else 0

    @property
    def transposes(self) -> tuple[bool, bool]:
        """Whether A and B are MN-major (`transposeA`, `transposeB`)."""
        return self.transpose_a is not None, self.transpose_b is not None

    @property
    def element_type(self) -> Attribute:
        """The operands' element type: f32 (read as TF32), f16 or bf16."""
        return self.operand_type if self.operand_type is not None else Float32Type()

    def verify_(self) -> None:
        m, n, k = (d.value.data for d in self.mma_shape.data)
        half = self.operand_type is not None
        step = self.instruction_k
        row = SWIZZLE_BYTES // element_bytes(self.element_type)
        if m != WGMMA_M or k % step or not 0 < k <= row or n % 8 or not 8 <= n <= 256 or (self.tf32_enabled is None) != half:
            raise VerifyException(
                f"'{self.name}' op supports mmaShape = [64, N, K] with tf32Enabled and K a multiple of 8, or with "
                "an operandType of f16 or bf16 and K a multiple of 16 (K of up to 128 bytes, N a multiple of 8 "
                "up to 256) only"
            )
        if any(self.transposes) and not half:
            raise VerifyException(f"'{self.name}' op reads MN-major (transposeA, transposeB) f16 or bf16 operands only")
        if len(self.matrix_c) != n // 2 or len(self.res) != n // 2:
            raise VerifyException(f"'{self.name}' op takes and gives N / 2 = {n // 2} accumulators, "
                                  f"got {len(self.matrix_c)} and {len(self.res)}")


@irdl_op_definition
class WarpgroupMmaWaitOp(_GroupWait):
    """Wait until at most `numGroups` of the warpgroup's `wgmma` groups run
    (`wgmma.wait_group`): what makes the results of `nvgpu.warpgroup.mma`s
    with a `waitGroup` readable."""

    name = "nvgpu.warpgroup.mma.wait"


@irdl_op_definition
class SubgroupReduceOp(IRDLOperation):
    """The combination of `value` over the 32 threads of this thread's warp,
    which every one of them gets: MLIR's `gpu.subgroup_reduce` over whole
    subgroups (warp shuffles), which xDSL lacks. All threads of the warp
    run it together."""

    name = "nvgpu.subgroup_reduce"

    op = prop_def(AllReduceOpAttr)
    value = operand_def()
    result = result_def()

    assembly_format = "$op $value attr-dict `:` `(` type($value) `)` `->` type($result)"

    def __init__(self, op: AllReduceOpAttr, value: SSAValue):
        super().__init__(operands=[value], result_types=[value.type], properties={"op": op})

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(f"'{self.name}' op result type must match the operand's")


@irdl_op_definition
class SubgroupBarrierOp(IRDLOperation):
    """A barrier of this thread's warp (CUDA's `__syncwarp()`, NVVM's
    `bar.warp.sync`): what the warp's threads wrote before it, they read
    after it. All threads of the warp run it together."""

    name = "nvgpu.subgroup_barrier"

    assembly_format = "attr-dict"


NVGPU = Dialect(
    "nvgpu",
    [
        DeviceAsyncCopyOp, DeviceAsyncCreateGroupOp, DeviceAsyncWaitOp, MmaSyncOp,
        SubgroupBarrierOp, SubgroupReduceOp, WarpgroupGenerateDescriptorOp, WarpgroupMmaOp, WarpgroupMmaWaitOp,
    ],
    [SwizzleLayoutAttr, WarpgroupDescriptorType],
)  # fmt: skip
