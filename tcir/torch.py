"""tcir defs as PyTorch operators, differentiable through derived backward defs.

    import tcir, tcir.torch
    mod = tcir.define('''
    def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,kk) * B(n,kk) }
    ''')
    tmm = tcir.torch.operator(mod.tmm)  # torch.ops.tcir.tmm: CPU or CUDA tensors
    C = tmm(A, B)
    C.sum().backward()                  # through tmm's derived backward def
    torch.compile(model, fullgraph=True, dynamic=True)  # no graph break, no recompile per size

`operator` registers a def as the operator `torch.ops.tcir.<name>`: CPU
tensors run on the CPU backend, CUDA tensors on the CUDA backend (on torch's
current stream; CUDA graphs capture it). Its backward is the def's derived
backward (`mod.f.gradient()`, reverse-mode differentiation of the TC), or
`backward=` a def written by hand that, as in TC, takes the forward inputs
followed by the gradient of each output and returns the gradient of each
floating-point tensor input (index tensors and scalars get none); it is an
operator too (`<name>_backward`), which autograd calls. A def whose gradient
cannot be derived still runs forward; its backward raises the `TCError`
that says why.

One operator serves every floating-point dtype: a def written with `float`
called on float64 (or float16) tensors runs as the same def in that type
(`mod.f.astype(torch.float64)`), so `torch.autograd.gradcheck` needs no
double copy of the def. `name=` registers a def under another name (two defs
of the same name in different modules need two names).

For `torch.compile`, the operator's fake implementation computes the output
shapes from the input shapes as TC's range inference gives them (affine in
the sizes, min and max included) and so works on symbolic sizes: with
`dynamic=True` a new batch size is no new graph. The real call compiles and
caches the def per size at run time.

torch is imported here only: the rest of tcir does not need it.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
    AffineSymExpr,
)

from tcir.api import Function, define
from tcir.errors import TCError
from tcir.runtime.signature import NUMPY_DTYPES

NAMESPACE = "tcir"
_SCALARS = {"bool": "bool", "float16": "float", "bfloat16": "float", "float32": "float", "float64": "float"}
_LIBRARY = torch.library.Library(NAMESPACE, "FRAGMENT")
_registered: dict[str, tuple[Function, Any]] = {}


def _op_name(name: str) -> str:
    return name if name.isidentifier() else f"tc_{name}"


def _schema(function: Function) -> str:
    """`(Tensor A, Tensor B, float s) -> (Tensor, Tensor)` for `function`'s def."""
    definition = function.definition
    params = []
    for p in definition.inputs:
        kind = _SCALARS.get(p.dtype, "int") if p.is_scalar else "Tensor"
        usable = p.name.isidentifier() and not keyword.iskeyword(p.name)
        params.append(f"{kind} {p.name if usable else f'{p.name}_'}")
    outputs = ", ".join("Tensor" for _ in definition.outputs)
    returns = "Tensor" if len(definition.outputs) == 1 else f"({outputs})"
    return f"({', '.join(params)}) -> {returns}"


def _torch_dtype(dtype: str) -> torch.dtype:
    return getattr(torch, NUMPY_DTYPES[dtype].__name__)


class _Typed:
    """`function` in the floating-point type of a call's tensors: the def
    itself, or the def retyped (`Function.astype`) for the other float types."""

    def __init__(self, function: Function):
        self.function = function
        own = function.float_type
        self.position = next(
            (k for k, p in enumerate(function.definition.inputs) if not p.is_scalar and p.dtype == own), None
        )
        self.by_dtype: dict[torch.dtype, Function] = {} if own is None else {_torch_dtype(own): function}

    def __call__(self, args: Sequence[Any]) -> Function:
        if self.position is None:
            return self.function
        dtype = args[self.position].dtype
        function = self.by_dtype.get(dtype)
        if function is None:
            function = self.function if not dtype.is_floating_point else self.function.astype(dtype)
            self.by_dtype[dtype] = function
        return function


