"""The simulated GPU: the CUDA backend's kernels run on the CPU, checked.

`backend="cuda-sim"` lowers a def exactly as `backend="cuda"` does (the same
pipeline, the same `gpu.func` kernels and host launches) and runs the result
without a GPU: blocks in a seeded random order, the threads of a wave in
lockstep, every load and store checked. Faults raise `tcir.KernelFault`
naming the kernel, the array, the index and the two threads or blocks:

- a data race: two threads of a block touch one element, one writing,
  between the same two barriers (shared or global memory);
- a conflict between blocks: an element one block writes is written or read
  by another block of the same launch (no atomics are generated);
- a divergent barrier: a `gpu.barrier` reached by some threads of a block only;
- an out-of-bounds access to any array (global, shared, private);
- a read of shared or private memory (or of a temporary) before any write.

- `runtime`: `SimProgram(module, host_program)`, callable on numpy arrays.
- `translate`: a `gpu.func` as a vectorized Python function (`translate_kernel`).
- `launch`, `memory`, `values`: the launch state, checked buffers, arithmetic.

Nothing is imported here, so that importing a submodule stays cheap.
"""
