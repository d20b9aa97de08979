"""Time the CPU backend on a 256^3 f32 matmul against numpy (not a test).

Two loop orders of hand-written loop IR: `ikj` (C row updated in the innermost
loop, which LLVM vectorizes) and `ijk` (a scalar reduction over k in the
innermost loop, which LLVM may not reorder without fast-math). Prints the
median of several runs.

    python tools/bench_cpu_lowering.py [--size 256] [--runs 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from statistics import median

import numpy as np
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.parser import Parser

from tcir.backends.cpu.jit import compile_module, function_signatures
from tcir.compiler.lowering import lower_to_llvm_dialect

IKJ = """
func.func @mm(%A: memref<{n}x{n}xf32>, %B: memref<{n}x{n}xf32>, %C: memref<{n}x{n}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      memref.store %zero, %C[%i, %j] : memref<{n}x{n}xf32>
    }}
    scf.for %k = %c0 to %n step %c1 {{
      %a = memref.load %A[%i, %k] : memref<{n}x{n}xf32>
      scf.for %j = %c0 to %n step %c1 {{
        %b = memref.load %B[%k, %j] : memref<{n}x{n}xf32>
        %c = memref.load %C[%i, %j] : memref<{n}x{n}xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        memref.store %s, %C[%i, %j] : memref<{n}x{n}xf32>
      }}
    }}
  }}
  func.return
}}
"""

IJK = """
func.func @mm(%A: memref<{n}x{n}xf32>, %B: memref<{n}x{n}xf32>, %C: memref<{n}x{n}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {{
        %a = memref.load %A[%i, %k] : memref<{n}x{n}xf32>
        %b = memref.load %B[%k, %j] : memref<{n}x{n}xf32>
        %p = arith.mulf %a, %b : f32
        %q = arith.addf %acc, %p : f32
        scf.yield %q : f32
      }}
      memref.store %s, %C[%i, %j] : memref<{n}x{n}xf32>
    }}
  }}
  func.return
}}
"""


def _median_ms(run: Callable[[], object], runs: int) -> float:
    run()  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    n = args.size

    ctx = Context()
    for name, dialect in get_all_dialects().items():
        ctx.register_dialect(name, dialect)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    C = np.empty((n, n), np.float32)
    expected = A.astype(np.float64) @ B

    print(f"{n}x{n}x{n} f32 matmul, median of {args.runs} runs")
    for order, template in (("ikj", IKJ), ("ijk", IJK)):
        start = time.perf_counter()
        module = Parser(ctx, template.format(n=n)).parse_module()
        mm = compile_module(lower_to_llvm_dialect(module), function_signatures(module))["mm"]
        compile_s = time.perf_counter() - start
        ms = _median_ms(lambda: mm(A, B, C), args.runs)
        error = float(np.abs(C - expected).max())
        print(f"  tcir cpu ({order}): {ms:8.3f} ms   (compile {compile_s:.2f} s, max abs err {error:.1e})")
    print(f"  numpy A @ B     : {_median_ms(lambda: A @ B, args.runs):8.3f} ms")


if __name__ == "__main__":
    main()