def _symbolic_sizes(function: Function, args: Sequence[Any]) -> list[Any]:
    """The def's size parameters for `args`, as the (possibly symbolic) ints
    of their shapes: no comparison, so no guard on their values."""
    definition = function.definition
    known: dict[str, Any] = {}
    for param, arg in zip(definition.inputs, args):
        if param.is_scalar:
            if param.name in definition.scalar_size_params:
                known[param.name] = arg
            continue
        for dim, extent in zip(param.dims, arg.shape):
            if isinstance(dim, AffineSymExpr):
                known.setdefault(definition.size_params[dim.position], extent)
    values = [known.get(n, 0) for n in definition.size_params]
    for derived in definition.derived_sizes:  # min or max of sizes before it
        candidates = [_evaluate(c, values) for c in derived.candidates]
        pick = torch.sym_min if derived.kind == "min" else torch.sym_max
        value = candidates[0]
        for candidate in candidates[1:]:
            value = pick(value, candidate)
        values[definition.size_params.index(derived.name)] = value
    return values


def _evaluate(expr: AffineExpr, sizes: Sequence[Any]) -> Any:
    """An affine size expression on (symbolic) ints."""
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineSymExpr):
        return sizes[expr.position]
    assert isinstance(expr, AffineBinaryOpExpr), expr
    a, b = _evaluate(expr.lhs, sizes), _evaluate(expr.rhs, sizes)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return a + b
        case AffineBinaryOpKind.Mul:
            return a * b
        case AffineBinaryOpKind.FloorDiv:
            return a // b
        case AffineBinaryOpKind.CeilDiv:
            return -((-a) // b)
        case _:
            return a % b


def _fake(typed: _Typed, args: Sequence[Any]) -> Any:
    """Empty outputs of the shapes and dtypes tcir infers for `args`."""
    function = typed(args)
    definition = function.definition
    sizes = _symbolic_sizes(function, args)
    device = next(a.device for a in args if isinstance(a, torch.Tensor))
    outputs = tuple(
        torch.empty([_evaluate(d, sizes) for d in p.dims], dtype=_torch_dtype(p.dtype), device=device)
        for p in definition.outputs
    )
    return outputs[0] if len(outputs) == 1 else outputs


def _kernels(typed: _Typed) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The CPU and CUDA kernels of an operator: the def on the CPU backend
    (torch tensors in, torch tensors out) and on the CUDA backend (the call's
    fast path: the backend chosen by the tensors, no options)."""

    def cpu(*args: Any) -> Any:
        return typed(args)(*args, backend="cpu")

    def cuda(*args: Any) -> Any:
        return typed(args)(*args)

    return cpu, cuda


def _register(function: Function, name: str) -> Any:
    """The operator `tcir::<name>` running `function` (its CPU, CUDA and fake kernels)."""
    qualname = f"{NAMESPACE}::{name}"
    if qualname in _registered:
        known, op = _registered[qualname]
        if known is not function:
            raise TCError(f"tcir.torch: an operator {qualname} is already registered for another def")
        return op
    return _define(function, name)[0]


def _define(function: Function, name: str) -> tuple[Any, dict[int, Callable[..., Any]]]:
    """A new operator `tcir::<name>`, and its kernels by plain dispatch key set."""
    qualname = f"{NAMESPACE}::{name}"
    typed = _Typed(function)
    _LIBRARY.define(f"{name}{_schema(function)}", tags=(torch.Tag.pt2_compliant_tag,))
    cpu, cuda = _kernels(typed)
    _LIBRARY.impl(name, cpu, "CPU")
    _LIBRARY.impl(name, cuda, "CUDA")
    torch.library.register_fake(qualname, lambda *args: _fake(typed, args), lib=_LIBRARY)
    op = getattr(getattr(torch.ops, NAMESPACE), name).default
    _registered[qualname] = (function, op)
    return op, _plain_keysets(cpu, cuda)


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


def derived_backward(function: Function) -> Function:
    """`function`'s derived backward def (`Function.gradient`), compiled."""
    source = function.gradient()
    return define(source, f"<gradient of {function.name}>")[f"{function.name}_grad"]


def _plain_keysets(cpu: Callable[..., Any], cuda: Callable[..., Any]) -> dict[int, Callable[..., Any]]:
    """The kernel for each dispatch key set that plain CPU or CUDA tensors
    have below autograd (no tracing, fake tensors or Python modes)."""
    keys = torch._C.DispatchKey
    view = torch._C.DispatchKeySet(keys.ADInplaceOrView)
    plain = {}
    for key, kernel in ((keys.CPU, cpu), (keys.CUDA, cuda)):
        backend = torch._C.DispatchKeySet(key)
        # The key set the Autograd kernel is given has no ADInplaceOrView
        # (excluded below autograd); a redispatch's has it.
        plain[backend.raw_repr()] = plain[(backend | view).raw_repr()] = kernel
    return plain


def _autograd(
    op: Any, count: int, tensors: list[int], backward: Callable[[], Any], plain: dict[int, Callable[..., Any]]
) -> Callable[..., Any]:
    """The Autograd kernel of `op` (`count` inputs, gradients for those at
    `tensors`): where no input needs a gradient, the kernel below autograd
    (called at once for plain tensors, `plain`: a dispatch costs µs), else a
    `torch.autograd.Function` whose backward calls the backward operator
    (made by `backward` at the first backward: a def whose gradient cannot be
    derived runs forward and raises there)."""
    after_autograd = torch._C._after_autograd_keyset

    class Differentiable(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, keyset: Any, *args: Any) -> Any:
            with torch._C._AutoDispatchBelowAutograd():
                result = op.redispatch(keyset & after_autograd, *args)
            ctx.args = [None if k in tensors else a for k, a in enumerate(args)]
            ctx.save_for_backward(*(args[k] for k in tensors))
            return result

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            saved = iter(ctx.saved_tensors)
            args = [next(saved) if k in tensors else ctx.args[k] for k in range(count)]
            outputs = backward()(*args, *(g.contiguous() for g in grads))
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            result: list[Any] = [None] * (count + 1)  # the keyset first
            for position, value in zip(tensors, outputs):
                result[1 + position] = value
            return tuple(result)

    grad_enabled, any_requires_grad, apply = torch._C.is_grad_enabled, torch._C._any_requires_grad, Differentiable.apply
    below_of: dict[int, Callable[..., Any] | None] = {}
    """The plain kernel (or None) of each key set met, by its raw form: a
    key set's `&` makes a Python object (a µs per call)."""

    def kernel(keyset: Any, *args: Any) -> Any:
        if grad_enabled() and any_requires_grad(*args):
            return apply(keyset, *args)
        raw = keyset.raw_repr()
        try:
            direct = below_of[raw]
        except KeyError:
            direct = below_of[raw] = plain.get((keyset & after_autograd).raw_repr())
        if direct is not None:
            return direct(*args)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & after_autograd, *args)

    return kernel


