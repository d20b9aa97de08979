"""Worker processes for the tuner: one job at a time, killable, crash-safe.

A worker is a fresh `python -m tcir.tuner.worker FD` process (not a
multiprocessing child: it must not re-run the user's main script) talking to
the tuner over a socket pair with pickled messages. The first message is the
handler factory and its arguments; the worker answers `("ready", None)` (or
`("fatal", why)`), then for each job `("ok", result)` or `("error", why)`.
It exits on `None` or when the tuner goes away.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

MESSAGE_LENGTH = 400


def describe(error: BaseException) -> str:
    """`Type: first line of the message`, bounded in length."""
    lines = str(error).strip().splitlines()
    message = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return message[:MESSAGE_LENGTH]


def serve(connection: Connection) -> None:
    """The worker's loop (see the module docstring)."""
    try:
        factory, args = connection.recv()
        handler: Callable[[Any], Any] = factory(*args)
    except (EOFError, OSError):
        return
    except BaseException as e:  # report why this worker cannot serve at all
        connection.send(("fatal", describe(e)))
        return
    connection.send(("ready", None))
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            reply: tuple[str, Any] = ("ok", handler(job))
        except Exception as e:  # a failing job fails its candidate only
            reply = ("error", describe(e))
        try:
            connection.send(reply)
        except OSError:
            return


class Worker:
    """A worker process serving `factory(*args)`, and the job it runs.

    `deadline` is when the current job (or the start-up) is late; `job` is
    the caller's record of what the worker runs, None when idle.
    """

    def __init__(
        self, name: str, factory: Callable[..., Any], args: tuple[Any, ...], startup_timeout: float
    ):
        self.name = name
        self.factory = factory
        self.args = args
        self.startup_timeout = startup_timeout
        self._start()

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tcir.tuner.worker", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path},
        )
        theirs.close()
        self.connection = Connection(ours.detach())
        self.connection.send((self.factory, self.args))
        self.ready = False
        self.job: Any = None
        self.deadline = time.monotonic() + self.startup_timeout

    @property
    def idle(self) -> bool:
        return self.ready and self.job is None

    def submit(self, job: Any, payload: Any, timeout: float) -> None:
        """Send `payload` to the worker; `job` is what it now runs."""
        self.connection.send(payload)
        self.job = job
        self.deadline = time.monotonic() + timeout

    def receive(self) -> tuple[str, Any] | None:
        """The worker's next message; ("late", None) past the deadline,
        ("died", why) if the process is gone; None while it is busy."""
        try:
            if self.connection.poll():
                return self.connection.recv()
        except (EOFError, OSError):
            try:
                code = self.process.wait(5.0)
            except subprocess.TimeoutExpired:
                code = None
            return ("died", f"worker crashed (exit code {code})")
        return None if time.monotonic() < self.deadline else ("late", None)

    def restart(self) -> None:
        """Kill this worker process (stuck or dead) and start a fresh one."""
        self.stop(graceful=False)
        self._start()

    def stop(self, graceful: bool = True) -> None:
        """End the process: ask it to exit, and kill it if it does not."""
        if graceful:
            try:
                self.connection.send(None)
                self.process.wait(2.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.connection.close()
        self.deadline = math.inf


def main() -> None:
    """Entry point of a worker process: serve on the inherited socket."""
    fd = int(sys.argv[1])
    serve(Connection(fd))


if __name__ == "__main__":
    main()
