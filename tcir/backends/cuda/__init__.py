"""CUDA backend: gpu-level IR -> CUDA C -> NVRTC (through cupy) -> launches.

- `printer`: `print_cuda(module) -> str`, the CUDA C of every `gpu.func` kernel.
- `launch`: `extract_host_program(module)` / `extract_launches(module)`, what the
  host function launches (`HostProgram`, `KernelLaunch`), as data.
- `runtime`: `compile_module(module) -> CudaProgram`, callable on GPU arrays;
  `cuda_available()`. cupy is imported lazily.
- `target`: `CudaTarget`, the `cuda` target of `tcir-opt -t` / `tcir-translate`.
- `scalar_types`, `naming`, `helpers`: C types, identifiers, device helpers.

Nothing is imported here, so that importing a submodule stays cheap.
"""
