"""`tc-specialize{sizes="M=128,K=32"}`: replace size names by constants.

The JIT specializes a def to the shapes it is called with; a pipeline may also
keep some or all sizes symbolic. Every size expression in the def — tensor
types, comprehension ranges, subscripts — is rewritten and folded, so
`(H - 2) floordiv 2 + 1` becomes `4` for `H=10`. Sizes not listed stay
symbolic. Integer scalar inputs used as sizes (`sh`) are specialized the same
way (the scalar argument stays in the signature).

(xDSL's pipeline syntax cannot hold `=` in an unquoted value, hence the quotes.)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcir.dialects.tc import (
    AllocOp,
    ComprehensionOp,
    DefOp,
    ReadOp,
    SizeOp,
    TensorType,
    UpdateOp,
    YieldOp,
)
from tcir.diagnostics import OpError, anchored, emit
from tcir.errors import TCError
from tcir.ir.affine import substitute


def parse_sizes(text: str) -> dict[str, int]:
    """`"M=128,K=32"` -> `{"M": 128, "K": 32}`; malformed text or a negative
    size raises TCError."""
    sizes: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            sizes[name] = int(value)
        except ValueError:
            sep = ""
        if not sep or not name.isidentifier():
            raise TCError(f"tc-specialize: expected NAME=INTEGER, got '{item}'")
        if sizes[name] < 0:
            raise TCError(f"tc-specialize: size {item} is negative")
    return sizes


def specialize_map(
    amap: AffineMap, symbols: list[str], sizes: dict[str, int]
) -> tuple[AffineMap, list[str]]:
    """`amap` with the symbols named in `sizes` replaced by their values."""
    kept = [name for name in symbols if name not in sizes]
    replacement = [
        AffineExpr.constant(sizes[name])
        if name in sizes
        else AffineExpr.symbol(kept.index(name))
        for name in symbols
    ]
    dims = [AffineExpr.dimension(i) for i in range(amap.num_dims)]
    try:
        results = tuple(substitute(e, dims, replacement) for e in amap.results)
    except ValueError as e:  # division by a size specialized to zero
        raise TCError(f"tc-specialize: {e}") from None
    return AffineMap(amap.num_dims, len(kept), results), kept


def specialize_type(type: Attribute, sizes: dict[str, int]) -> Attribute:
    if not isinstance(type, TensorType):
        return type
    shape, kept = specialize_map(type.shape.data, type.symbol_names, sizes)
    return TensorType(type.element_type, shape.results, kept)


def _names(names: list[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr(StringAttr(n) for n in names)


def def_sizes(definition: DefOp) -> set[str]:
    """Every size name `definition` uses: in types, ranges and subscripts."""
    names = set(definition.size_names())
    types = [arg.type for arg in definition.body.block.args]
    for op in definition.walk():
        if isinstance(op, AllocOp):
            types.append(op.result.type)
        elif isinstance(op, ComprehensionOp | ReadOp | UpdateOp | SizeOp):
            names.update(op.symbol_names)
    for type in types:
        if isinstance(type, TensorType):
            names.update(type.symbol_names)
    return names


def specialize_def(definition: DefOp, sizes: dict[str, int]) -> None:
    """Rewrite `definition` in place for the given sizes (none negative)."""
    for arg in definition.body.block.args:
        Rewriter.replace_value_with_new_type(arg, specialize_type(arg.type, sizes))
    for op in definition.walk():
        if isinstance(op, AllocOp):
            Rewriter.replace_value_with_new_type(
                op.result, specialize_type(op.result.type, sizes)
            )
        elif isinstance(op, ReadOp):
            Rewriter.replace_value_with_new_type(op.result, op.tensor_type.scalar_type)
    for op in definition.walk():
        if isinstance(op, ComprehensionOp):
            bounds, kept = specialize_map(op.bounds.data, op.symbol_names, sizes)
            op.bounds = AffineMapAttr(bounds)
            op.bound_symbols = _names(kept)
        elif isinstance(op, ReadOp | UpdateOp | SizeOp):
            subscripts, kept = specialize_map(op.map.data, op.symbol_names, sizes)
            op.map = AffineMapAttr(subscripts)
            op.symbols = _names(kept)
        elif isinstance(op, YieldOp) and op.map is not None:  # a scatter's element
            subscripts, kept = specialize_map(op.map.data, op.symbol_names, sizes)
            op.map = AffineMapAttr(subscripts)
            op.symbols = _names(kept)


@dataclass(frozen=True)
class TcSpecializePass(ModulePass):
    """Substitute constant sizes into every `tc.def` of the module."""

    name = "tc-specialize"

    sizes: str = ""
    """Comma-separated `NAME=VALUE` pairs, e.g. `"M=128,K=32"`."""

    def __post_init__(self) -> None:
        parse_sizes(self.sizes)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sizes = parse_sizes(self.sizes)
        definitions = [d for d in op.walk() if isinstance(d, DefOp)]
        known = {name for d in definitions for name in def_sizes(d)}
        unknown = [name for name in sizes if name not in known]
        if unknown:
            where = definitions[0] if definitions else op
            message = (
                f"no tc.def has a size named {', '.join(map(repr, unknown))} "
                f"(sizes: {', '.join(sorted(known)) or 'none'})"
            )
            if len(unknown) == len(sizes):  # the pass would change nothing
                raise OpError(where, message)
            emit(where, "warning", f"tc-specialize: {message}")
        for definition in anchored(definitions):
            specialize_def(definition, sizes)
