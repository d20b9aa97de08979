"""The compile layer: what every call, the tuner and the tools compile through.

- `options`: `MappingOptions`, every knob of the polyhedral pipeline;
- `lowering`: a def's `tc` IR (`DefIR`), the pass pipeline that options and a
  backend stand for, and `StagedLowering`, which runs what does not depend on
  a candidate's options once per problem;
- `artifacts`: generated code as data (LLVM IR and object code, CUDA C and
  cubin, gpu-level IR for the simulator) that loads without the compiler;
- `canonical`, `cache`: problem keys and the persistent SQLite cache;
- `compiled`: compile through the cache (`compile_cached`, `best_options`).

Imports go one way: `tcir.api` (what users call) and `tcir.tuner` (search)
use this package; nothing here imports them.
"""
