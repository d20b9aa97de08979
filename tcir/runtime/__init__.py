"""Calling TC defs on arrays: argument checking, size binding, compilation caches."""
