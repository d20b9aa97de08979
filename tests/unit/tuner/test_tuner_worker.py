"""Worker processes: answers, errors, crashes and timeouts never reach the tuner."""

from __future__ import annotations

import functools
import os
import time
from multiprocessing.connection import wait

from tcir.tuner.worker import Worker


def _reply(worker: Worker) -> tuple[str, object]:
    while True:
        wait([worker.connection], max(0.0, worker.deadline - time.monotonic()))
        message = worker.receive()
        if message is not None:
            return message


def _started(handler) -> Worker:
    worker = Worker("test", functools.partial, (handler,), startup_timeout=60)
    assert _reply(worker) == ("ready", None)
    worker.ready = True
    return worker


def test_answers_and_errors():
    worker = _started(abs)
    try:
        worker.submit("job", -3, timeout=30)
        assert _reply(worker) == ("ok", 3)
        worker.submit("job", "x", timeout=30)
        kind, why = _reply(worker)
        assert kind == "error" and why.startswith("TypeError: bad operand")
    finally:
        worker.stop()
    assert worker.process.returncode == 0


def test_crash_is_reported_and_worker_restarts():
    worker = _started(os._exit)
    try:
        worker.submit("job", 3, timeout=30)
        kind, why = _reply(worker)
        assert kind == "died" and "exit code 3" in why
        worker.restart()
        assert _reply(worker) == ("ready", None)
    finally:
        worker.stop()


def test_late_job_is_reported_and_killed():
    worker = _started(time.sleep)
    try:
        worker.submit("job", 60, timeout=0.5)
        begin = time.monotonic()
        assert _reply(worker) == ("late", None)
        assert time.monotonic() - begin < 5
    finally:
        worker.stop(graceful=False)
    assert worker.process.returncode is not None
