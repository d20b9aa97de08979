"""The user API: `tcir.define(source)` and the callable defs it returns.

    mod = tcir.define(TC_SOURCE)
    C = mod.mm(A, B)                  # specialize, compile (cached), run
    text = mod.mm.ir(A, B, until="convert-tc-to-loops")
    cuda = mod.mm.ir(A, B, backend="cuda")

`backend="cpu"` (llvmlite) runs on numpy arrays; `backend="cuda"` (NVRTC
through cupy) on cupy arrays, torch CUDA tensors or any DLPack producer, and
is the default when the inputs live on a GPU; `backend="cuda-sim"` runs the
CUDA backend's kernels on numpy arrays on the simulated GPU, which reports
races, divergent barriers and out-of-bounds accesses (`tcir.KernelFault`).
Outputs come back in the inputs' array library.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tcir.backends.cuda.index_errors import check_pending
from tcir.compiler.lowering import CPU_LOWERING_PIPELINE, DefIR, final_code, pipeline
from tcir.compiler.options import MappingOptions
from tcir.compiler.targets import on_gpu, resolve_backend
from tcir.errors import ShapeError, TCError, check_keywords
from tcir.frontend import parse as parse_tc
from tcir.frontend.subscripts import gathers
from tcir.passmanager import PassManager, print_ir
from tcir.runtime.host_program import to_numpy
from tcir.runtime.index_check import IndexChecker
from tcir.runtime.signature import NUMPY_DTYPES, Binding, bind, scalar_value

def uninitialized(xp: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Allocates outputs that the def fully writes (tests poison them instead).
    The array constructor itself: cupy's `empty` adds host time around it
    (docs/guide/benchmarks.md, "Figures behind the runtime and the tuner")."""
    return xp.ndarray(shape, dtype)


@dataclass(frozen=True)
class _Entry:
    """A compiled kernel with what the calls with its signature share; on the
    GPU, how its outputs are made and which stream it launches on."""

    kernel: Callable[..., None]
    binding: Binding
    outputs: list[tuple[tuple[int, ...], Any, bool]]
    allocate: Callable[[], list[Any]] | None = None
    stream: Callable[[], Any] | None = None


def _allocate(xp: Any, shape: tuple[int, ...], dtype: Any, zero: bool) -> Any:
    """An output: zeros when a statement accumulates into it first."""
    return xp.zeros(shape, dtype) if zero else uninitialized(xp, shape, dtype)


def _launch_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """What picks a call's launcher: for cupy arrays, each one's shape, dtype
    and whether it is C-contiguous (a launcher passes those as they are and
    copies the others); for torch tensors, each one's type, shape, dtype,
    contiguity and device; else each argument's type, shape, dtype and
    strides. The first argument's type picks the kind of key (a dict lookup:
    a failed attribute lookup costs more than the key)."""
    key = _KEYS.get(type(args[0])) if args else _generic_key
    if key is None:
        first = args[0]
        key = _KEYS[type(first)] = (
            _cupy_key if hasattr(first, "_c_contiguous") else _torch_key if _is_torch(first) else _generic_key
        )
    try:
        return key(args)
    except AttributeError:  # arrays of several kinds, or scalars, among them
        return _generic_key(args)


def _cupy_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """cupy arrays: `_c_contiguous` is a plain attribute, a third of the
    cost of the `strides` tuple, which a key of ten arrays pays per call."""
    return tuple([(a.shape, a.dtype, a._c_contiguous) for a in args])


def _torch_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """torch tensors: contiguity and device (they have no `strides`)."""
    return tuple([(type(a), a.shape, a.dtype, a.is_contiguous(), a.get_device()) for a in args])


def _generic_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    try:  # numpy arrays among them
        return tuple([(type(a), a.shape, a.dtype, a.strides) for a in args])
    except AttributeError:  # a torch tensor (or a scalar) among them
        return tuple([(type(a), a.shape, a.dtype, getattr(a, "strides", None), getattr(a, "is_cuda", True)) for a in args])


