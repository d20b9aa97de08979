"""`tcir-cache list|show|export|import|clear`: inspect the compilation cache.

`list` prints a line per problem (a canonical TC with its input shapes, on a
target): its number and id, its signature with the sizes filled in, how many
measurements it has (and how many failed), the best time and how many
compiled versions of it are stored. `show N` (or an id prefix) prints one
problem's TC and its measurements, best first. `export [FILE]` writes every
measurement as JSON (never code), `import FILE` adds those of an export after
checking it (a malformed file adds nothing), `clear` deletes entries.

The cache is `--cache-dir`, else `$TCIR_CACHE_DIR` or `~/.cache/tcir`. It
stores canonical TCs (positional names), not def names, so `--file FILE
--entry NAME` picks the problems of one def (and of any def equal to it up to
names). Only entries of this tcir version and build are listed and exported.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

from tcir.compiler.cache import CompilationCache
from tcir.compiler.canonical import ProblemKey
from tcir.diagnostics import report_errors
from tcir.errors import TCError


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tcir-cache", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", help="compilation cache directory")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", parents=[common], help="a line per problem")
    show = commands.add_parser("show", parents=[common], help="one problem's measurements")
    show.add_argument("problem", help="a number from `list`, or a prefix of a problem id")
    show.add_argument("--limit", type=int, default=10, help="measurements shown (default 10)")
    export = commands.add_parser("export", parents=[common], help="measurements as JSON")
    export.add_argument("file", nargs="?", help="output file (default: stdout)")
    imports = commands.add_parser("import", parents=[common], help="add an export's measurements")
    imports.add_argument("file", help="a file written by `tcir-cache export`")
    clear = commands.add_parser("clear", parents=[common], help="delete entries")
    for command in (listing, clear):
        command.add_argument("--file", dest="source", help="TC source file of --entry")
        command.add_argument("--entry", help="only the problems of this def (with --file)")
    options = parser.parse_args(args)
    if (getattr(options, "entry", None) is None) != (getattr(options, "source", None) is None):
        parser.error("--entry and --file go together: the cache stores canonical TCs, not def names")
    with report_errors("tcir-cache"):
        with CompilationCache(options.cache_dir) as cache:
            return COMMANDS[options.command](cache, options)
    return 1


def _problems(cache: CompilationCache) -> list[tuple[ProblemKey, int]]:
    """The cache's problems with their stored code counts, in `list` order."""
    found = cache.problems()
    return sorted(
        found.items(), key=lambda p: (p[0].tc, p[0].target, json.loads(p[0].shapes)["sizes"])
    )


def _canonical(options: argparse.Namespace) -> str | None:
    """The canonical TC of `--file`'s def `--entry`, if given."""
    if options.source is None:
        return None
    import tcir
    from tcir.compiler.canonical import canonical_tc

    module = tcir.define(Path(options.source).read_text(), options.source)
    return canonical_tc(module[options.entry].definition)


def _signature(key: ProblemKey) -> str:
    """The canonical def's signature with its size symbols replaced by the values."""
    sizes = json.loads(key.shapes)["sizes"]

    def value(match: re.Match[str]) -> str:
        k = int(match[1])
        return str(sizes[k]) if k < len(sizes) else match[0]

    return re.sub(r"\bs(\d+)\b", value, key.tc.splitlines()[0].removeprefix("def"))


def _milliseconds(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.4f}"


def _table(rows: list[list[str]], right: set[int]) -> str:
    """`rows` as aligned columns (those in `right` right-aligned)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    )


def list_problems(cache: CompilationCache, options: argparse.Namespace) -> int:
    tc = _canonical(options)
    rows = [["#", "id", "signature", "runs", "failed", "best ms", "code", "target"]]
    for number, (key, code) in enumerate(_problems(cache), 1):
        if tc is not None and key.tc != tc:
            continue
        times = [t for _, t, _ in cache.measurements(key)]
        timed = [t for t in times if t is not None]
        best = min(timed) if timed else None
        rows.append([
            str(number), key.digest[:12], _signature(key), str(len(times)),
            str(len(times) - len(timed)), _milliseconds(best), str(code), key.target,
        ])  # fmt: skip
    if len(rows) == 1:
        print(f"no entries in {cache.path}")
    else:
        print(_table(rows, right={0, 3, 4, 5, 6}))
    foreign = cache.foreign_rows()
    if foreign:
        print(f"({foreign} entries of other tcir versions or builds are ignored; `clear` deletes them)")
    return 0


def _find(cache: CompilationCache, problem: str) -> tuple[ProblemKey, int]:
    """The problem numbered `problem` in `list`, or whose id starts with it."""
    problems = _problems(cache)
    if problem.isdigit() and 1 <= int(problem) <= len(problems):
        return problems[int(problem) - 1]
    matches = [p for p in problems if p[0].digest.startswith(problem.lower())]
    if len(matches) != 1:
        which = "no" if not matches else f"{len(matches)} problems match; no single"
        raise TCError(f"tcir-cache: {which} problem '{problem}' in {cache.path} (see tcir-cache list)")
    return matches[0]


def show_problem(cache: CompilationCache, options: argparse.Namespace) -> int:
    key, code = _find(cache, options.problem)
    measured = cache.measurements(key)
    ranked = sorted(measured, key=lambda m: (m[1] is None, m[1] or 0.0))
    failed = sum(seconds is None for _, seconds, _ in measured)
    print(f"problem {key.digest}")
    print(f"target: {key.target}")
    print(f"shapes: {key.shapes}")
    print(f"compiled versions stored: {code}")
    print(f"tc:\n{textwrap.indent(key.tc, '  ')}")
    print(f"measurements: {len(measured)} ({failed} failed), best first:")
    rows = [["ms", "options (error)"]]
    for mapping, seconds, error in ranked[: max(options.limit, 0)]:
        why = f"  error: {error}" if error else ""
        rows.append([_milliseconds(seconds), f"{mapping.to_json()}{why}"])
    if len(rows) > 1:
        print(textwrap.indent(_table(rows, right={0}), "  "))
    if len(ranked) > len(rows) - 1:
        print(f"  ... {len(ranked) - len(rows) + 1} more (--limit)")
    return 0


def export_measurements(cache: CompilationCache, options: argparse.Namespace) -> int:
    text = cache.export_json()
    if options.file is None:
        sys.stdout.write(text + "\n")
    else:
        Path(options.file).write_text(text + "\n")
        count = len(json.loads(text)["measurements"])
        print(f"exported {count} measurements to {options.file}")
    return 0


def import_measurements(cache: CompilationCache, options: argparse.Namespace) -> int:
    text = Path(options.file).read_text()
    try:
        added = cache.import_json(text)
    except TCError as e:
        raise TCError(f"tcir-cache: {options.file}: {e.message}; nothing imported") from None
    total = len(json.loads(text)["measurements"])
    print(f"imported {added} of {total} measurements from {options.file} into {cache.path}")
    if added < total:
        print("(skipped: of another tcir version or build, mismatched digests, or unusable options)")
    return 0


def clear_entries(cache: CompilationCache, options: argparse.Namespace) -> int:
    deleted = cache.clear(_canonical(options))
    print(f"deleted {deleted} entries from {cache.path}")
    return 0


COMMANDS: dict[str, Callable[[CompilationCache, argparse.Namespace], int]] = {
    "list": list_problems,
    "show": show_problem,
    "export": export_measurements,
    "import": import_measurements,
    "clear": clear_entries,
}


if __name__ == "__main__":
    sys.exit(main())
