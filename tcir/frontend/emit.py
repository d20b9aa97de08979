"""Lower checked TC defs to the `tc` dialect.

Each `CheckedDef` becomes a `tc.def`; temporaries become `tc.alloc`s; each
statement a `tc.comprehension` whose body computes the right-hand side with
`tc.read`, `arith` and `math` ops. Builtins with no `math`/`arith` op call the
C math function of that name (`erfcf` for float), declared in the module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AnyFloat,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    BFloat16Type,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineSymExpr
from xdsl.rewriter import InsertPoint

from tcir.dialects.tc import (
    AllocOp,
    ComprehensionOp,
    DefOp,
    ReadOp,
    SizeOp,
    TensorType,
    YieldOp,
)
from tcir.errors import SourceLocation
from tcir.ir.affine import substitute

from . import ast as A
from . import parse
from .dtypes import is_float
from .subscripts import subscript_to_affine

_INT_WIDTHS = {"bool": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINT_WIDTHS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
_FLOATS: dict[str, AnyFloat] = {"float16": f16, "bfloat16": BFloat16Type(), "float32": f32, "float64": f64}


def element_type(dtype: str) -> Attribute:
    """The tensor element type of a TC scalar type (unsigned ints keep their sign)."""
    if dtype in _FLOATS:
        return _FLOATS[dtype]
    if dtype in _UINT_WIDTHS:
        return IntegerType(_UINT_WIDTHS[dtype], Signedness.UNSIGNED)
    return IntegerType(_INT_WIDTHS[dtype])


def scalar_type(dtype: str) -> Attribute:
    """The type values of a TC scalar type are computed in (signless integers)."""
    if dtype in _FLOATS:
        return _FLOATS[dtype]
    return IntegerType(_INT_WIDTHS.get(dtype) or _UINT_WIDTHS[dtype])


def _unsigned(dtype: str) -> bool:
    return dtype in _UINT_WIDTHS or dtype == "bool"


def _renumbering(
    exprs: Sequence[AffineExpr], kind: type[AffineDimExpr | AffineSymExpr], count: int
) -> tuple[list[AffineExpr], list[int]]:
    """New positions for the dims (or symbols) used in `exprs`, in order of
    appearance (the order the IR parser assigns, so printed IR round-trips to
    equal attributes); returns the replacements and the used old positions."""
    used: list[int] = []
    for expr in exprs:
        for node in expr.dfs():
            if isinstance(node, kind) and node.position not in used:
                used.append(node.position)
    make = AffineExpr.dimension if kind is AffineDimExpr else AffineExpr.symbol
    return [make(used.index(k)) if k in used else AffineExpr.constant(0) for k in range(count)], used


def compact(
    exprs: Sequence[AffineExpr], symbols: Sequence[str]
) -> tuple[list[AffineExpr], list[str]]:
    """`exprs` over only the symbols they use, in order of appearance."""
    renumber, used = _renumbering(exprs, AffineSymExpr, len(symbols))
    num_dims = 1 + max((d for e in exprs for d in e.used_dims()), default=-1)
    dims = [AffineExpr.dimension(k) for k in range(num_dims)]
    return [substitute(e, dims, renumber) for e in exprs], [symbols[k] for k in used]


def tensor_type(param: A.Param, size_params: Sequence[str]) -> TensorType:
    dims, names = compact(param.dims, size_params)
    return TensorType(element_type(param.dtype), dims, names)


_MATH_OPS: dict[str, type[Operation]] = {
    op.name.removeprefix("math."): op for op in mathd.Math.operations  # pyright: ignore
}
_UNARY_MATH = {
    **{n: n for n in (
        "acos acosh asin asinh atan atanh cbrt ceil cos cosh erf exp exp2 expm1 "
        "floor log log10 log1p log2 round rsqrt sin sinh sqrt tan tanh trunc"
    ).split()},
    "fabs": "absf",
}
_BINARY_MATH = {"atan2": "atan2", "copysign": "copysign", "pow": "powf"}
_LIBM = frozenset(
    "erfc erfinv erfcinv erfcx lgamma logb normcdfinv tgamma fmod hypot nextafter "
    "remainder".split()
)


def float_attr(value: float, t: AnyFloat) -> FloatAttr:
    """`value` rounded to the float type `t` as C rounds a literal: one
    beyond its largest finite value is an infinity (`-3.0e38` in half is
    `-inf`, as `torch.tensor(-3.0e38, dtype=torch.half)`)."""
    try:
        return FloatAttr(value, t)
    except OverflowError:  # xDSL packs the value in `t`'s bytes, which cannot hold it
        return FloatAttr(math.copysign(math.inf, value), t)


@dataclass
class ExprEmitter:
    """Emits the ops computing checked expressions inside one comprehension body."""

    builder: Builder
    definition: A.CheckedDef
    tensors: dict[str, SSAValue]
    indices: dict[str, SSAValue]
    libm: set[tuple[str, Attribute]] = field(default_factory=set[tuple[str, Attribute]])

    def insert(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def const(self, value: float | int | bool, dtype: str) -> SSAValue:
        t = scalar_type(dtype)
        if isinstance(t, AnyFloat):
            return self.insert(arith.ConstantOp(float_attr(float(value), t)))
        assert isinstance(t, IntegerType)
        width = t.width.data
        v = int(value) & ((1 << width) - 1)
        if width > 1 and v >= 1 << (width - 1):
            v -= 1 << width
        if width == 1:
            v = -1 if v else 0
        return self.insert(arith.ConstantOp(IntegerAttr(v, t)))

    def emit(self, e: A.Expr) -> SSAValue:
        handler: Callable[[A.Expr], SSAValue] = getattr(self, "_" + type(e).__name__.lower())
        return handler(e)

    def _const(self, e: A.Const) -> SSAValue:
        return self.const(e.value, e.type)

    def _indexvar(self, e: A.IndexVar) -> SSAValue:
        return self.insert(arith.IndexCastOp(self.indices[e.name], scalar_type(e.type)))

    def _scalarparam(self, e: A.ScalarParam) -> SSAValue:
        return self.tensors[e.name]

    def _sizeref(self, e: A.SizeRef) -> SSAValue:
        (size,), names = compact([e.expr], self.definition.size_params)
        index = self.insert(SizeOp(size, names))
        return self.insert(arith.IndexCastOp(index, scalar_type(e.type)))

    def _access(self, e: A.Access) -> SSAValue:
        subscripts, operands, symbols = self.subscripts(e.subscripts)
        return self.insert(ReadOp(self.tensors[e.tensor], subscripts, operands, symbols))

    def subscripts(self, exprs: Sequence[A.Expr]) -> tuple[list[AffineExpr], list[SSAValue], list[str]]:
        """Subscripts as affine expressions of the values they use (indices,
        and values read for indirection, computed here) and of size names."""
        names = list(self.indices)
        operands: list[SSAValue] = []
        subscripts: list[AffineExpr] = []
        for sub in exprs:
            affine = subscript_to_affine(sub, names, self.definition.size_params)
            if affine is None:  # indirect: the value itself is a dimension
                operands.append(self.emit(sub))
                affine = AffineExpr.dimension(len(names) + len(operands) - 1)
            subscripts.append(affine)
        values = [self.indices[n] for n in names] + operands
        dims, used = _renumbering(subscripts, AffineDimExpr, len(values))
        symbols = [AffineExpr.symbol(k) for k in range(len(self.definition.size_params))]
        subscripts = [substitute(s, dims, symbols) for s in subscripts]
        subscripts, sym_names = compact(subscripts, self.definition.size_params)
        return subscripts, [values[k] for k in used], sym_names

    def _unary(self, e: A.Unary) -> SSAValue:
        x = self.emit(e.x)
        if e.op == "!":
            return self.insert(arith.XOrIOp(x, self.const(True, "bool")))
        if is_float(e.type):
            return self.insert(arith.NegfOp(x))
        return self.insert(arith.SubiOp(self.const(0, e.type), x))

    def _binary(self, e: A.Binary) -> SSAValue:
        a, b = self.emit(e.a), self.emit(e.b)
        operand = e.a.type
        if e.op in ("&&", "||"):
            return self.insert((arith.AndIOp if e.op == "&&" else arith.OrIOp)(a, b))
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            names = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
            if is_float(operand):
                predicate = "une" if e.op == "!=" else "o" + names[e.op]
                return self.insert(arith.CmpfOp(a, b, predicate))
            predicate = names[e.op]
            if e.op not in ("==", "!="):
                predicate = ("u" if _unsigned(operand) else "s") + predicate
            return self.insert(arith.CmpiOp(a, b, predicate))
        if is_float(e.type):
            ops = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}
            if e.op == "%":
                return self.libm_call("fmod", [a, b], e.type)
            return self.insert(ops[e.op](a, b))
        unsigned = _unsigned(e.type)
        ops = {
            "+": arith.AddiOp,
            "-": arith.SubiOp,
            "*": arith.MuliOp,
            "/": arith.DivUIOp if unsigned else arith.DivSIOp,
            "%": arith.RemUIOp if unsigned else arith.RemSIOp,
        }
        return self.insert(ops[e.op](a, b))

    def _ternary(self, e: A.Ternary) -> SSAValue:
        if not e.guarded:
            c, a, b = self.emit(e.c), self.emit(e.a), self.emit(e.b)
            return self.insert(arith.SelectOp(c, a, b))
        # A read in a branch is in bounds only when the branch is taken:
        # only the branch taken runs.
        c = self.emit(e.c)
        regions = []
        for branch in (e.a, e.b):
            block = Block()
            inner = ExprEmitter(Builder(InsertPoint.at_end(block)), self.definition, self.tensors, self.indices, self.libm)
            block.add_op(scf.YieldOp(inner.emit(branch)))
            regions.append(Region(block))
        return self.insert(scf.IfOp(c, [scalar_type(e.type)], regions[0], regions[1]))

    def _cast(self, e: A.Cast) -> SSAValue:
        x = self.emit(e.x)
        source, target = e.x.type, e.type
        if source == target:
            return x
        src_t, dst_t = scalar_type(source), scalar_type(target)
        if target == "bool":
            if is_float(source):
                return self.insert(arith.CmpfOp(x, self.const(0, source), "une"))
            return self.insert(arith.CmpiOp(x, self.const(0, source), "ne"))
        if is_float(source) and is_float(target):
            assert isinstance(src_t, AnyFloat) and isinstance(dst_t, AnyFloat)
            if src_t.bitwidth < dst_t.bitwidth:
                return self.insert(arith.ExtFOp(x, dst_t))
            return self.insert(arith.TruncFOp(x, dst_t))
        if is_float(target):
            op = arith.UIToFPOp if _unsigned(source) else arith.SIToFPOp
            return self.insert(op(x, dst_t))
        if is_float(source):
            op = arith.FPToUIOp if _unsigned(target) else arith.FPToSIOp
            return self.insert(op(x, dst_t))
        assert isinstance(src_t, IntegerType) and isinstance(dst_t, IntegerType)
        if src_t.width.data == dst_t.width.data:
            return x
        if src_t.width.data > dst_t.width.data:
            return self.insert(arith.TruncIOp(x, dst_t))
        op = arith.ExtUIOp if _unsigned(source) else arith.ExtSIOp
        return self.insert(op(x, dst_t))

    def _call(self, e: A.Call) -> SSAValue:
        args = [self.emit(a) for a in e.args]
        name, t = e.name, e.type
        if name in _UNARY_MATH:
            return self.insert(_MATH_OPS[_UNARY_MATH[name]](args[0]))  # pyright: ignore
        if name in _BINARY_MATH:
            return self.insert(_MATH_OPS[_BINARY_MATH[name]](*args))  # pyright: ignore
        if name == "fma":
            return self.insert(mathd.FmaOp(*args))
        if name in ("fmax", "fmin", "min", "max"):
            return self.min_max(name.removeprefix("f"), args[0], args[1], t)
        if name == "fdivide":
            return self.insert(arith.DivfOp(*args))
        if name == "fdim":
            diff = self.insert(arith.SubfOp(*args))
            return self.insert(arith.MaxnumfOp(diff, self.const(0.0, t)))
        if name == "sigmoid":
            neg = self.insert(arith.NegfOp(args[0]))
            exp = self.insert(mathd.ExpOp(neg))
            den = self.insert(arith.AddfOp(self.const(1.0, t), exp))
            return self.insert(arith.DivfOp(self.const(1.0, t), den))
        if name in ("cospi", "sinpi", "exp10"):
            scale = math.log(10.0) if name == "exp10" else math.pi
            scaled = self.insert(arith.MulfOp(args[0], self.const(scale, t)))
            op = {"cospi": mathd.CosOp, "sinpi": mathd.SinOp, "exp10": mathd.ExpOp}[name]
            return self.insert(op(scaled))
        if name == "rcbrt":
            root = self.insert(mathd.CbrtOp(args[0]))
            return self.insert(arith.DivfOp(self.const(1.0, t), root))
        if name == "normcdf":  # 0.5 * erfc(-x / sqrt(2))
            scaled = self.insert(arith.MulfOp(args[0], self.const(-math.sqrt(0.5), t)))
            return self.insert(
                arith.MulfOp(self.const(0.5, t), self.libm_call("erfc", [scaled], t))
            )
        assert name in _LIBM, name
        return self.libm_call(name, args, t)

    def min_max(self, which: str, a: SSAValue, b: SSAValue, dtype: str) -> SSAValue:
        if is_float(dtype):
            op = arith.MinnumfOp if which == "min" else arith.MaxnumfOp
        elif _unsigned(dtype):
            op = arith.MinUIOp if which == "min" else arith.MaxUIOp
        else:
            op = arith.MinSIOp if which == "min" else arith.MaxSIOp
        return self.insert(op(a, b))

    def libm_call(self, name: str, args: list[SSAValue], dtype: str) -> SSAValue:
        t = scalar_type(dtype)
        symbol = name + "f" if t == f32 else name
        self.libm.add((symbol, t))
        return self.insert(func.CallOp(symbol, args, [t]))


def emit_def(definition: A.CheckedDef, libm: set[tuple[str, Attribute]]) -> DefOp:
    """The `tc.def` of one checked def (libm functions it calls go to `libm`)."""
    sizes = definition.size_params

    def arg(p: A.Param) -> tuple[str, Attribute]:
        if p.is_scalar:
            return p.name, scalar_type(p.dtype)
        return p.name, tensor_type(p, sizes)

    op = DefOp(definition.name, [arg(p) for p in definition.inputs], [arg(p) for p in definition.outputs])
    op.location = source_location(definition.loc)
    names = [p.name for p in (*definition.inputs, *definition.outputs)]
    tensors: dict[str, SSAValue] = dict(zip(names, op.body.block.args))
    builder = Builder(InsertPoint.at_end(op.body.block))
    for temp in definition.temporaries:
        tensors[temp.name] = builder.insert(AllocOp(tensor_type(temp, sizes), temp.name)).result
    for stmt in definition.stmts:
        builder.insert(emit_stmt(definition, stmt, tensors, libm)).location = source_location(stmt.loc)
    return op


def source_location(loc: SourceLocation) -> FileLineColLoc:
    """Where TC text was written, as an op location (diagnostics point there)."""
    return FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col))


def emit_stmt(
    definition: A.CheckedDef,
    stmt: A.Stmt,
    tensors: dict[str, SSAValue],
    libm: set[tuple[str, Attribute]],
) -> ComprehensionOp:
    order = stmt.loop_order
    body = Block(arg_types=[IndexType()] * len(order))
    for block_arg, name in zip(body.args, order):
        block_arg.name_hint = name
    emitter = ExprEmitter(
        Builder(InsertPoint.at_end(body)), definition, tensors, dict(zip(order, body.args)), libm
    )
    value = emitter.emit(stmt.rhs)
    if stmt.scatter is None:
        body.add_op(YieldOp(value))
    else:
        body.add_op(YieldOp(value, *emitter.subscripts(stmt.scatter)))
    bounds, symbols = compact(
        [b for name in order for b in stmt.ranges[name]], definition.size_params
    )
    ranges = [(bounds[2 * i], bounds[2 * i + 1]) for i in range(len(order))]
    return ComprehensionOp(
        tensors[stmt.lhs],
        stmt.op,
        ranges,
        symbols,
        Region(body),
        where=stmt.where,
        equivalent=stmt.equivalent,
        loop=None if stmt.loop is None else (stmt.loop.label, order.index(stmt.loop.index)),
    )


def emit_module(source: str, filename: str = "<string>") -> ModuleOp:
    """Parse, check and lower TC `source` to a module of `tc.def`s."""
    libm: set[tuple[str, Attribute]] = set()
    defs = [emit_def(d, libm) for d in parse(source, filename)]
    return ModuleOp([*libm_declarations(libm), *defs])


TWO_ARG_LIBM = frozenset({"fmod", "hypot", "nextafter", "remainder"})


def libm_declarations(libm: set[tuple[str, Attribute]]) -> list[func.FuncOp]:
    """`func.func private @erfcf(f32) -> f32` for each C math function called."""
    return [
        func.FuncOp.external(name, [t] * (2 if name.removesuffix("f") in TWO_ARG_LIBM else 1), [t])
        for name, t in sorted(libm, key=lambda item: item[0])
    ]
