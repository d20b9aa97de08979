"""The user API: `tcir.define(source)` and the callable defs it returns.

    mod = tcir.define(TC_SOURCE)
    C = mod.mm(A, B)                  # specialize, compile (cached), run
    text = mod.mm.ir(A, B, until="convert-tc-to-loops")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tcir.dialects.tc import DefOp
from tcir.errors import TCError
from tcir.frontend import CheckedDef, Param
from tcir.frontend import parse as parse_tc
from tcir.frontend.emit import emit_def, libm_declarations
from tcir.passmanager import PassManager, print_ir
from tcir.runtime.index_check import IndexChecker
from tcir.runtime.signature import NUMPY_DTYPES, Binding, bind
from tcir.tuner.options import MappingOptions

BACKENDS = ("cpu",)

uninitialized = np.empty
"""Allocates outputs that the def fully writes (tests poison them instead)."""


def loop_pipeline(binding: Binding, options: MappingOptions | None) -> str:
    """Down to loops: the canonical reference lowering, or the polyhedral
    pipeline of `options` (sizes are always specialized for the CPU JIT)."""
    sizes = ",".join(f"{name}={value}" for name, value in binding.sizes.items())
    specialize = f'tc-specialize{{sizes="{sizes}"}}'
    if options is None:
        return f"{specialize},convert-tc-to-loops"
    return ",".join([specialize, *options.schedule_passes(), "convert-poly-to-loops"])


def _numpy_range(array: Any) -> tuple[int, int] | None:
    return (int(array.min()), int(array.max())) if array.size else None


class Function:
    """One TC def: call it on arrays, inspect its IR at any stage."""

    def __init__(self, definition: CheckedDef, module: ModuleOp):
        self.definition = definition
        self._module = module
        self._compiled: dict[tuple[Any, ...], Callable[..., None]] = {}

    @property
    def name(self) -> str:
        return self.definition.name

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.definition.inputs)
        outputs = ", ".join(p.name for p in self.definition.outputs)
        return f"<tcir def {self.name}({params}) -> ({outputs})>"

    def _backend(self, backend: str | None) -> str:
        backend = backend or "cpu"
        if backend not in BACKENDS:
            raise TCError(
                f"unknown backend '{backend}' (available: {', '.join(BACKENDS)})"
            )
        return backend

    def _check_options(self, options: Any) -> MappingOptions | None:
        if options is not None and not isinstance(options, MappingOptions):
            raise TCError(
                f"options must be a tcir.MappingOptions, got {type(options).__name__}"
            )
        return options

    def loops(self, binding: Binding, options: MappingOptions | None) -> ModuleOp:
        """The loop-level module of this def for `binding` and `options`."""
        module = self._module.clone()
        PassManager.parse(loop_pipeline(binding, options)).run(module)
        return module

    def __call__(self, *args: Any, backend: str | None = None, options: Any = None) -> Any:
        self._backend(backend)
        options = self._check_options(options)
        binding = bind(self.definition, args)
        IndexChecker(self.definition, binding, _numpy_range).check()
        key = (
            binding.key,
            tuple(getattr(a, "dtype", type(a)) for a in args),
            None if options is None else options.to_json(),
        )
        kernel = self._compiled.get(key)
        if kernel is None:
            from tcir.backends.cpu.jit import compile_module

            kernel = compile_module(self.loops(binding, options)).function(self.name)
            self._compiled[key] = kernel
        outputs = [
            self._allocate(p, binding.shape(self.definition, p))
            for p in self.definition.outputs
        ]
        arrays = [
            np.ascontiguousarray(a) if hasattr(a, "shape") else a for a in args
        ]
        kernel(*arrays, *outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _allocate(self, output: Param, shape: tuple[int, ...]) -> np.ndarray:
        """Outputs start as zeros when a statement accumulates into them first."""
        first = next(s for s in self.definition.stmts if s.lhs == output.name)
        accumulates = first.reduces and not first.initializes
        make = np.zeros if accumulates else uninitialized
        return make(shape, NUMPY_DTYPES[output.dtype])

    def ir(
        self,
        *args: Any,
        backend: str = "cpu",
        until: str | None = None,
        options: Any = None,
    ) -> str:
        """The IR for a call on `args`: after pass `until`, or the final code
        (LLVM IR for the CPU)."""
        self._backend(backend)
        options = self._check_options(options)
        binding = bind(self.definition, args)
        module = self._module.clone()
        from tcir.backends.cpu.pipeline import CPU_LOWERING_PIPELINE

        pipeline = f"{loop_pipeline(binding, options)},{CPU_LOWERING_PIPELINE}"
        if until is not None:
            pm = PassManager.parse(pipeline)
            names = [p.name for p in pm.passes]
            if until not in names:
                raise TCError(f"unknown pass '{until}' (passes: {', '.join(names)})")
            pm.passes = pm.passes[: names.index(until) + 1]
            return print_ir(pm.run(module))
        from tcir.backends.cpu.jit import translate_to_llvm_ir

        return translate_to_llvm_ir(self.loops(binding, options))


class Module:
    """The defs of a TC source, as attributes (`mod.mm`) or items (`mod["2LUT"]`)."""

    def __init__(self, source: str, filename: str = "<string>"):
        self.definitions = parse_tc(source, filename)
        self._functions: dict[str, Function] = {}
        for definition in self.definitions:
            libm: set[Any] = set()
            tc_def: DefOp = emit_def(definition, libm)
            module = ModuleOp([*libm_declarations(libm), tc_def])
            self._functions[definition.name] = Function(definition, module)

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


def define(source: str, filename: str = "<string>") -> Module:
    """Parse and check every def of TC `source`; raises `tcir.TCError` subclasses."""
    return Module(source, filename)
