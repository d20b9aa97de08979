"""Mapping options, the autotuner and the persistent compilation cache.

`options` (MappingOptions), `space` (admissible values per problem), `genetic`
(search strategies), `evaluate` and `worker` (parallel compile, checked
profiling), `artifacts` (generated code as data), `canonical` and `cache`
(keys and the SQLite cache), `tune` (the tuner, `best_options`,
`compile_cached`).
"""
