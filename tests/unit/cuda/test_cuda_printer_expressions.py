"""The CUDA printer's inline index expressions compute what the IR does.

The printer prints `index` values used once inside their user's expression,
with parentheses where C's precedence needs them, and folds constants. Here
random index expression DAGs (every signed integer op the pipeline emits,
values used once and several times, literal operands on either side) are
printed as a kernel, compiled as host C++ by g++ (with `threadIdx` and the
CUDA qualifiers defined away), run for 32 thread ids, and compared with a
Python evaluation of the same DAG with the ops' IR semantics. No GPU needed.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import tcir
from tcir.backends.cuda.printer import print_cuda

THREADS = 32
EXPRESSIONS = 40

SHIM = """
#include <cstdio>
struct Dim { unsigned x, y, z; };
static Dim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
"""


def wrap(v: int) -> int:
    """`v` as a 32-bit two's complement integer (the kernel's `int`)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


BINARY: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.minsi": min,
    "arith.maxsi": max,
}
DIVISION: dict[str, Callable[[int, int], int]] = {
    "arith.divsi": trunc_div,
    "arith.remsi": lambda a, b: a - b * trunc_div(a, b),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -((-a) // b),
}
COMPARE: dict[str, Callable[[int, int], bool]] = {
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}


class Program:
    """A random DAG of index ops over `threadIdx.x` and its IR text."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines = ['%tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index']
        self.values: list[tuple[str, Callable[[int], int]]] = [("%tx", lambda t: t)]
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def constant(self, value: int) -> tuple[str, Callable[[int], int]]:
        name = self.fresh()
        self.lines.append(f"{name} = arith.constant {value} : index")
        return name, lambda t: value

    def tree(self, depth: int) -> tuple[str, Callable[[int], int]]:
        """A random expression: mostly fresh subtrees (values used once,
        printed inline), sometimes an earlier value (used several times)."""
        if depth == 0 or self.rng.random() < 0.15:
            if self.rng.random() < 0.4:
                return self.constant(self.rng.randint(-20, 20))
            return self.rng.choice(self.values)
        kind = self.rng.choice(["binary", "binary", "division", "select", "offsets"])
        a, fa = self.tree(depth - 1)
        if kind == "offsets":  # (a + c1) + c2: the printer adds the constants
            c1, c2 = self.rng.randint(-9, 9), self.rng.randint(-9, 9)
            (b, _), inner = self.constant(c1), self.fresh()
            self.lines.append(f"{inner} = arith.addi {a}, {b} : index")
            (c, _), name = self.constant(c2), self.fresh()
            self.lines.append(f"{name} = arith.addi {inner}, {c} : index")
            value = lambda t: wrap(fa(t) + c1 + c2)  # noqa: E731
        elif kind == "binary":
            op = self.rng.choice(list(BINARY))
            b, fb = self.tree(depth - 1)
            name = self.fresh()
            self.lines.append(f"{name} = {op} {a}, {b} : index")
            f = BINARY[op]
            value = lambda t: wrap(f(fa(t), fb(t)))  # noqa: E731
        elif kind == "division":
            op = self.rng.choice(list(DIVISION))
            d = self.rng.choice([v for v in range(-9, 10) if v not in (0, -1)])
            b, _ = self.constant(d)
            name = self.fresh()
            self.lines.append(f"{name} = {op} {a}, {b} : index")
            g = DIVISION[op]
            value = lambda t: wrap(g(fa(t), d))  # noqa: E731
        else:
            predicate = self.rng.choice(list(COMPARE))
            b, fb = self.tree(depth - 1)
            c, fc = self.tree(depth - 1)
            condition, name = self.fresh(), self.fresh()
            self.lines.append(f"{condition} = arith.cmpi {predicate}, {a}, {b} : index")
            self.lines.append(f"{name} = arith.select {condition}, {b}, {c} : index")
            p = COMPARE[predicate]
            value = lambda t: fb(t) if p(fa(t), fb(t)) else fc(t)  # noqa: E731
        self.values.append((name, value))
        return name, value

    def kernel(self, index: int) -> tuple[str, Callable[[int], int]]:
        """A kernel storing a random expression to `O[tx]`."""
        result, f = self.tree(4)
        body = "\n".join(
            [
                *self.lines,
                f"%out = arith.index_cast {result} : index to i32",
                f"memref.store %out, %O[%tx] : memref<{THREADS}xi32>",
                '"gpu.return"() : () -> ()',
            ]
        )
        text = (
            f'"gpu.func"() <{{function_type = (memref<{THREADS}xi32>) -> (), kernel}}> ({{\n'
            f"^bb0(%O: memref<{THREADS}xi32>):\n{body}\n"
            f'}}) {{sym_name = "k{index}"}} : () -> ()'
        )
        return text, f


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("seed", range(3))
def test_printed_index_expressions_compute_what_the_ir_does(seed: int, tmp_path: Path):
    rng = random.Random(seed)
    kernels = [Program(rng).kernel(k) for k in range(EXPRESSIONS)]
    module = tcir.parse_ir(
        'builtin.module attributes {gpu.container_module} {\n"gpu.module"() <{sym_name = "kernels"}> ({\n'
        + "\n".join(text for text, _ in kernels)
        + "\n}) : () -> ()\n}"
    )
    source = print_cuda(module)
    calls = "\n".join(
        f'  for (unsigned t = 0; t < {THREADS}; ++t) {{ threadIdx.x = t; k{k}(out); }}\n'
        f'  for (int t = 0; t < {THREADS}; ++t) std::printf("%d ", out[t]);\n  std::printf("\\n");'
        for k in range(EXPRESSIONS)
    )
    program = tmp_path / "expressions.cpp"
    program.write_text(f"{SHIM}\n{source}\nint main() {{\n  int out[{THREADS}];\n{calls}\n}}\n")
    binary = tmp_path / "expressions"
    build = subprocess.run(
        ["g++", "-fwrapv", "-o", str(binary), str(program)], capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr + source
    rows = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.splitlines()
    for k, ((text, f), row) in enumerate(zip(kernels, rows, strict=True)):
        expected = [f(t) for t in range(THREADS)]
        got = [int(v) for v in row.split()]
        assert got == expected, f"kernel k{k}:\n{text}\n" + source.split(f"k{k}(")[1].split("}\n")[0]
