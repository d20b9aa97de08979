"""The autotuner: search spaces, searches, parallel checked evaluation.

`space` (admissible values per problem), `genetic` and `tpe` (steady-state
search strategies), `evaluate`, `executors` and `jobs` (parallel compile,
checked profiling), `tune` (the tuner). It sits above the compile layer (`tcir.compiler`) and never imports
the user API (`tcir.api`).
"""
