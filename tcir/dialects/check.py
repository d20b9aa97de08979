"""The `check` dialect: run-time checks that kernels make of the data they read.

    %safe = check.index %sub, %value {id = 0 : i64, extent = 50 : i64, dim = 0 : i64,
                                      tensor = "LUT1", source = "I1"} : i32

`check.index` guards a subscript that a kernel computed from data (an
indirect access `LUT1(I1(i, k), j)`): it yields `%sub` where `0 <= %sub <
extent`, else 0, so that the access stays in bounds, and it reports the
error (`id` says which check, `%value` is the index tensor's value that gave
the subscript). The CUDA backend reports to the host without waiting
(`tcir.backends.cuda.index_errors`); the simulated GPU raises when the
launch ends.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import Dialect, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)


@irdl_op_definition
class IndexOp(IRDLOperation):
    """A data-dependent subscript, checked against its dimension's extent."""

    name = "check.index"

    subscript = operand_def(IndexType)
    value = operand_def(base(IndexType) | base(IntegerType))
    result = result_def(IndexType)

    check_id = prop_def(IntegerAttr[I64], prop_name="id")
    extent = prop_def(IntegerAttr[I64])
    dim = prop_def(IntegerAttr[I64])
    tensor = prop_def(StringAttr)
    """The indexed array."""
    source = prop_def(StringAttr)
    """The index tensor whose value gave the subscript."""

    assembly_format = "$subscript `,` $value attr-dict `:` type($value)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self, subscript: SSAValue, value: SSAValue, check_id: int, extent: int, dim: int, tensor: str, source: str
    ):
        super().__init__(
            operands=[subscript, value],
            result_types=[IndexType()],
            properties={
                "id": IntegerAttr(check_id, 64),
                "extent": IntegerAttr(extent, 64),
                "dim": IntegerAttr(dim, 64),
                "tensor": StringAttr(tensor),
                "source": StringAttr(source),
            },
        )

    def verify_(self) -> None:
        for field in ("id", "dim"):
            if self.properties[field].value.data < 0:  # pyright: ignore
                raise VerifyException(f"'{self.name}' op {field} must not be negative")
        if self.extent.value.data < 0:
            raise VerifyException(f"'{self.name}' op extent must not be negative, got {self.extent.value.data}")
        for field in ("tensor", "source"):
            if not self.properties[field].data:  # pyright: ignore
                raise VerifyException(f"'{self.name}' op {field} must name a tensor")


Check = Dialect("check", [IndexOp])
