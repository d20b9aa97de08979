"""Parsing and printing `poly` IR from tests."""

from __future__ import annotations

from io import StringIO

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

from tcir.dialects.poly import Poly


def parse(text: str) -> ModuleOp:
    """Parse and verify a module that uses poly, arith and func."""
    context = Context()
    for dialect in (Builtin, Arith, Func, Poly):
        context.load_dialect(dialect)
    module = Parser(context, text).parse_module()
    module.verify()
    return module


def show(op: Operation, generic: bool = False) -> str:
    """The printed form of `op`."""
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()
