"""`gpu-vectorize-copies{max-width=4}`: move aligned groups of elements
between global and shared memory with one vector load and store (float2,
float4).

In every `gpu.func`, an `scf.for` of W iterations (W = 2, 4 or 8, at most
`max-width` and 16 bytes, step 1) whose body is index arithmetic around one scalar
copy from a global memref to a shared one (what `poly-promote{copy-vector-
width=W}` makes of a copy's group loop)

    scf.for %l = %lb to %lb + W {
      %v = memref.load %A[.., %i + %l] : memref<..xNxf32>
      memref.store %v, %S[.., %j + %l] : memref<..xMxf32, 3>
    }

becomes, where the copy's element is `f32`, `i32`, `f16` or `bf16`, N and
M are multiples of W and `%i + %lb` and `%j + %lb` are multiples of W
whatever the thread (every coefficient of their linear forms is), so that
both groups are aligned to W elements' bytes on a base aligned to 16 (the
shared buffer's `memref.alloca` gets that alignment if it has less),

    %v = vector.load %A[.., %i + %lb] : memref<..xNxf32>, vector<Wxf32>
    vector.store %v, %S[.., %j + %lb] : memref<..xMxf32, 3>, vector<Wxf32>

The global subscript may also be the last one clamped a group at a time,
`min(%i + %l, C + (%i + %l) mod W)` with C a multiple of W (a copy of a
tile padded past the tensor's edge, `poly-pad-tiles`): at the group's first
element that is `min(%i + %lb, C)`, and the group's elements follow it, so
the vector load reads there.

Loops of any other shape are left as they are. Global memrefs that a
vector load reads must be aligned to 16 bytes: the CUDA runtime checks
the arguments of each launch (`CudaProgram.aligned`) and copies a
misaligned one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, VectorType, bf16, f16, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tcir.backends.cuda.scalar_types import memory_space
from tcir.diagnostics import anchored
from tcir.errors import TCError
from tcir.ir.integer_forms import IntegerForms, constant_of, trip_count
from tcir.polyhedral.promotion.promote import SHARED_SPACE
from tcir.ir.vectors import VECTOR_WIDTHS


def _depends_on(body: list[Operation], value: SSAValue) -> set[SSAValue]:
    """The values of `body` computed from `value` (and `value` itself)."""
    found = {value}
    for op in body:
        if any(operand in found for operand in op.operands):
            found.update(op.results)
    return found


def _group_clamped(index: SSAValue, width: int) -> SSAValue | None:
    """`x` where `index` is `min(x, C + x mod width)` with `C` a multiple of
    `width` (a padded copy's last subscript clamped a group at a time, as
    `tc_point` lowers `clamp_group`): at a group's first element `x` that
    is `min(x, C)`, and its elements follow."""
    op = index.owner
    if not isinstance(op, arith.MinSIOp) or not isinstance(bound := op.rhs.owner, arith.AddiOp):
        return None
    x = op.lhs
    for offset, lane in ((bound.lhs, bound.rhs), (bound.rhs, bound.lhs)):
        rem = lane.owner
        if (
            isinstance(rem, arith.RemSIOp)
            and rem.lhs is x
            and constant_of(rem.rhs) == width
            and (c := constant_of(offset)) is not None
            and c % width == 0
        ):
            return x
    return None


def _aligned_index(forms: IntegerForms, index: SSAValue, iv: SSAValue, lb: SSAValue,
                   varying: set[SSAValue], width: int, last: bool) -> bool:
    """Whether `index` is `f + iv` (last; or that clamped a group at a time,
    `_group_clamped`) or `f` (other dimensions), with `f` free of the loop's
    other values and, for the last, `f + lb` a multiple of `width` for
    every value of its leaves."""
    if last:
        index = _group_clamped(index, width) or index
    form = forms.of(index)
    if form.get(iv, 0) != (1 if last else 0):
        return False
    rest = {k: c for k, c in form.items() if k is not iv}
    if any(k is not None and k in varying for k in rest):
        return False
    if not last:
        return True
    for key, c in forms.of(lb).items():
        rest[key] = rest.get(key, 0) + c
    return all(c % width == 0 for c in rest.values())


VECTOR_ELEMENTS = {f32: 4, i32: 4, f16: 2, bf16: 2}
"""Element types a copy moves as vectors (float4, int4, 8 halves...;
signless integers: the values TC reads), and their bytes."""
VECTOR_BYTES = 16
"""The widest vector load and store (float4, uint4)."""


def _row_multiple(ref: SSAValue, width: int) -> bool:
    shape = ref.type.get_shape() if isinstance(ref.type, MemRefType) else ()
    return bool(shape) and shape[-1] > 0 and shape[-1] % width == 0


def _vectorize(loop: scf.ForOp, forms: IntegerForms, max_width: int) -> bool:
    """Replace `loop` by one vector copy if it has the shape of the module docstring."""
    width = trip_count(loop)
    if constant_of(loop.step) != 1 or loop.iter_args or width not in VECTOR_WIDTHS or not 1 < width <= max_width:
        return False
    body = list(loop.body.block.ops)[:-1]
    iv = loop.body.block.args[0]
    loads = [op for op in body if isinstance(op, memref.LoadOp)]
    stores = [op for op in body if isinstance(op, memref.StoreOp)]
    others = [op for op in body if not isinstance(op, memref.LoadOp | memref.StoreOp)]
    if len(loads) != 1 or len(stores) != 1 or any(
        op.regions or not isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp
                                     | arith.FloorDivSIOp | arith.DivSIOp | arith.RemSIOp | arith.CeilDivSIOp
                                     | arith.MinSIOp | arith.MaxSIOp | arith.IndexCastOp)
        for op in others
    ):
        return False
    (load,), (store,) = loads, stores
    element = load.res.type
    if (
        store.value is not load.res
        or not load.res.has_one_use()
        or memory_space(load.memref.type) != 0
        or memory_space(store.memref.type) != SHARED_SPACE
        or element not in VECTOR_ELEMENTS
        or VECTOR_ELEMENTS[element] * width > VECTOR_BYTES
        or not _row_multiple(load.memref, width)
        or not _row_multiple(store.memref, width)
    ):
        return False
    alloca = store.memref.owner
    if not isinstance(alloca, memref.AllocaOp):
        return False
    varying = _depends_on(body, iv) - {iv}
    for indices in (load.indices, store.indices):
        if not all(
            _aligned_index(forms, index, iv, loop.lb, varying, width, k == len(indices) - 1)
            for k, index in enumerate(indices)
        ):
            return False
    bytes_ = VECTOR_ELEMENTS[element] * width
    if alloca.alignment is None or alloca.alignment.value.data < bytes_:  # rows on vector boundaries
        alloca.alignment = IntegerAttr(bytes_, 64)
    # The copy at the group's first element, before the loop, which goes.
    builder = Builder(InsertPoint.before(loop))
    mapping: dict[SSAValue, SSAValue] = {iv: loop.lb}
    for op in others:
        builder.insert(op.clone(mapping))
    value = builder.insert(
        vector.LoadOp(load.memref, [mapping.get(i, i) for i in load.indices], VectorType(element, [width]))
    ).result
    builder.insert(vector.StoreOp(value, store.memref, [mapping.get(i, i) for i in store.indices]))
    loop.detach()
    loop.erase()
    return True


@dataclass(frozen=True)
class GpuVectorizeCopiesPass(ModulePass):
    """Turn group loops of scalar global-to-shared copies into vector copies."""

    name = "gpu-vectorize-copies"

    max_width: int = 4

    def __post_init__(self) -> None:
        if self.max_width not in VECTOR_WIDTHS:
            raise TCError(
                f"gpu-vectorize-copies: max-width must be one of {', '.join(map(str, VECTOR_WIDTHS))}, "
                f"got {self.max_width}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in anchored([o for o in op.walk() if isinstance(o, gpu.FuncOp)]):
            forms = IntegerForms()
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                _vectorize(loop, forms, self.max_width)
