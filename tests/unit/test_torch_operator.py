"""tcir defs as PyTorch custom operators: forward, autograd through a TC
backward def (gradcheck in float64 on the CPU backend), and torch.compile
with fullgraph=True tracing through them."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tcir  # noqa: E402
import tcir.torch  # noqa: E402

SOURCE = """
def matmul(double(M,K) A, double(K,N) B) -> (C) {
  C(m,n) +=! A(m,k) * B(k,n)
}
def matmul_grad(double(M,K) A, double(K,N) B, double(M,N) d_C) -> (d_A, d_B) {
  d_A(m,k) +=! d_C(m,n) * B(k,n)
  d_B(k,n) +=! d_C(m,n) * A(m,k)
}
def scale(double(N) X, double s) -> (Y) {
  Y(i) = X(i) * s
}
def scale_grad(double(N) X, double s, double(N) d_Y) -> (d_X) {
  d_X(i) = d_Y(i) * s
}
def gather(double(E) T, int32(N) I) -> (O) {
  O(i) = T(I(i))
}
"""


@pytest.fixture(scope="module")
def ops():
    mod = tcir.define(SOURCE)
    return (
        tcir.torch.operator(mod.matmul, backward=mod.matmul_grad),
        tcir.torch.operator(mod.scale, backward=mod.scale_grad),
        tcir.torch.operator(mod.gather),
    )


def test_forward_matches_torch(ops):
    matmul, scale, gather = ops
    a, b = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    assert torch.allclose(matmul(a, b), a @ b)
    assert torch.allclose(torch.ops.tcir.matmul(a, b), a @ b)
    assert torch.allclose(scale(a[0], 2.5), a[0] * 2.5)
    index = torch.tensor([2, 0, 2], dtype=torch.int32)
    assert torch.equal(gather(a[0], index), a[0][index.long()])


def test_gradcheck_through_tc_backward_defs(ops):
    matmul, scale, _ = ops
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(matmul, (a, b))
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: scale(v, 1.5), (x,))


def test_torch_compile_fullgraph_forward_and_backward(ops):
    matmul, scale, _ = ops

    def model(a, b):
        return scale(torch.relu(matmul(a, b)).flatten(), 0.5).sum()

    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    compiled = torch.compile(model, fullgraph=True)  # a graph break would raise
    loss = compiled(a, b)
    loss.backward()
    grads = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    expected = (torch.relu(a @ b) * 0.5).sum()
    expected.backward()
    assert torch.allclose(loss, expected)
    assert torch.allclose(grads[0], a.grad) and torch.allclose(grads[1], b.grad)


def test_backward_defs_must_match_the_forward():
    mod = tcir.define(SOURCE + "def bad_grad(double(M,K) A, double(M,N) d_C) -> (d_A) { d_A(m,k) +=! d_C(m,n) * A(m,k) }")
    with pytest.raises(tcir.TCError, match="backward def 'bad_grad' must take the 2 inputs of 'matmul'"):
        tcir.torch.operator(mod.matmul, backward=mod.bad_grad, name="matmul_bad")
    with pytest.raises(tcir.TCError, match="takes defs of a tcir.define module"):
        tcir.torch.operator(lambda a: a)
