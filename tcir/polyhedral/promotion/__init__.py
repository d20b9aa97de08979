"""Memory promotion: array tiles, reference groups, copies (`poly-promote`).

- `affine`: isl quasi-affine functions as xDSL affine expressions;
- `tiles`: the fixed-size (possibly strided) box covering a footprint;
- `references`: the tensor accesses of statements and their grouping;
- `copies`: copy statements and the schedule subtrees running them;
- `promote`: the promotion heuristic on a mapped schedule tree.
"""
