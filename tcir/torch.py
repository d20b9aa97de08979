"""tcir defs as PyTorch operators, with autograd from TC backward defs.

    import tcir, tcir.torch
    mod = tcir.define('''
    def matmul(double(M,K) A, double(K,N) B) -> (C) { C(m,n) +=! A(m,k) * B(k,n) }
    def matmul_grad(double(M,K) A, double(K,N) B, double(M,N) d_C) -> (d_A, d_B) {
      d_A(m,k) +=! d_C(m,n) * B(k,n)
      d_B(k,n) +=! d_C(m,n) * A(m,k)
    }''')
    matmul = tcir.torch.operator(mod.matmul, backward=mod.matmul_grad)
    C = matmul(A, B)                   # torch.ops.tcir.matmul: CPU or CUDA tensors
    torch.compile(model, fullgraph=True)   # traces through it: no graph break

`operator` registers the def as a custom operator (`torch.library.custom_op`,
namespace `tcir`) that runs it on the CPU backend for CPU tensors and on the
CUDA backend for CUDA tensors, with a fake implementation from tcir's shape
inference, so that `torch.compile` and other tracers see its output shapes.
As in TC (`tc.define(..., training=True, backward=...)`), a backward def
takes the forward inputs followed by the gradient of each output, and returns
the gradient of each floating-point tensor input, in order (index tensors and
scalars get none); it is registered as an operator
too (`<name>_backward`), and autograd calls it. torch is imported here only:
the rest of tcir does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from tcir.api import Function
from tcir.errors import TCError
from tcir.runtime.signature import NUMPY_DTYPES, bind

NAMESPACE = "tcir"
_SCALARS = {"bool": "bool", "float16": "float", "float32": "float", "float64": "float"}
_registered: dict[str, Any] = {}


def _op_name(name: str) -> str:
    return name if name.isidentifier() else f"tc_{name}"


def _schema(function: Function) -> str:
    """`(Tensor A, Tensor B, float s) -> (Tensor, Tensor)` for `function`'s def."""
    definition = function.definition
    params = []
    for p in definition.inputs:
        kind = _SCALARS.get(p.dtype, "int") if p.is_scalar else "Tensor"
        params.append(f"{kind} {p.name}")
    outputs = ", ".join("Tensor" for _ in definition.outputs)
    returns = "Tensor" if len(definition.outputs) == 1 else f"({outputs})"
    return f"({', '.join(params)}) -> {returns}"


def _run(function: Function, args: Sequence[Any]) -> Any:
    """`function` on torch tensors: the CUDA backend for CUDA tensors, else the CPU's."""
    on_gpu = any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)
    if on_gpu:
        result = function(*args, backend="cuda")
    else:
        arrays = [a.detach().contiguous().numpy() if isinstance(a, torch.Tensor) else a for a in args]
        outputs = function(*arrays, backend="cpu")
        result = tuple(torch.from_numpy(o) for o in outputs) if isinstance(outputs, tuple) else torch.from_numpy(outputs)
    return tuple(result) if isinstance(result, tuple | list) else result


def _fake(function: Function, args: Sequence[Any]) -> Any:
    """Empty outputs of the shapes and dtypes tcir infers for `args`."""
    definition = function.definition
    binding = bind(definition, list(args))
    device = next(a.device for a in args if isinstance(a, torch.Tensor))
    outputs = tuple(
        torch.empty(binding.shape(definition, p), dtype=_torch_dtype(p.dtype), device=device)
        for p in definition.outputs
    )
    return outputs[0] if len(outputs) == 1 else outputs


def _torch_dtype(dtype: str) -> torch.dtype:
    return getattr(torch, NUMPY_DTYPES[dtype].__name__)


def _register(function: Function, name: str) -> Any:
    qualname = f"{NAMESPACE}::{name}"
    if qualname in _registered:
        known, op = _registered[qualname]
        if known is not function:
            raise TCError(f"tcir.torch: an operator {qualname} is already registered for another def")
        return op

    def implementation(*args: Any) -> Any:
        return _run(function, args)

    op = torch.library.custom_op(qualname, implementation, mutates_args=(), schema=_schema(function))
    op.register_fake(lambda *args: _fake(function, args))
    _registered[qualname] = (function, op)
    return op


def _check_backward(function: Function, backward: Function) -> list[int]:
    """The positions of `function`'s floating-point tensor inputs, after
    checking that `backward` takes the inputs then one gradient per output,
    and returns one gradient per such input."""
    forward, grad = function.definition, backward.definition
    tensors = [k for k, p in enumerate(forward.inputs) if not p.is_scalar and p.dtype.startswith("float")]
    expected_inputs = len(forward.inputs) + len(forward.outputs)
    if len(grad.inputs) != expected_inputs:
        raise TCError(
            f"tcir.torch: backward def '{grad.name}' must take the {len(forward.inputs)} inputs of "
            f"'{forward.name}' and one gradient per output ({expected_inputs} in all), "
            f"got {len(grad.inputs)}"
        )
    if len(grad.outputs) != len(tensors):
        raise TCError(
            f"tcir.torch: backward def '{grad.name}' must return one gradient per floating-point tensor input of "
            f"'{forward.name}' ({len(tensors)}), got {len(grad.outputs)}"
        )
    return tensors


def operator(function: Function, backward: Function | None = None, name: str | None = None) -> Any:
    """Register `function` (a def of a `tcir.define` module) as the PyTorch
    operator `torch.ops.tcir.<name>` (default: the def's name), differentiable
    through `backward` if given (see the module docstring); returns it."""
    if not isinstance(function, Function) or not (backward is None or isinstance(backward, Function)):
        raise TCError("tcir.torch.operator takes defs of a tcir.define module (mod.name)")
    name = _op_name(name or function.name)
    tensors = _check_backward(function, backward) if backward is not None else []
    op = _register(function, name)
    if backward is None:
        return op
    backward_op = _register(backward, f"{name}_backward")
    count = len(function.definition.inputs)

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.inputs = inputs
        ctx.save_for_backward(*(inputs[k] for k in tensors))

    def gradient(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if k in tensors else ctx.inputs[k] for k in range(count)]
        outputs = backward_op(*args, *(g.contiguous() for g in grads))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        result: list[Any] = [None] * count
        for position, value in zip(tensors, outputs):
            result[position] = value
        return tuple(result)

    op.register_autograd(gradient, setup_context=setup_context)
    return op
