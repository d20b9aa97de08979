"""Bad calls raise `tcir.TCError` naming the argument; the def stays usable."""

import numpy as np
import pytest

import tcir

SOURCE = """
def mm(float(M,K) A, float(K,N) B) -> (C) { C(m,n) +=! A(m,k) * B(k,n) }
def scale(float a, int32 n, float(M) X) -> (Y) { Y(i) = a * X(i) + float(n) }
def gather(float(N,D) T, int32(B,L) I) -> (O) { O(b,d) +=! T(I(b,l), d) }
"""
mod = tcir.define(SOURCE)
A = np.ones((2, 3), np.float32)
B = np.ones((3, 4), np.float32)


@pytest.mark.parametrize(
    "args, message",
    [
        ((A,), r"mm takes 2 arguments \(A, B\), got 1"),
        ((A, B, B), "got 3"),
        ((A, B[0]), r"argument #1 'B' of mm must have rank 2, got shape \(4,\)"),
        ((A, B.astype(np.float64)), "argument #1 'B' of mm must have dtype float32, got float64"),
        (
            (A, np.ones((5, 4), np.float32)),
            r"inconsistent size K: 'A' \(dimension 1\) has K=3 but 'B' \(dimension 0\) has K=5",
        ),
        ((A, [[1.0]]), "argument #1 'B' of mm must be an array, got list"),
    ],
)
def test_bad_calls_name_the_argument(args, message):
    with pytest.raises(tcir.ShapeError, match=message):
        mod.mm(*args)
    assert mod.mm(A, B).shape == (2, 4)  # nothing left half-initialized


def test_scalar_arguments_are_checked():
    x = np.ones(3, np.float32)
    with pytest.raises(tcir.ShapeError, match="argument #1 'n' of scale must be an integer"):
        mod.scale(2.0, 1.5, x)
    with pytest.raises(tcir.ShapeError, match="argument #0 'a' of scale must be a number"):
        mod.scale("2", 1, x)
    assert (mod.scale(2.0, 1, x) == 3).all()


def test_outputs_too_large_to_index_are_shape_errors():
    powers = tcir.define("def p(float(N) A) -> (O) { O(i) = A(i % N) where i in 0:N*N*N*N*N*N*N*N }")
    with pytest.raises(tcir.ShapeError, match=r"'O' would have shape \(25600000000,\) for sizes \{'N': 20\}"):
        powers.p(np.ones(20, np.float32))
    assert powers.p(np.ones(2, np.float32)).shape == (256,)


def test_out_of_range_index_is_an_error_not_a_crash():
    table = np.ones((5, 2), np.float32)
    index = np.array([[0, 4], [2, 5]], np.int32)
    with pytest.raises(tcir.TCError, match=r"index tensor 'I' gives subscripts in \[0, 5\] for dimension 0 of 'T' \(size 5\)"):
        mod.gather(table, index)
    with pytest.raises(tcir.TCError, match="index tensor 'I'"):
        mod.gather(table, -index)
    assert (mod.gather(table, index % 5) == 2).all()


def test_unknown_backend_and_def():
    with pytest.raises(tcir.TCError, match="unknown backend 'tpu'"):
        mod.mm(A, B, backend="tpu")
    with pytest.raises(AttributeError, match="no def named 'nope'"):
        mod.nope  # noqa: B018


def test_ir_until_a_pass_and_llvm():
    text = mod.mm.ir(A, B, until="convert-tc-to-loops")
    assert "func.func @mm(%A: memref<2x3xf32>, %B: memref<3x4xf32>, %C: memref<2x4xf32>)" in text
    assert "scf.for" in text
    llvm_ir = mod.mm.ir(A, B)
    assert "define void @mm(ptr noalias" in llvm_ir
    with pytest.raises(tcir.TCError, match="unknown pass 'poly-tile'"):
        mod.mm.ir(A, B, until="poly-tile")


def test_bad_options_type():
    with pytest.raises(tcir.TCError, match="options must be a tcir.MappingOptions, got dict"):
        mod.mm(A, B, options={"tile": [4]})


def test_call_overhead_path_reuses_the_checked_binding():
    fresh = tcir.define(SOURCE)
    fresh.mm(A, B)
    (entry,) = fresh.mm._compiled.values()
    assert entry.binding.sizes == {"M": 2, "K": 3, "N": 4}
    with pytest.raises(tcir.ShapeError, match="inconsistent size K"):
        fresh.mm(A, np.ones((5, 4), np.float32))  # a new signature is checked again


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mod.mm(A, B, backnd="cpu"),
         r"mm\(\): unknown keyword argument 'backnd'; did you mean 'backend'\? \(valid: backend, options, outputs, out\)"),
        (lambda: mod.mm.ir(A, B, untl="poly-tile"),
         r"mm.ir\(\): unknown keyword argument 'untl'; did you mean 'until'\? \(valid: backend, until, options\)"),
        (lambda: mod.mm.tune(A, B, max_tme=3),
         r"tune\(\): unknown keyword argument 'max_tme'; did you mean 'max_time'\? \(valid: .*max_time, .*verbose"),
    ],
)
def test_keyword_typos_list_the_valid_keywords(call, message):
    with pytest.raises(tcir.TCError, match=message):
        call()


def test_cuda_without_cupy_says_so_once(monkeypatch, caplog):
    """No cupy: one error that says how to get it (or to use cuda-sim), and
    no warnings about the compilation cache before it."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    with pytest.raises(tcir.TCError) as info:
        mod.mm(A, B, backend="cuda")
    assert str(info.value) == (
        "error: backend 'cuda': cupy is not installed (pip install 'tcir[cuda]'; "
        "backend='cuda-sim' runs the same kernels on a simulated GPU without it)"
    )
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []
