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


def test_plain_tensors_skip_the_redispatch(ops, monkeypatch):
    """Tensors that need no gradient go from the Autograd kernel straight to
    the CPU kernel: no second trip through the dispatcher (µs per call)."""
    matmul, _, _ = ops

    def redispatch(*args):
        raise AssertionError("redispatched")

    monkeypatch.setattr(matmul, "redispatch", redispatch)
    a, b = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    assert torch.allclose(matmul(a, b), a @ b)


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


LAYER = """
def linear(float(B,I) X, float(O,I) W, float(O) Bias) -> (Y) {
  Y(b,o) +=! X(b,i) * W(o,i)
  Y(b,o) = fmaxf(Y(b,o) + Bias(o), 0)
}
def halves(float(B,I) X) -> (L, R) {
  L(b,i) = X(b,i) / 2
  R(b,i) = X(b,i) - L(b,i)
}
"""


@pytest.fixture(scope="module")
def layer():
    return tcir.define(LAYER)


def test_torch_compile_dynamic_sizes_do_not_recompile(layer):
    """Thirteen batch sizes through forward and backward: one graph (at most
    two), as plain torch; the fake kernel adds no guard per size."""
    from torch._dynamo.testing import CompileCounterWithBackend

    linear = tcir.torch.operator(layer.linear, name="dynamic_linear")
    w = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(5, dtype=torch.float64, requires_grad=True)

    def model(x):
        return (linear(x, w, bias) * 2).sum()

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=counter)
    for batch in range(3, 16):
        x = torch.randn(batch, 4, dtype=torch.float64)
        loss = compiled(x)
        loss.backward()
        grads = w.grad.clone(), bias.grad.clone()
        w.grad = bias.grad = None
        expected = (torch.relu(x @ w.T + bias) * 2).sum()
        expected.backward()
        assert torch.allclose(loss, expected)
        assert torch.allclose(grads[0], w.grad) and torch.allclose(grads[1], bias.grad)
        w.grad = bias.grad = None
    assert counter.frame_count <= 2, counter.frame_count


def test_one_operator_serves_float32_and_float64(layer):
    """A def written with `float` runs on float64 tensors as the same def in
    double (no second def, no second name)."""
    linear = tcir.torch.operator(layer.linear, name="typed_linear")
    for dtype in (torch.float32, torch.float64, torch.float32):
        x, w, b = (torch.randn(*shape, dtype=dtype) for shape in ((3, 4), (5, 4), (5,)))
        y = linear(x, w, b)
        assert y.dtype == dtype
        assert torch.allclose(y, torch.relu(x @ w.T + b), atol=1e-6)
    assert layer.linear.astype(torch.float64) is layer.linear.astype("double")
    assert layer.linear.astype(torch.float64).definition.outputs[0].dtype == "float64"


def test_torch_cpu_tensors_in_torch_tensors_out(layer):
    x = torch.randn(3, 4)
    left, right = layer.halves(x)
    assert isinstance(left, torch.Tensor) and isinstance(right, torch.Tensor)
    assert torch.allclose(left + right, x)
    y = layer.linear(x, torch.randn(5, 4), torch.randn(5))
    assert isinstance(y, torch.Tensor) and y.shape == (3, 5)


def test_derived_backward_of_several_outputs(layer):
    halves = tcir.torch.operator(layer.halves, name="derived_halves")
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: halves(t), (x,))


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@needs_gpu
def test_gradcheck_on_the_gpu(layer):
    linear = tcir.torch.operator(layer.linear, name="gpu_linear")
    args = [torch.randn(*s, dtype=torch.float64, device="cuda", requires_grad=True) for s in ((3, 4), (5, 4), (5,))]
    assert torch.autograd.gradcheck(lambda *a: linear(*a), tuple(args))


@needs_gpu
def test_reduce_overhead_cuda_graphs_match_eager(layer):
    """`mode="reduce-overhead"` (CUDA graphs) with tcir operators inside:
    100 steps of forward and backward on changing inputs give eager's numbers."""
    linear = tcir.torch.operator(layer.linear, name="graphed_linear")
    torch.manual_seed(0)
    w = torch.randn(64, 32, device="cuda", requires_grad=True)
    bias = torch.randn(64, device="cuda", requires_grad=True)

    def model(x):
        return linear(x, w, bias).square().mean()

    def step(run, x):
        loss = run(x)
        loss.backward()
        result = (loss.detach().clone(), w.grad.clone(), bias.grad.clone())
        w.grad = bias.grad = None
        return result

    graphed = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    for k in range(100):
        x = torch.randn(16, 32, device="cuda") * (1 + k % 3)
        for got, expected in zip(step(graphed, x), step(model, x)):
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
