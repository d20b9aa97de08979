"""CPU reference backend: `llvm`-dialect IR -> llvmlite JIT. (The compile
layer lowers loop-level IR to the `llvm` dialect: `tcir.compiler.lowering`.)

- `jit`: `compile_module(module, signatures) -> CompiledModule`, `translate_to_llvm_ir(module)`.
- `runtime`: numpy/ctypes calling convention of compiled functions.
- `llvm_conversion`, `llvm_ext`: helpers of the `*-to-llvm` passes in
  `tcir/transforms/`, and the LLVM casts that xDSL lacks.

Nothing is imported here, so that importing a pass stays cheap.
"""
