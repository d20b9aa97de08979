"""Where the tuner's jobs run: local process pools, or a Dask cluster.

Both give `concurrent.futures` futures, so one scheduling loop
(`tcir.tuner.evaluate.Evaluator`) drives either:

- `LocalExecutors`: a pebble process pool compiles on every core; one
  single-process pool per GPU (or one for the CPU) profiles, so a crashing
  kernel takes down a worker, never the tuner. A profile worker ends itself
  when a kernel runs far longer than the best (`jobs.profile_candidate`'s
  `exit_when_slow`); while its pool starts a new one, a warm standby pool
  takes the device's jobs (made at the first such exit, then the two
  alternate). Inputs from `jobs.SPILL_BYTES` reach the profile workers as
  .npy files they map, not through the pipe that starts them. Workers are
  spawned, never forked (a parent that touched CUDA cannot fork workers that
  use it; spawn re-imports the caller's main module, so a tuning script
  guards its entry point with `if __name__ == "__main__":`, as for any
  process pool).
- `DaskExecutors`: compile jobs go to the workers of a `distributed.Client`
  with a `CPU` resource (any worker where none has one); profile jobs for
  CUDA go to workers with a `GPU` resource (dask-cuda's
  `LocalCUDACluster` gives one worker per GPU: `--resources GPU=1`). The
  problem and the benchmark are scattered to the workers once. Profile jobs
  run to their end there (a worker that ended itself would have Dask retry
  the job elsewhere).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future
from typing import Any, Protocol

from tcir.errors import TCError
from tcir.tuner.jobs import (
    Benchmark,
    compile_candidate,
    install,
    profile_candidate,
    spill,
    warm_profiler,
)

CONNECT_TIMEOUT_S = 10.0
"""How long to try to reach a Dask scheduler."""


class Executors(Protocol):
    """Runs compile and profile jobs of one problem; futures of their results."""

    compile_slots: int
    """Compile jobs to keep running at once."""
    devices: int
    """Profile jobs to keep running at once (one per device)."""

    def compile(self, options_json: str) -> Future[dict[str, Any]]: ...

    def profile(self, device: int, artifact_json: dict[str, Any], cutoff: float) -> Future[float]: ...

    def close(self) -> None:
        """Release the workers; running jobs end (a second call does nothing)."""
        ...


def usable_cores() -> int:
    """Cores this process may run on (its affinity: `taskset`, a container's
    cpuset), not every core of the host as `os.cpu_count()` counts."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class LocalExecutors:
    """Pebble pools on this host (see the module docstring)."""

    def __init__(self, benchmark: Benchmark, *, workers: int | None = None, devices: int = 1):
        from pebble import ProcessPool

        self._context = multiprocessing.get_context("spawn")
        self.problem = benchmark.problem
        # Inputs from `SPILL_BYTES` wait for the profile workers in a folder, as files.
        self.benchmark, self._inputs_folder = spill(benchmark)
        self.compile_slots = max(1, workers or usable_cores())
        self.devices = devices
        self._compilers = ProcessPool(
            self.compile_slots, initializer=install, initargs=(self.problem,), context=self._context
        )
        self._profilers = [self._profile_pool(device) for device in range(devices)]
        self._standbys: list[Any] = [None] * devices
        """Each device's second profile pool, made when a job first ends a worker."""
        self._last: list[Future[float] | None] = [None] * devices

    def _profile_pool(self, device: int) -> Any:
        from pebble import ProcessPool

        pool = ProcessPool(1, initializer=install, initargs=(self.benchmark,), context=self._context)
        pool.schedule(warm_profiler, (self.benchmark.token, device))
        return pool

    def compile(self, options_json: str) -> Future[dict[str, Any]]:
        return self._compilers.schedule(compile_candidate, (self.problem.token, options_json))

    def profile(self, device: int, artifact_json: dict[str, Any], cutoff: float) -> Future[float]:
        last = self._last[device]
        if last is not None and last.done() and _ended_worker(last):
            self._take_standby(device)
        future = self._profilers[device].schedule(
            profile_candidate, (self.benchmark.token, device, artifact_json, cutoff, True)
        )
        self._last[device] = future
        return future

    def _take_standby(self, device: int) -> None:
        """The last profile job on `device` ended its worker: the standby pool
        takes the device's jobs while the other starts a new worker and warms it."""
        lost = self._profilers[device]
        self._profilers[device] = self._standbys[device] or self._profile_pool(device)
        self._standbys[device] = lost
        lost.schedule(warm_profiler, (self.benchmark.token, device))

    def close(self) -> None:
        """Stop the pools, ending their running jobs (again: nothing more).
        All are told first, then awaited: their workers end together (a GPU
        worker's end frees its context and its copy of the inputs)."""
        active = [p for p in (self._compilers, *self._profilers, *self._standbys) if p is not None and p.active]
        for pool in active:
            pool.stop()
        for pool in active:
            pool.join()
        if self._inputs_folder is not None:
            self._inputs_folder.cleanup()


