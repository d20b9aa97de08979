"""The CUDA printer's inline index expressions compute what the IR does,
before and after `gpu-simplify-index`.

The printer prints `index` values used once inside their user's expression,
with parentheses where C's precedence needs them; the pass folds constants
and rewrites sums as linear forms. Here random index expression DAGs (every
signed integer op the pipeline emits, values used once and several times,
literal operands on either side) are printed as a kernel, compiled as host
C++ by g++ (with `threadIdx` and the CUDA qualifiers defined away), run for
32 thread ids, and compared with a Python evaluation of the same DAG with the
ops' IR semantics. Simplified kernels take an `index` argument, so that their
`index` is the IR's 64 bits (`long long`), as the pass computes. Random f32
expression DAGs over loaded values check the same of float expressions
(bit for bit against numpy, no contraction on the host). No GPU needed.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
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


def wrap(v: int, bits: int = 32) -> int:
    """`v` as a `bits`-bit two's complement integer (the kernel's `int`, or `long long`)."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


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

    def __init__(self, rng: random.Random, bits: int):
        self.rng = rng
        self.bits = bits
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
        bits = self.bits
        if kind == "offsets":  # (a + c1) + c2: gpu-simplify-index adds the constants
            c1, c2 = self.rng.randint(-9, 9), self.rng.randint(-9, 9)
            (b, _), inner = self.constant(c1), self.fresh()
            self.lines.append(f"{inner} = arith.addi {a}, {b} : index")
            (c, _), name = self.constant(c2), self.fresh()
            self.lines.append(f"{name} = arith.addi {inner}, {c} : index")
            value = lambda t: wrap(fa(t) + c1 + c2, bits)  # noqa: E731
        elif kind == "binary":
            op = self.rng.choice(list(BINARY))
            b, fb = self.tree(depth - 1)
            name = self.fresh()
            self.lines.append(f"{name} = {op} {a}, {b} : index")
            f = BINARY[op]
            value = lambda t: wrap(f(fa(t), fb(t)), bits)  # noqa: E731
        elif kind == "division":
            op = self.rng.choice(list(DIVISION))
            d = self.rng.choice([v for v in range(-9, 10) if v not in (0, -1)])
            b, _ = self.constant(d)
            name = self.fresh()
            self.lines.append(f"{name} = {op} {a}, {b} : index")
            g = DIVISION[op]
            value = lambda t: wrap(g(fa(t), d), bits)  # noqa: E731
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
        """A kernel storing a random expression to `O[tx]` (as `int`)."""
        result, f = self.tree(4)
        wide = ", index" if self.bits == 64 else ""
        body = "\n".join(
            [
                *self.lines,
                f"%out = arith.index_cast {result} : index to i32",
                f"memref.store %out, %O[%tx] : memref<{THREADS}xi32>",
                '"gpu.return"() : () -> ()',
            ]
        )
        text = (
            f'"gpu.func"() <{{function_type = (memref<{THREADS}xi32>{wide}) -> (), kernel}}> ({{\n'
            f"^bb0(%O: memref<{THREADS}xi32>{wide.replace(', ', ', %n: ')}):\n{body}\n"
            f'}}) {{sym_name = "k{index}"}} : () -> ()'
        )
        return text, lambda t: wrap(f(t))


def run_on_host(source: str, main: str, flag: str, tmp_path: Path) -> list[str]:
    """The lines printed by `source` (kernels, through `SHIM`) and `main`,
    built with g++ and `flag` and run on the host."""
    program = tmp_path / "kernels.cpp"
    program.write_text(f"{SHIM}\n{source}\n{main}")
    binary = tmp_path / "kernels"
    build = subprocess.run(["g++", flag, "-o", str(binary), str(program)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr + source
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.splitlines()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("simplified", [False, True], ids=["printed", "simplified"])
@pytest.mark.parametrize("seed", range(3))
def test_printed_index_expressions_compute_what_the_ir_does(seed: int, simplified: bool, tmp_path: Path):
    rng = random.Random(seed)
    kernels = [Program(rng, 64 if simplified else 32).kernel(k) for k in range(EXPRESSIONS)]
    module = tcir.parse_ir(
        'builtin.module attributes {gpu.container_module} {\n"gpu.module"() <{sym_name = "kernels"}> ({\n'
        + "\n".join(text for text, _ in kernels)
        + "\n}) : () -> ()\n}"
    )
    if simplified:
        tcir.PassManager.parse("gpu-simplify-index").run(module)
    source = print_cuda(module)
    argument = ", 0" if simplified else ""
    calls = "\n".join(
        f'  for (unsigned t = 0; t < {THREADS}; ++t) {{ threadIdx.x = t; k{k}(out{argument}); }}\n'
        f'  for (int t = 0; t < {THREADS}; ++t) std::printf("%d ", out[t]);\n  std::printf("\\n");'
        for k in range(EXPRESSIONS)
    )
    rows = run_on_host(source, f"int main() {{\n  int out[{THREADS}];\n{calls}\n}}\n", "-fwrapv", tmp_path)
    for k, ((text, f), row) in enumerate(zip(kernels, rows, strict=True)):
        expected = [f(t) for t in range(THREADS)]
        got = [int(v) for v in row.split()]
        assert got == expected, f"kernel k{k}:\n{text}\n" + source.split(f"k{k}(")[1].split("}\n")[0]


FLOAT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
}
Floats = Callable[[np.ndarray, np.ndarray], np.ndarray]


class FloatProgram:
    """A random DAG of f32 ops over `X[tx]`, `Y[tx]` and literals, and its IR text."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines = [
            '%tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index',
            f"%x = memref.load %X[%tx] : memref<{THREADS}xf32>",
            f"%y = memref.load %Y[%tx] : memref<{THREADS}xf32>",
        ]
        self.values: list[tuple[str, Floats]] = [("%x", lambda x, y: x), ("%y", lambda x, y: y)]
        self.count = 0

    def op(self, text: str, f: Floats) -> tuple[str, Floats]:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"{name} = {text}")
        self.values.append((name, f))
        return name, f

    def tree(self, depth: int) -> tuple[str, Floats]:
        """Mostly fresh subtrees (printed inline), sometimes an earlier value (a local)."""
        if depth == 0 or self.rng.random() < 0.15:
            if self.rng.random() < 0.3:
                c = np.float32(self.rng.randint(-16, 16) / 4)
                return self.op(f"arith.constant {float(c)!r} : f32", lambda x, y: np.full_like(x, c))
            return self.rng.choice(self.values)
        kind = self.rng.choice(["binary", "binary", "binary", "neg", "select"])
        a, fa = self.tree(depth - 1)
        if kind == "neg":
            return self.op(f"arith.negf {a} : f32", lambda x, y: -fa(x, y))
        b, fb = self.tree(depth - 1)
        if kind == "select":
            self.count += 1
            self.lines.append(f"%b{self.count} = arith.cmpf olt, {a}, {b} : f32")
            return self.op(
                f"arith.select %b{self.count}, {a}, {b} : f32",
                lambda x, y: np.where(fa(x, y) < fb(x, y), fa(x, y), fb(x, y)),
            )
        name = self.rng.choice(list(FLOAT_BINARY))
        g = FLOAT_BINARY[name]
        return self.op(f"{name} {a}, {b} : f32", lambda x, y: g(fa(x, y), fb(x, y)))

    def kernel(self, index: int) -> tuple[str, Floats]:
        """A kernel storing a random expression to `O[tx]`."""
        result, f = self.tree(4)
        memref = f"memref<{THREADS}xf32>"
        body = "\n".join([*self.lines, f"memref.store {result}, %O[%tx] : {memref}", '"gpu.return"() : () -> ()'])
        text = (
            f'"gpu.func"() <{{function_type = ({memref}, {memref}, {memref}) -> (), kernel}}> ({{\n'
            f"^bb0(%X: {memref}, %Y: {memref}, %O: {memref}):\n{body}\n"
            f'}}) {{sym_name = "k{index}"}} : () -> ()'
        )
        return text, f


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("seed", range(3))
def test_printed_float_expressions_compute_what_the_ir_does(seed: int, tmp_path: Path):
    rng = random.Random(seed)
    kernels = [FloatProgram(rng).kernel(k) for k in range(EXPRESSIONS)]
    module = tcir.parse_ir(
        'builtin.module attributes {gpu.container_module} {\n"gpu.module"() <{sym_name = "kernels"}> ({\n'
        + "\n".join(text for text, _ in kernels)
        + "\n}) : () -> ()\n}"
    )
    source = print_cuda(module)
    values = np.random.default_rng(seed).standard_normal((2, THREADS)).astype(np.float32)
    arrays = "\n".join(
        f"static const float {name}[{THREADS}] = {{{', '.join(f'{float(v).hex()}f' for v in row)}}};"
        for name, row in zip("XY", values)
    )
    calls = "\n".join(
        f"  for (unsigned t = 0; t < {THREADS}; ++t) {{ threadIdx.x = t; k{k}(X, Y, out); }}\n"
        f'  for (int t = 0; t < {THREADS}; ++t) std::printf("%a ", out[t]);\n  std::printf("\\n");'
        for k in range(EXPRESSIONS)
    )
    rows = run_on_host(
        source, f"{arrays}\nint main() {{\n  float out[{THREADS}];\n{calls}\n}}\n", "-ffp-contract=off", tmp_path
    )
    with np.errstate(all="ignore"):
        for k, ((text, f), row) in enumerate(zip(kernels, rows, strict=True)):
            expected = f(values[0], values[1]).astype(np.float32)
            got = np.array([float.fromhex(v) for v in row.split()], np.float32)
            assert np.array_equal(got, expected, equal_nan=True), (
                f"kernel k{k}:\n{text}\n" + source.split(f"k{k}(")[1].split("}\n")[0]
            )
