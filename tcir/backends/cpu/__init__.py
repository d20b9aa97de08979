"""CPU reference backend: loop-level IR -> `llvm` dialect -> llvmlite JIT.

- `pipeline`: `CPU_LOWERING_PIPELINE`, `lower_to_llvm_dialect(module)`.
- `jit`: `compile_module(module) -> CompiledModule`, `translate_to_llvm_ir(module)`.
- `runtime`: numpy/ctypes calling convention of compiled functions.
- `target`: `CpuLLVMTarget`, the `llvm` target for `tcir-translate`.
- `llvm_conversion`, `llvm_ext`: helpers of the `*-to-llvm` passes in
  `tcir/transforms/`, and the LLVM casts that xDSL lacks.

Nothing is imported here, so that importing a pass stays cheap.
"""