def operator(function: Function, backward: Function | None = None, name: str | None = None) -> Any:
    """Register `function` (a def of a `tcir.define` module) as the PyTorch
    operator `torch.ops.tcir.<name>` (default: the def's name), differentiable
    through its derived backward def or `backward` (see the module); returns
    the operator (`torch.ops.tcir.<name>.default`)."""
    if not isinstance(function, Function) or not (backward is None or isinstance(backward, Function)):
        raise TCError("tcir.torch.operator takes defs of a tcir.define module (mod.name)")
    name = _op_name(name or function.name)
    qualname = f"{NAMESPACE}::{name}"
    if qualname in _registered:
        return _register(function, name)
    definition = function.definition
    tensors = [k for k, p in enumerate(definition.inputs) if not p.is_scalar and p.dtype.startswith("float")]
    failure: TCError | None = None
    if backward is None and tensors:
        try:
            backward = derived_backward(function)
        except TCError as error:  # forward only: the backward says why
            failure = error
    if backward is not None:
        tensors = _check_backward(function, backward)
    op, plain = _define(function, name)
    if not tensors:
        return op
    if backward is not None:
        backward_op = _register(backward, f"{name}_backward")

        def make_backward() -> Any:
            return backward_op
    else:
        def make_backward() -> Any:
            assert failure is not None
            raise failure

    kernel = _autograd(op, len(definition.inputs), tensors, make_backward, plain)
    _LIBRARY.impl(name, kernel, "Autograd", with_keyset=True)
    return op

