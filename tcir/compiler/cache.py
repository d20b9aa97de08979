"""The persistent compilation cache: generated code and every measurement, in SQLite.

One database file (`$TCIR_CACHE_DIR/tcir-cache.sqlite3`, by default
`~/.cache/tcir/`) with two tables, as in the paper's section 5.1:

- `kernels`: generated code (an artifact's JSON: LLVM IR with its object code
  and shared library, or CUDA C with its host program and cubin) keyed by the
  problem (canonical TC, input shapes and dtypes, target architecture) and
  the options JSON, so no process compiles the same version twice;
- `measurements`: every profiled (problem, options, seconds) — or the reason a
  candidate failed — for later searches and for the best options of a problem.

Trust: generated code is native code that calls load, so the cache only
runs code that this user's tcir wrote. The directory is created private
(0700) and the database file 0600 (SQLite gives its WAL files the same mode);
when the directory or file is writable by anyone but their owner, or owned by
another user, `get_code` ignores the code there (with a warning) and it is
rebuilt. An export (`export_json`) holds options and measurements only, never
code, and `import_json` brings in nothing else: a shared tuning file cannot
run code on the importer's machine, and imported options are validated.

Writes are transactions; the database runs in WAL mode with a busy timeout,
so concurrent tuners on one machine serialize instead of corrupting it. Every
row carries `version` (the schema and tcir versions) and a checksum of its
contents: a row of another version is ignored (and its code rebuilt and
replaced), a row whose checksum or JSON does not hold is deleted; neither is
trusted. A file that is not a sound database of this schema is renamed aside
and replaced by a fresh one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import math
import os
import sqlite3
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcir.errors import TCError
from tcir.compiler.artifacts import Artifact, artifact_from_json
from tcir.compiler.canonical import ProblemKey
from tcir.compiler.options import MappingOptions

if TYPE_CHECKING:
    from typing_extensions import Self

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
FILE_NAME = "tcir-cache.sqlite3"
BUSY_TIMEOUT_S = 30.0
EXPORT_FORMAT = "tcir-cache-export"


def _package_version() -> str:
    try:
        return metadata.version("tcir")
    except metadata.PackageNotFoundError:
        return "dev"


def _source_stamp() -> str:
    """A digest of the compiler's own files (names, sizes, modification
    times): code built by an edited tcir of the same version is not reused.
    (Reading the files would cost more than a whole cache hit may.)"""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        status = path.stat()
        digest.update(f"{path.relative_to(root)}:{status.st_size}:{status.st_mtime_ns};".encode())
    return digest.hexdigest()[:12]


VERSION = f"{SCHEMA_VERSION}/{_package_version()}/{_source_stamp()}"
"""Rows written by another schema, tcir version or tcir build are not trusted."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kernels (
    key TEXT PRIMARY KEY,
    problem TEXT NOT NULL,
    tc TEXT NOT NULL,
    shapes TEXT NOT NULL,
    target TEXT NOT NULL,
    options TEXT NOT NULL,
    code TEXT NOT NULL,
    version TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    problem TEXT NOT NULL,
    family TEXT NOT NULL,
    tc TEXT NOT NULL,
    shapes TEXT NOT NULL,
    target TEXT NOT NULL,
    options TEXT NOT NULL,
    seconds REAL,
    error TEXT,
    version TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS measurements_problem ON measurements (problem, seconds);
