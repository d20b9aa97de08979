"""C identifiers for SSA values: name hints where present, `v<n>` otherwise."""

from __future__ import annotations

import re

from xdsl.ir import SSAValue

#: C++ keywords, CUDA built-in variables and names the emitted code relies on.
RESERVED = frozenset(
    """
    alignas alignof and asm auto bool break case catch char char16_t char32_t class
    const constexpr const_cast continue decltype default delete do double dynamic_cast
    else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not nullptr operator or private protected public
    register reinterpret_cast return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor
    threadIdx blockIdx blockDim gridDim warpSize half min max abs
    """.split()
)

_INVALID = re.compile(r"[^A-Za-z0-9_]")


def sanitize(hint: str) -> str:
    """A C identifier close to `hint` (may still be reserved; see `NameTable`)."""
    name = _INVALID.sub("_", hint).lstrip("_")
    if not name:
        return "v"
    if name[0].isdigit():
        name = "v" + name
    return name


class NameTable:
    """Unique C identifiers for the values of one kernel.

    Reserved words, `tc_` helper names and names already taken get a numeric
    suffix (`i`, `i_1`, ...). Several values may share one variable (`alias`),
    as loop-carried values do.
    """

    def __init__(self) -> None:
        self._names: dict[SSAValue, str] = {}
        self._taken: set[str] = set()
        self._counter = 0

    def fresh(self, base: str) -> str:
        """Reserve and return a new identifier derived from `base`."""
        base = sanitize(base)
        if base in RESERVED or base.startswith("tc_") or "__" in base:
            base += "_"
        name, n = base, 0
        while name in self._taken:
            n += 1
            name = f"{base}_{n}" if not base.endswith("_") else f"{base}{n}"
        self._taken.add(name)
        return name

    def declare(self, value: SSAValue) -> str:
        """Give `value` a new identifier (from its name hint, else `v<n>`)."""
        if value.name_hint is not None:
            name = self.fresh(value.name_hint)
        else:
            name = self.fresh(f"v{self._counter}")
            self._counter += 1
        self._names[value] = name
        return name

    def alias(self, value: SSAValue, name: str) -> None:
        """Make `value` live in the existing variable `name`."""
        self._names[value] = name

    def __contains__(self, value: SSAValue) -> bool:
        return value in self._names

    def __getitem__(self, value: SSAValue) -> str:
        return self._names[value]
