"""LLVM ops that xDSL 0.74 lacks, and their translation to llvmlite.

xDSL's `llvm` dialect has `llvm.sitofp` but neither `llvm.uitofp`, `llvm.fptosi`
nor `llvm.fptoui`, and its llvmlite converter (`xdsl.backend.llvm.convert_op`)
dispatches casts through the table `_CAST_OP_NAMES`. These three casts have no
intrinsic or short exact expansion, so they are defined here as ops of the same
shape as `llvm.sitofp` and added to that table: that is the whole extension.
"""

from __future__ import annotations

from xdsl.backend.llvm import convert_op
from xdsl.dialects.llvm import GenericCastOp
from xdsl.irdl import irdl_op_definition


@irdl_op_definition
class UIToFPOp(GenericCastOp):
    """Unsigned integer to floating point (LLVM `uitofp`)."""

    name = "llvm.uitofp"


@irdl_op_definition
class FPToSIOp(GenericCastOp):
    """Floating point to signed integer, rounding toward zero (LLVM `fptosi`)."""

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(GenericCastOp):
    """Floating point to unsigned integer, rounding toward zero (LLVM `fptoui`)."""

    name = "llvm.fptoui"


convert_op._CAST_OP_NAMES.update(  # pyright: ignore[reportPrivateUsage]
    {UIToFPOp: "uitofp", FPToSIOp: "fptosi", FPToUIOp: "fptoui"}
)