CREATE INDEX IF NOT EXISTS measurements_family ON measurements (family);
"""

_KERNEL_COLUMNS = ("key", "problem", "tc", "shapes", "target", "options", "code", "version")
_MEASUREMENT_COLUMNS = (
    "problem",
    "family",
    "tc",
    "shapes",
    "target",
    "options",
    "seconds",
    "error",
    "version",
)


def default_cache_dir() -> Path:
    """`$TCIR_CACHE_DIR`, else `~/.cache/tcir`."""
    configured = os.environ.get("TCIR_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "tcir"


def _checksum(values: tuple[Any, ...]) -> str:
    return hashlib.sha256(json.dumps(values).encode()).hexdigest()


class CompilationCache:
    """The cache database at `directory / FILE_NAME` (created on first use)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.path = Path(directory if directory is not None else default_cache_dir()) / FILE_NAME
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"CompilationCache({str(self.path.parent)!r})"

    # --- connection -------------------------------------------------------

    @property
    def connection(self) -> sqlite3.Connection:
        """This thread's open connection (SQLite connections do not cross
        threads or forks); opens, and if need be repairs, the database."""
        if getattr(self._local, "pid", None) != os.getpid():
            self._local.connection, self._local.pid = None, os.getpid()
        if self._local.connection is None:
            try:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                # Created private, and the file before SQLite opens it: its
                # journal files take its mode.
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            except OSError as e:
                raise TCError(f"compilation cache: cannot create {self.path}: {e}") from None
            self._local.connection = self._open_or_repair()
        return self._local.connection

    def _open_or_repair(self) -> sqlite3.Connection:
        """Open the database under a lock file, setting an unusable one aside
        and opening a fresh one. The lock serializes first opens, threads
        included: SQLite's switch to WAL mode on a new file does not wait on
        its busy handler, so two concurrent first opens could fail with
        'database is locked'; and concurrent processes repair once."""
        try:
            lock_fd = os.open(f"{self.path}.lock", os.O_CREAT | os.O_WRONLY, 0o600)
        except OSError as e:
            raise TCError(f"compilation cache: cannot create {self.path}.lock: {e}") from None
        with os.fdopen(lock_fd, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return self._open()  # another process may have repaired it
            except sqlite3.OperationalError:  # locked, unreadable: not corrupt
                raise
            except sqlite3.DatabaseError as e:
                self._set_aside(str(e))
                return self._open()

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("integrity check failed")
            if not self._is_current(connection):  # a new database, or one to check
                with self._write(connection):
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            connection.execute(statement)
                    row = connection.execute(
                        "SELECT value FROM meta WHERE name = 'schema'"
                    ).fetchone()
                    if row is None:
                        connection.execute(
                            "INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                        )
                    elif row[0] != str(SCHEMA_VERSION):
                        raise sqlite3.DatabaseError(f"foreign schema version {row[0]}")
        except BaseException:
            connection.close()
            raise
        return connection

    @staticmethod
    def _is_current(connection: sqlite3.Connection) -> bool:
        """Whether the database has this schema's tables and version: then
        opening it writes nothing (and waits for no concurrent writer)."""
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {name for (name,) in rows}
        if not {"meta", "kernels", "measurements"} <= tables:
            return False
        row = connection.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        return row is not None and row[0] == str(SCHEMA_VERSION)

    def _set_aside(self, reason: str) -> None:
        """Rename an unusable database file (and its WAL files) out of the way."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        log.warning(
            "compilation cache %s is unusable (%s); starting a fresh one", self.path, reason
        )
        for suffix in ("", "-wal", "-shm"):
            path = Path(f"{self.path}{suffix}")
            if path.exists():
                path.replace(f"{self.path}.corrupt-{stamp}-{os.getpid()}{suffix}")

    @staticmethod
    @contextmanager
    def _write(connection: sqlite3.Connection) -> Iterator[None]:
        """A write transaction, taken up front so concurrent writers queue."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (a later use opens a new one)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            connection.close()
        self._local.connection = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- generated code ---------------------------------------------------

    def untrusted(self) -> str | None:
        """Why code from this cache must not be loaded (None: it may): the
        directory or file belongs to another user or others may write it."""
        user = os.getuid()
        for path in (self.path.parent, self.path):
            try:
                status = path.stat()
            except OSError:
                continue
            if status.st_uid != user:
                return f"{path} belongs to another user (uid {status.st_uid})"
            if status.st_mode & 0o022:
                return f"{path} is writable by others (mode {status.st_mode & 0o777:o})"
        return None

    def get_code(self, problem: ProblemKey, options: MappingOptions | None) -> Artifact | None:
        """The cached code of `problem` compiled with `options`, if sound (an
        entry of another version is ignored; a corrupted one is deleted) and
        the cache is trusted (`untrusted`: else a warning, and None)."""
        reason = self.untrusted()
        if reason is not None:
            _warn_once(f"compilation cache: not loading code from {self.path}: {reason}; rebuilding")
            return None
        key = problem.kernel_digest(_options_json(options))
        row = self.connection.execute(
            f"SELECT {', '.join(_KERNEL_COLUMNS)}, checksum FROM kernels WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        *values, checksum = row
        entry = dict(zip(_KERNEL_COLUMNS, values))
        if entry["version"] != VERSION:
            return None
        try:
            if checksum != _checksum(tuple(values)):
                raise ValueError("checksum mismatch")
            return artifact_from_json(json.loads(entry["code"]))
        except (ValueError, KeyError, TypeError) as e:
            log.warning("compilation cache: dropping corrupted kernel entry %s: %s", key[:12], e)
            self.drop_code(problem, options)
            return None

    def drop_code(self, problem: ProblemKey, options: MappingOptions | None) -> None:
        """Delete the code of `problem` with `options` (e.g. when it fails to load)."""
        key = problem.kernel_digest(_options_json(options))
        with self._write(self.connection):
            self.connection.execute("DELETE FROM kernels WHERE key = ?", (key,))

    def put_code(
        self, problem: ProblemKey, options: MappingOptions | None, artifact: Artifact
    ) -> None:
        """Store (or replace) the code of `problem` with `options`."""
        options_json = _options_json(options)
        values = (
            problem.kernel_digest(options_json),
            problem.digest,
            problem.tc,
            problem.shapes,
            problem.target,
            options_json,
            json.dumps(artifact.to_json()),
            VERSION,
        )
        self._insert_kernel(values)

    def _insert_kernel(self, values: tuple[Any, ...]) -> None:
        with self._write(self.connection):
            self.connection.execute(
                f"INSERT OR REPLACE INTO kernels ({', '.join(_KERNEL_COLUMNS)}, checksum, created) "
                f"VALUES ({', '.join('?' * len(_KERNEL_COLUMNS))}, ?, ?)",
                (*values, _checksum(values), time.time()),
            )

    # --- measurements -----------------------------------------------------

    def record(
        self,
        problem: ProblemKey,
        options: MappingOptions | None,
        seconds: float | None,
        error: str | None = None,
    ) -> None:
        """Store one measurement: `seconds`, or None and why the candidate
        failed; options None is the backend's default lowering (what a call
        without options runs: on the CPU, the canonical loops)."""
        if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
            seconds, error = None, error or f"invalid time {seconds}"
        values = (
            problem.digest,
            problem.tc_digest,
            problem.tc,
            problem.shapes,
            problem.target,
            _options_json(options),
            seconds,
            error,
            VERSION,
        )
        self._insert_measurements([values])

    def _insert_measurements(self, rows: list[tuple[Any, ...]]) -> None:
        """Insert `rows` of `_MEASUREMENT_COLUMNS` in one transaction: all or none."""
        now = time.time()
        with self._write(self.connection):
            self.connection.executemany(
                f"INSERT INTO measurements ({', '.join(_MEASUREMENT_COLUMNS)}, checksum, created) "
                f"VALUES ({', '.join('?' * len(_MEASUREMENT_COLUMNS))}, ?, ?)",
                [(*values, _checksum(values), now) for values in rows],
            )

    def _sound_measurements(self, where: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        """Measurements of this version matching `where`, as dicts of
        `_MEASUREMENT_COLUMNS`; those whose checksum fails are deleted."""
        rows = self.connection.execute(
            f"SELECT {', '.join(_MEASUREMENT_COLUMNS)}, checksum, id FROM measurements "
            f"WHERE version = ? AND {where}",
            (VERSION, *args),
        ).fetchall()
        sound: list[dict[str, Any]] = []
        bad: list[int] = []
        for *values, checksum, row_id in rows:
            row = dict(zip(_MEASUREMENT_COLUMNS, values))
            if checksum == _checksum(tuple(values)):
                sound.append(row)
            else:
                bad.append(row_id)
        if bad:
            log.warning("compilation cache: dropping %d corrupted measurements", len(bad))
            with self._write(self.connection):
                self.connection.executemany(
                    "DELETE FROM measurements WHERE id = ?", [(i,) for i in bad]
                )
        return sound

    def measurements(
        self, problem: ProblemKey
    ) -> list[tuple[MappingOptions, float | None, str | None]]:
        """Every sound measurement of `problem` with options: (options,
        seconds or None, error); those of the default lowering are left out."""
        return [
            (options, seconds, error)
            for options, seconds, error in self._measured(problem)
            if options is not None
        ]

    def _measured(
        self, problem: ProblemKey
    ) -> list[tuple[MappingOptions | None, float | None, str | None]]:
        """Every sound measurement of `problem`, the default lowering's (options None) too."""
        result = []
        for row in self._sound_measurements("problem = ?", (problem.digest,)):
            if row["options"] == "null":
                result.append((None, row["seconds"], row["error"]))
                continue
            options = _parse_options(row["options"])
            if options is not None:
                result.append((options, row["seconds"], row["error"]))
        return result

    def best(self, problem: ProblemKey) -> tuple[MappingOptions, float] | None:
        """The fastest measured options of `problem` by the median of their
        measurements, and that time, if any (the tuner times its best and the
        default again: one lucky measurement does not make a best); None also
        where the default lowering (measured as options None) is faster than
        all of them, so that calls keep it."""
        timed: dict[str, tuple[MappingOptions | None, list[float]]] = {}
        for options, seconds, _ in self._measured(problem):
            if seconds is not None:
                timed.setdefault(_options_json(options), (options, []))[1].append(seconds)
        ranked = [(options, statistics.median(times)) for options, times in timed.values()]
        if not ranked:
            return None
        options, seconds = min(ranked, key=lambda m: m[1])
        return None if options is None else (options, seconds)

    def similar(self, problem: ProblemKey, limit: int = 4) -> list[MappingOptions]:
        """The best options of the same TC on the same target for other
        shapes, nearest total size first (seeds for a new search)."""
        best: dict[str, tuple[MappingOptions, float, str]] = {}
        where = "family = ? AND problem != ? AND seconds IS NOT NULL"
        for row in self._sound_measurements(where, (problem.tc_digest, problem.digest)):
            options = None if row["options"] == "null" else _parse_options(row["options"])
            digest, seconds = row["problem"], row["seconds"]
            if options is not None and (digest not in best or seconds < best[digest][1]):
                best[digest] = (options, seconds, row["shapes"])
        size = _volume(problem.shapes)
        ranked = sorted(best.values(), key=lambda b: abs(math.log(_volume(b[2]) / size)))
        return [options for options, _, _ in ranked[:limit]]

    # --- inspection (tcir-cache) ------------------------------------------

    def problems(self) -> dict[ProblemKey, int]:
        """Every problem with sound measurements or stored code of this
        version, with how many compiled versions of it are stored."""
        found: dict[ProblemKey, int] = {}
        for row in self._sound_measurements("1", ()):
            found.setdefault(ProblemKey(row["tc"], row["shapes"], row["target"]), 0)
        rows = self.connection.execute(
            "SELECT tc, shapes, target, COUNT(*) FROM kernels WHERE version = ? "
            "GROUP BY problem, tc, shapes, target",
            (VERSION,),
        )
        for tc, shapes, target, count in rows:
            found[ProblemKey(tc, shapes, target)] = count
        return found

    def foreign_rows(self) -> int:
        """How many rows another tcir version or build wrote (ignored; `clear` deletes them)."""
        return sum(
            self.connection.execute(
                f"SELECT COUNT(*) FROM {table} WHERE version != ?", (VERSION,)
            ).fetchone()[0]
            for table in ("kernels", "measurements")
        )

    def clear(self, tc: str | None = None) -> int:
        """Delete every row, of any version (only those of canonical TC `tc`,
        if given); returns how many were deleted."""
        where, args = ("tc = ?", (tc,)) if tc is not None else ("1", ())
        with self._write(self.connection):
            return sum(
                self.connection.execute(f"DELETE FROM {table} WHERE {where}", args).rowcount
                for table in ("kernels", "measurements")
            )

    # --- export / import --------------------------------------------------

    def export_json(self) -> str:
        """Every sound measurement of this version (options, time or failure)
        as a JSON document; code is never exported."""
        document = {
            "format": EXPORT_FORMAT,
            "version": VERSION,
            "measurements": self._sound_measurements("1", ()),
        }
        return json.dumps(document, indent=1)

    def import_json(self, text: str) -> int:
        """Add the measurements of an `export_json` document; returns how many
        were added. Code in the document is ignored (it is rebuilt locally from
        the TC when used); entries of another version, whose digests do not
        match their problem, or with unusable options are skipped. A document
        that is not an export, or an entry of this version that is malformed,
        raises TCError naming it, and nothing is added."""
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as e:  # ValueError: e.g. a 5000-digit number
            raise TCError(f"compilation cache: invalid export JSON: {e}") from None
        if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
            raise TCError("compilation cache: not a tcir cache export")
        if document.get("kernels"):
            log.warning("compilation cache: ignoring the code in an export (it is rebuilt locally)")
        measurements = document.get("measurements")
        if not isinstance(measurements, list):
            raise TCError("compilation cache: 'measurements' of an export must be a list")
        rows = []
        for number, entry in enumerate(measurements, 1):
            try:
                values = _measurement_row(entry)
            except TCError as e:
                raise TCError(f"compilation cache: measurement {number} of the export: {e.message}") from None
            if values is not None and (entry["options"] == "null" or _parse_options(entry["options"]) is not None):
                rows.append(values)
        if rows:
            self._insert_measurements(rows)
        return len(rows)


def _options_json(options: MappingOptions | None) -> str:
    return "null" if options is None else options.to_json()


def _parse_options(text: str) -> MappingOptions | None:
    try:
        return MappingOptions.from_json(text)
    except TCError as e:
        log.warning("compilation cache: ignoring unusable options %.80s: %s", text, e)
        return None


def _volume(shapes: str) -> float:
    """The total input size of a problem's `shapes` JSON (at least 1)."""
    total = 1.0
    for shape, _ in json.loads(shapes)["inputs"]:
        total += math.prod(shape)
    return total


def _measurement_row(entry: Any) -> tuple[Any, ...] | None:
    """An exported measurement as a row of `_MEASUREMENT_COLUMNS`; None if it
    is of another version (whose schema may differ) or its digests do not
    match its problem. Raises TCError saying what is wrong with a malformed one."""
    if not isinstance(entry, dict):
        raise TCError(f"not an object but {_shown(entry)}")
    if not isinstance(entry.get("version"), str):
        raise TCError(f"'version' must be a string, not {_shown(entry.get('version'))}")
    if entry["version"] != VERSION:
        return None
    missing = [c for c in _MEASUREMENT_COLUMNS if c not in entry]
    unknown = sorted(set(entry) - set(_MEASUREMENT_COLUMNS))
    if missing or unknown:
        raise TCError(f"missing keys {missing}" if missing else f"unknown keys {unknown}")
    for name in ("problem", "family", "tc", "shapes", "target", "options"):
        if not isinstance(entry[name], str):
            raise TCError(f"'{name}' must be a string, not {_shown(entry[name])}")
    seconds, error = entry["seconds"], entry["error"]
    if seconds is not None:
        try:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise ValueError
            seconds = float(seconds)  # as SQLite stores it, and the checksum must see it
            if not (math.isfinite(seconds) and seconds >= 0):
                raise ValueError
        except (ValueError, OverflowError):
            raise TCError(
                f"'seconds' must be a non-negative number or null, not {_shown(entry['seconds'])}"
            ) from None
    if error is not None and not isinstance(error, str):
        raise TCError(f"'error' must be a string or null, not {_shown(error)}")
    if not _sound_shapes(entry["shapes"]):
        raise TCError(f"'shapes' is not a problem's shapes: {_shown(entry['shapes'])}")
    problem = ProblemKey(entry["tc"], entry["shapes"], entry["target"])
    if entry["problem"] != problem.digest or entry["family"] != problem.tc_digest:
        log.warning("compilation cache: skipping an imported measurement of mismatched digests")
        return None
    return tuple(seconds if c == "seconds" else entry[c] for c in _MEASUREMENT_COLUMNS)


def _sound_shapes(text: str) -> bool:
    """Whether `text` is a `ProblemKey.shapes` JSON: sizes and (shape, dtype) inputs."""
    try:
        shapes = json.loads(text)
    except (ValueError, RecursionError):
        return False

    def naturals(values: Any) -> bool:
        return isinstance(values, list) and all(
            type(v) is int and v >= 0 for v in values  # not bool
        )

    return (
        isinstance(shapes, dict)
        and set(shapes) == {"sizes", "inputs"}
        and naturals(shapes["sizes"])
        and isinstance(shapes["inputs"], list)
        and all(
            isinstance(i, list) and len(i) == 2 and naturals(i[0]) and isinstance(i[1], str)
            for i in shapes["inputs"]
        )
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)