def _ended_worker(future: Future[Any]) -> bool:
    """Whether a finished job ended its worker: it crashed, stopped a slow
    kernel, or was cancelled while running (pebble kills the worker; the
    evaluator starts a profile job only on a free device, so it was running)."""
    from pebble import ProcessExpired

    return future.cancelled() or isinstance(future.exception(), ProcessExpired)


class DaskExecutors:
    """Jobs on a Dask cluster (see the module docstring). Dask cannot kill a
    running task: a late one is cancelled and its result ignored."""

    def __init__(self, client: Any, benchmark: Benchmark):
        self.client = client
        self._problem = client.scatter(benchmark.problem, broadcast=True)
        self._benchmark = client.scatter(benchmark, broadcast=True)
        workers = client.scheduler_info(n_workers=-1)["workers"]
        # Where some workers hold a `CPU` resource (`dask_client("local")`
        # gives it to those without a GPU), compile jobs go to them only: a
        # GPU worker busy compiling would keep profile jobs waiting.
        compilers = [w for w in workers.values() if w.get("resources", {}).get("CPU")]
        self._compile_resources = {"CPU": 1} if compilers else None
        self.compile_slots = max(1, sum(w.get("nthreads", 1) for w in compilers or workers.values()))
        if benchmark.problem.backend == "cuda":
            gpus = sum(1 for w in workers.values() if w.get("resources", {}).get("GPU"))
            if gpus == 0:
                raise TCError("tuner: the Dask cluster has no worker with a GPU resource")
            self.devices, self._resources = gpus, {"GPU": 1}
        else:
            self.devices, self._resources = 1, None

    def compile(self, options_json: str) -> Future[dict[str, Any]]:
        return self._submit(compile_candidate, self._problem, options_json, resources=self._compile_resources)

    def profile(self, device: int, artifact_json: dict[str, Any], cutoff: float) -> Future[float]:
        # Each GPU worker sees its own GPU as device 0.
        return self._submit(
            profile_candidate, self._benchmark, 0, artifact_json, cutoff, resources=self._resources
        )

    def _submit(self, fn: Any, *args: Any, resources: dict[str, int] | None = None) -> Future[Any]:
        future = self.client.submit(fn, *args, pure=False, resources=resources)
        return _as_concurrent(future)

    def close(self) -> None:
        pass  # the caller owns the client


def _as_concurrent(dask_future: Any) -> Future[Any]:
    """A `concurrent.futures.Future` following `dask_future`; cancelling it
    cancels the Dask task."""
    result: Future[Any] = Future()

    def done(f: Any) -> None:
        if result.done():
            return
        if f.cancelled():
            result.cancel()
            return
        error = f.exception()
        if error is not None:
            result.set_exception(error)
        else:
            result.set_result(f.result())

    def cancelled(f: Future[Any]) -> None:
        if f.cancelled():
            dask_future.cancel()

    result.add_done_callback(cancelled)
    dask_future.add_done_callback(done)
    return result


def dask_client(address: str, gpus: int = 0) -> Any:
    """A `distributed.Client` for `address`, or for `local`: a cluster on this
    host of one single-threaded worker process per core (a `CPU` resource:
    they compile), plus one worker per GPU (`GPU` resource,
    `CUDA_VISIBLE_DEVICES` set to its GPU, as dask-cuda's workers are) when
    `gpus` > 0."""
    try:
        from distributed import Client, Nanny, Scheduler, SpecCluster
    except ImportError:
        raise TCError("tuner: a Dask cluster needs Dask: pip install 'tcir[cluster]'") from None
    if address != "local":
        try:
            return Client(address, timeout=CONNECT_TIMEOUT_S)
        except OSError as e:
            raise TCError(f"tuner: cannot connect to the Dask scheduler at {address}: {e}") from None
    cores = max(1, usable_cores() - gpus)
    workers: dict[str, dict[str, Any]] = {
        f"cpu-{k}": {"cls": Nanny, "options": {"nthreads": 1, "resources": {"CPU": 1}}} for k in range(cores)
    }
    for k in range(gpus):
        options = {"nthreads": 1, "resources": {"GPU": 1}, "env": {"CUDA_VISIBLE_DEVICES": str(k)}}
        workers[f"gpu-{k}"] = {"cls": Nanny, "options": options}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": ":0"}}
    return Client(SpecCluster(workers=workers, scheduler=scheduler, silence_logs=True))
