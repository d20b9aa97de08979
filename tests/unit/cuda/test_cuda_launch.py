"""Host programs and kernel launches extracted from `gpu.launch_func`s."""

from __future__ import annotations

import pytest
from cuda_helpers import load

import tcir
from tcir.backends.cuda.launch import (
    ArgRef,
    HostAlloc,
    HostExpr,
    HostParam,
    KernelArg,
    KernelLaunch,
    evaluate,
    extract_host_program,
    extract_launches,
)
from tcir.errors import TCError

_KERNEL = """
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<16xf32>, index) -> (), kernel}> ({
    ^bb0(%X: memref<16xf32>, %n: index):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
"""


def _host(body: str, params: str = "%X: memref<16xf32>, %N: index") -> str:
    return f"builtin.module attributes {{gpu.container_module}} {{{_KERNEL}  func.func @host({params}) {{\n{body}\n    func.return\n  }}\n}}"


def _launch(grid: str, block: str, args: str, types: str) -> str:
    nargs = len(args.split(","))
    return (
        f'    "gpu.launch_func"({grid}, {block}, {args}) <{{kernel = @kernels::@k, '
        f"operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, {nargs}, 0>}}> : "
        f"(index, index, index, index, index, index, {types}) -> ()"
    )


def test_matmul_launch():
    (launch,) = extract_launches(load("matmul.mlir"))
    buffers = [KernelArg(ArgRef(i), "float32", True) for i in range(3)]
    assert launch == KernelLaunch("tmm_kernel", (8, 1, 1), (32, 8, 1), tuple(buffers))


def test_two_launches_in_order_with_scalar_arguments():
    program = extract_host_program(load("control-flow.mlir"))
    assert program.name == "host"
    assert program.params == (
        HostParam("out", "float32", (32,)),
        HostParam("alpha", "float32", None),
        HostParam("N", "int64", None),
    )
    zero, branchy = program.launches
    assert zero.kernel_name == "zero" and branchy.kernel_name == "branchy"
    assert branchy.args == (
        KernelArg(ArgRef(0), "float32", True),
        KernelArg(ArgRef(1), "float32", False),
        KernelArg(5, "int32", False),
        KernelArg(ArgRef(2), "int64", False),
    )
    assert branchy.block == (32, 1, 1) and branchy.grid == (1, 1, 1)


def test_grid_computed_from_host_arguments():
    body = "\n".join(
        [
            "    %c1 = arith.constant 1 : index",
            "    %c32 = arith.constant 32 : index",
            "    %g = arith.ceildivsi %N, %c32 : index",
            "    %h = arith.maxsi %g, %c1 : index",
            _launch("%h, %c1, %c1", "%c32, %c1, %c1", "%X, %N", "memref<16xf32>, index"),
        ]
    )
    module = tcir.parse_ir(_host(body, "%X: memref<16xf32>, %N: index"))
    (launch,) = extract_launches(module)
    ceil = HostExpr("ceildivsi", (ArgRef(1), 32))
    assert launch.grid[0] == HostExpr("maxsi", (ceil, 1))
    assert [evaluate(launch.grid[0], [None, n]) for n in (0, 1, 32, 33, 100)] == [1, 1, 1, 2, 4]


def test_host_arithmetic_follows_arith_semantics():
    def value(op: str, a: int, b: int) -> int | float | bool:
        return evaluate(HostExpr(op, (a, b)), [])

    assert (value("divsi", -7, 2), value("remsi", -7, 2)) == (-3, -1)
    assert (value("floordivsi", -7, 2), value("ceildivsi", -7, 2)) == (-4, -3)
    assert (value("ceildivsi", 7, 2), value("minsi", 3, -3)) == (4, -3)


def test_temporaries_are_allocated_per_call():
    body = "\n".join(
        [
            "    %c1 = arith.constant 1 : index",
            "    %T = memref.alloc() : memref<16xf32>",
            _launch("%c1, %c1, %c1", "%c1, %c1, %c1", "%T, %N", "memref<16xf32>, index"),
            "    memref.dealloc %T : memref<16xf32>",
        ]
    )
    program = extract_host_program(tcir.parse_ir(_host(body, "%N: index")))
    temp = HostAlloc(0, (16,), "float32")
    assert program.temporaries == (temp,)
    assert program.launches[0].args[0] == KernelArg(temp, "float32", True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "    %c1 = arith.constant 1 : index\n"
            + _launch("%c1, %c1, %c1", "%N, %c1, %c1", "%X, %N", "memref<16xf32>, index"),
            "block size of 'k' must be constant",
        ),
        (
            "    %c1 = arith.constant 1 : index\n    %g = arith.divui %N, %c1 : index\n"
            + _launch("%g, %c1, %c1", "%c1, %c1, %c1", "%X, %N", "memref<16xf32>, index"),
            "op 'arith.divui' in host function is not supported",
        ),
        ("", "expected exactly one host function launching kernels, found 0"),
    ],
)
def test_unsupported_host_functions(body: str, message: str):
    module = tcir.parse_ir(_host(body, "%X: memref<16xf32>, %N: index"))
    with pytest.raises(TCError, match=message):
        extract_host_program(module)