_KEYS: dict[type, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {}
"""The kind of launch key for each type of first argument met."""


def _as_tuple(outputs: Any) -> tuple[Any, ...]:
    """`outputs=` as a tuple: () for None, one array, or a sequence of them."""
    if outputs is None:
        return ()
    return tuple(outputs) if isinstance(outputs, tuple | list) else (outputs,)


def _gpu_launching(
    specs: list[tuple[tuple[int, ...], Any, bool]], args: tuple[Any, ...]
) -> tuple[Callable[[], list[Any]], Callable[[], Any] | None]:
    """How a call with these arguments makes its outputs and picks its stream
    (None: cupy's current one):
    where an argument is a torch tensor, torch tensors (from torch's caching
    allocator, ordered on its current stream, so CUDA graphs capture them) and
    torch's current stream; else cupy arrays and cupy's current stream."""
    from tcir.backends.cuda.runtime import cupy_module, is_torch_tensor, torch_stream

    tensor = next((a for a in args if is_torch_tensor(a)), None)
    if tensor is None:
        cupy = cupy_module()
        return (lambda: [_allocate(cupy, *spec) for spec in specs]), None
    import torch

    device = tensor.device
    makers = [
        functools.partial(torch.zeros if zero else torch.empty, shape, dtype=getattr(torch, np.dtype(dtype).name), device=device)
        for shape, dtype, zero in specs
    ]
    return (lambda: [make() for make in makers]), functools.partial(torch_stream, device.index)


def _is_torch(value: Any) -> bool:
    """Whether `value` is a torch tensor (without importing torch)."""
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


AUTOTUNE_MODES = (None, "quick")
QUICK_TUNING: dict[str, Any] = {"candidates": 8, "population": 4, "max_time": 60.0, "verbose": False}
"""`tune()`'s knobs for `autotune="quick"`: 8 candidates (the default mapping
first, then the genetic search's), a minute at most."""


def _torch_view(array: np.ndarray) -> Any:
    """A numpy array's memory as a torch tensor (bfloat16 included)."""
    import torch

    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _value_range(array: Any) -> tuple[int, int] | None:
    """Min and max of an index tensor, on its own device."""
    if not int(np.prod(array.shape)):
        return None
    return int(array.min()), int(array.max())


class Function:
    """One TC def: call it on arrays, inspect its IR at any stage."""

    def __init__(self, ir: DefIR, autotune: str | None = None):
        self.definition = definition = ir.definition
        self._ir = ir
        self.autotune = autotune
        """"quick": a first call with new shapes and no options tunes briefly
        (`QUICK_TUNING`) where the cache holds no measurements of them."""
        self._compiled: dict[tuple[Any, ...], _Entry] = {}
        self._launchers: dict[MappingOptions | None, dict[tuple[Any, ...], Callable[..., Any]]] = {}
        """Options (None: the default), then argument types, shapes and dtypes ->
        the whole of a call on the GPU (`CudaProgram.launcher`): a call with
        nothing but arrays (and options) looks here first."""
        self._size_scalars = {
            k for k, p in enumerate(definition.inputs) if p.name in definition.scalar_size_params
        }
        self._scalars = {k for k, p in enumerate(definition.inputs) if p.is_scalar}
        self._gradient: str | None = None
        self._typed: dict[str, Function] = {}
        self._indirect = any(
            gathers(stmt.rhs) or (stmt.scatter_target is not None and gathers(stmt.scatter_target))
            for stmt in definition.stmts
        )

    @property
    def name(self) -> str:
        return self.definition.name

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.definition.inputs)
        outputs = ", ".join(p.name for p in self.definition.outputs)
        return f"<tcir def {self.name}({params}) -> ({outputs})>"

    @property
    def def_ir(self) -> DefIR:
        """The checked def and its `tc` module, as the compile layer takes them."""
        return self._ir

    def gradient(self) -> str:
        """The backward def, derived by reverse-mode differentiation, as TC
        source a person can read, check and edit (`tcir.frontend.gradient`):
        `def <name>_grad(<inputs>, <the gradient d_O of each output>) -> (<the
        gradient d_X of each floating-point tensor input>)`, what
        `tcir.torch.operator(..., backward=)` takes. A `TCError` names a
        statement that cannot be differentiated and why."""
        if self._gradient is None:
            from tcir.frontend.gradient import gradient_source

            self._gradient = gradient_source(self.definition)
        return self._gradient

    @property
    def float_type(self) -> str | None:
        """The one floating-point type of the def's tensors and scalars, or
        None if it has none or mixes several."""
        types = {p.dtype for p in (*self.definition.inputs, *self.definition.outputs) if p.dtype.startswith("float")}
        return types.pop() if len(types) == 1 else None

    def astype(self, dtype: Any) -> Function:
        """This def with its floating-point values of type `dtype` ("float64",
        or a numpy or torch dtype): a def written with `float` run on doubles.
        The def itself if that is its type already (see `float_type`)."""
        try:
            target = np.dtype(dtype if isinstance(dtype, type) else str(dtype).removeprefix("torch.")).name
        except TypeError:
            target = str(dtype)
        source = self.float_type
        if target not in ("float16", "bfloat16", "float32", "float64"):
            raise TCError(f"{self.name}: astype takes a floating-point type, got {dtype}")
        if source is None:
            raise TCError(f"{self.name}: astype needs a def of one floating-point type")
        if target == source:
            return self
        if target not in self._typed:
            from tcir.frontend.retype import retyped

            self._typed[target] = Function(DefIR.of(retyped(self.definition, source, target)))
        return self._typed[target]

    @staticmethod
    def resolve_backend(backend: str | None, args: tuple[Any, ...]) -> str:
        """`backend`, or the default for these arguments: cuda when they live on a GPU."""
        return resolve_backend(backend, args)

    @staticmethod
    def _check_options(options: Any) -> MappingOptions | None:
        if options is not None and not isinstance(options, MappingOptions):
            raise TCError(f"options must be a tcir.MappingOptions, got {type(options).__name__}")
        return options

    def lowered(self, binding: Binding, options: MappingOptions | None, backend: str) -> ModuleOp:
        """This def lowered for `binding`: loops (CPU) or kernels (CUDA)."""
        return self._ir.lowered(binding, options, backend)

    def _compile(self, binding: Binding, options: MappingOptions | None, backend: str) -> Callable[..., None]:
        """Compiled code for `binding`: from the persistent compilation cache,
        or compiled and stored there."""
        from tcir.compiler.compiled import compile_cached

        return compile_cached(self._ir, binding, options, backend)

    def tune(self, *args: Any, **knobs: Any) -> MappingOptions:
        """Autotune for these arguments' shapes (genetic search, see
        `tcir.tuner.tune.tune` for the knobs: candidates, population, timeout,
        backend, ...); the best options go to the compilation cache, and later
        calls with these shapes use them."""
        from tcir.tuner.tune import tune

        best = tune(self._ir, *args, **knobs)
        self._compiled.clear()
        self._launchers.clear()
        return best

    def __call__(
        self,
        *args: Any,
        backend: str | None = None,
        options: Any = None,
        outputs: Any = None,
        out: Any = None,
        **unknown: Any,
    ) -> Any:
        """Run the def on `args`. `outputs=` (or `out=`, as in PyTorch) gives
        the arrays to write the outputs into, in place: one array, or one per
        output in order, of the outputs' shapes and dtypes, C-contiguous, on
        the backend's device; they are returned."""
        if unknown:
            check_keywords(f"{self.name}()", unknown, ("backend", "options", "outputs", "out"))
        if self._launchers and backend is None and (outputs is None or out is None):
            given = _as_tuple(out if outputs is None else outputs)
            try:
                launcher = self._launchers[options].get(_launch_key((*args, *given) if given else args))
            except (AttributeError, KeyError, TypeError):  # not all arrays, new options: checked below
                launcher = None
            if launcher is not None:  # a GPU call with the signature of an earlier one
                return launcher(args, given) if given else launcher(args)
        check_pending()
        if out is not None:
            if outputs is not None:
                raise TCError(f"{self.name}: give outputs= or out=, not both")
            outputs = out
        if self._scalars:
            args = tuple(scalar_value(a) if k in self._scalars else a for k, a in enumerate(args))
        default_backend = backend is None
        backend = self.resolve_backend(backend, args)
        options = requested = self._check_options(options)
        key = (backend, None if options is None else options.key, self._signature(args))
        entry = self._compiled.get(key)
        if entry is None:  # first call with these shapes: check everything, compile
            if backend == "cuda":  # no cupy or no GPU: say so first, once
                from tcir.backends.cuda.runtime import current_device

                current_device()
            binding = bind(self.definition, args)
            if options is None:  # tuned options for these shapes, if any
                from tcir.compiler.compiled import best_options, measured_before

                options = best_options(self.definition, binding, backend)
                if options is None and self.autotune == "quick" and not measured_before(
                    self.definition, binding, backend
                ):
                    options = self.tune(*args, backend=backend, **QUICK_TUNING)
            kernel = self._compile(binding, options, backend)
            host = getattr(kernel, "host", None)  # the GPU backends' host program
            error = host.empty_dimension_error(args) if host is not None else None
            if error is not None:
                raise error
            specs = self._output_specs(binding)
            launching = _gpu_launching(specs, args) if backend == "cuda" else (None, None)
            entry = self._compiled[key] = _Entry(kernel, binding, specs, *launching)
        if self._indirect and backend == "cpu":  # GPU kernels check on the device (check.index)
            binding = Binding(entry.binding.sizes, args)
            IndexChecker(self.definition, binding, _value_range).check()
        originals = list(_as_tuple(outputs))
        given = self._given_outputs(originals, entry, backend) if originals else None
        if backend == "cuda" and default_backend and not self._scalars:
            self._remember_launcher(entry, requested, args, tuple(originals))
        if backend in ("cpu", "cuda-sim"):
            tensors = [_is_torch(a) for a in args]
            arrays = [
                np.ascontiguousarray(to_numpy(a) if tensor else a) if hasattr(a, "shape") else a
                for a, tensor in zip(args, tensors)
            ]
            buffers = given or [_allocate(np, *spec) for spec in entry.outputs]
            if backend == "cpu":
                entry.kernel(*arrays, *buffers)
            else:  # the simulator checks that no uninitialized output is read
                undefined = [len(args) + k for k, (_, _, zero) in enumerate(entry.outputs) if not zero]
                entry.kernel(*arrays, *buffers, undefined=undefined)
            if given:
                return self._result(originals)
            if any(tensors):  # torch tensors in, torch tensors out (sharing the buffers)
                buffers = [_torch_view(b) for b in buffers]
            return self._result(buffers)
        assert entry.allocate is not None
        buffers = given or entry.allocate()
        entry.kernel(*args, *buffers, stream=entry.stream() if entry.stream is not None else None)
        return self._result(originals if given else buffers)

    def _given_outputs(self, given: list[Any], entry: _Entry, backend: str) -> list[Any]:
        """The arrays of `outputs=`, checked, as the backend's kernels take them
        (cupy views of GPU tensors); outputs accumulated into are zeroed."""
        names = [p.name for p in self.definition.outputs]
        if len(given) != len(names):
            raise ShapeError(f"{self.name}: outputs= needs {len(names)} arrays ({', '.join(names)}), got {len(given)}")
        arrays = []
        for name, array, (shape, dtype, zero) in zip(names, given, entry.outputs):
            what = f"output '{name}' of {self.name}"
            if not hasattr(array, "shape") or not hasattr(array, "dtype"):
                raise ShapeError(f"{what} must be an array, got {type(array).__name__}")
            if tuple(array.shape) != shape:
                raise ShapeError(f"{what} must have shape {shape}, got {tuple(array.shape)}")
            if np.dtype(str(array.dtype).removeprefix("torch.")) != np.dtype(dtype):
                raise ShapeError(f"{what} must have dtype {np.dtype(dtype)}, got {array.dtype}")
            if on_gpu(array) != (backend == "cuda"):
                where = "a GPU array" if backend == "cuda" else "a numpy array"
                raise ShapeError(f"{what} must be {where} for backend '{backend}'")
            if backend != "cuda" and _is_torch(array):  # written through a numpy view
                array = to_numpy(array)
            if backend == "cuda":
                from tcir.backends.cuda.runtime import cupy_module, is_torch_tensor

                if not is_torch_tensor(array):  # torch tensors go to the kernels as they are
                    cupy = cupy_module()
                    shared = hasattr(array, "__cuda_array_interface__")
                    array = cupy.asarray(array) if shared else cupy.from_dlpack(array)  # no copy
            contiguous = array.is_contiguous() if hasattr(array, "is_contiguous") else array.flags.c_contiguous
            if not contiguous:
                raise ShapeError(f"{what} must be C-contiguous (it is written in place)")
            if backend != "cuda" and not array.flags.writeable:
                raise ShapeError(f"{what} is read-only")
            if zero:
                array.zero_() if hasattr(array, "zero_") else array.fill(0)
            arrays.append(array)
        return arrays

    def _remember_launcher(
        self, entry: _Entry, options: MappingOptions | None, args: tuple[Any, ...], given: tuple[Any, ...]
    ) -> None:
        """Keep the whole of this call (`CudaProgram.launcher`) for later calls
        with the same options (None: none given) and argument (and `outputs=`)
        types, shapes and strides."""
        key = _launch_key((*args, *given))
        launchers = self._launchers.setdefault(options, {})
        if key not in launchers:
            assert entry.allocate is not None
            zeroed = [k for k, (_, _, zero) in enumerate(entry.outputs) if zero]
            launcher = entry.kernel.launcher(  # type: ignore[attr-defined]
                entry.allocate, entry.stream, single=len(entry.outputs) == 1, args=args,
                outputs=given or None, zeroed=zeroed,
            )
            if launcher is not None:
                launchers[key] = launcher

    def _signature(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """What a compiled kernel depends on: shapes, dtypes, integer sizes."""
        return tuple(
            (tuple(a.shape), a.dtype)
            if hasattr(a, "shape")
            else (type(a), a if k in self._size_scalars else None)
            for k, a in enumerate(args)
        )

    def _output_specs(self, binding: Binding) -> list[tuple[tuple[int, ...], Any, bool]]:
        """(shape, dtype, starts at zero) of each output for `binding`."""
        specs = []
        for output in self.definition.outputs:
            first = next(s for s in self.definition.stmts if s.lhs == output.name)
            zero = first.op != "=" and not first.initializes  # accumulates into zeros
            shape = binding.shape(self.definition, output)
            specs.append((shape, NUMPY_DTYPES[output.dtype], zero))
        return specs

    @staticmethod
    def _result(outputs: list[Any]) -> Any:
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def ir(
        self,
        *args: Any,
        backend: str = "cpu",
        until: str | None = None,
        options: Any = None,
        **unknown: Any,
    ) -> str:
        """The IR for a call on `args` (numpy arrays are enough for shapes):
        after pass `until`, or the final code (LLVM IR for the CPU, CUDA C;
        for `cuda-sim`, the gpu-level IR that the simulated GPU runs)."""
        check_keywords(f"{self.name}.ir()", unknown, ("backend", "until", "options"))
        backend = self.resolve_backend(backend, args)
        options = self._check_options(options)
        binding = bind(self.definition, args)
        module = self._ir.module.clone()
        passes = pipeline(self._ir, binding, options, backend)
        if backend == "cpu":
            passes = f"{passes},{CPU_LOWERING_PIPELINE}"
        if until is not None:
            pm = PassManager.parse(passes)
            names = [p.name for p in pm.passes]
            if until not in names:
                raise TCError(f"unknown pass '{until}' (passes: {', '.join(names)})")
            pm.passes = pm.passes[: names.index(until) + 1]
            return print_ir(pm.run(module))
        return final_code(self.lowered(binding, options, backend), backend)


class Module:
    """The defs of a TC source, as attributes (`mod.mm`) or items (`mod["2LUT"]`)."""

    def __init__(self, source: str, filename: str = "<string>", autotune: str | None = None):
        if autotune not in AUTOTUNE_MODES:
            raise TCError(f"define: autotune must be one of {', '.join(map(repr, AUTOTUNE_MODES))}, got {autotune!r}")
        self.definitions = parse_tc(source, filename)
        self._functions = {d.name: Function(DefIR.of(d), autotune) for d in self.definitions}

    def __getattr__(self, name: str) -> Function:
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"no def named '{name}' (defs: {', '.join(functions)})")

    def __getitem__(self, name: str) -> Function:
        if name not in self._functions:
            raise TCError(f"no def named '{name}' (defs: {', '.join(self._functions)})")
        return self._functions[name]

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._functions]

    @property
    def names(self) -> list[str]:
        return list(self._functions)


def define(source: str, filename: str = "<string>", *, autotune: str | None = None) -> Module:
    """Parse and check every def of TC `source`; raises `tcir.TCError` subclasses.

    `autotune="quick"`: as Triton's `@autotune`, the first call of a def with
    new shapes and no `options=` (where the compilation cache holds no
    measurements of them) measures a few candidates first, the default
    mapping among them, in parallel processes, and uses and caches the
    fastest."""
    return Module(source, filename, autotune)
