"""Running independent tasks on Dask distributed, for `burstgate sweep` and `burstgate fleet`.

With no address an embedded LocalCluster is started on this machine: one single-threaded worker
*process* per core (the tasks are burstgate-sim subprocesses; processes keep a slow task's Python
side from holding the others' GIL), its scheduler and workers listening on loopback only, no
dashboard. With an address (``tcp://HOST:8786``) the tasks go to that cluster's workers
(docs/distributed.md). ``workers=0`` runs the tasks in this process, one after another: the
serial reference the tests compare a cluster's result with.

Every task's result comes back, in task order: a task that raised, or whose worker died, gives an
``Failure`` carrying the exception's text, never a missing row.
"""

import dataclasses
import os
import sys
import time


@dataclasses.dataclass
class Failure:
    error: str


def _progress(done, total, failed, start, stream):
    if stream is None:
        return
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.monotonic() - start, 1e-9)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} tasks"
                 f"{f', {failed} failed' if failed else ''} ({rate:.1f}/s)")
    if done == total:
        stream.write("\n")
    stream.flush()


def run_tasks(func, args_list, address=None, workers=None, progress=True, priorities=None):
    """``[func(*args) or Failure for args in args_list]``, on the engine the arguments name.

    ``func`` must be importable by the workers (a module-level function of the burstgate package).
    ``priorities`` (one number per task, e.g. its expected length) makes the cluster start the
    highest first: a long task started last would hold one worker while the others idle.
    Returns (results, info): info says how the tasks ran: workers, wall_s (all of it), startup_s
    (starting or joining the cluster), tasks_s (from the first submission to the last result)."""
    stream = sys.stderr if progress else None
    total = len(args_list)
    start = time.monotonic()
    results = [None] * total
    failed = 0
    if workers == 0 and address is None:
        _progress(0, total, 0, start, stream)
        for i, args in enumerate(args_list):
            try:
                results[i] = func(*args)
            except Exception as exc:  # noqa: BLE001 - a task's failure is a result, reported with its task
                results[i] = Failure(f"{type(exc).__name__}: {exc}")
                failed += 1
            _progress(i + 1, total, failed, start, stream)
        wall = time.monotonic() - start
        return results, {"workers": 0, "wall_s": wall, "tasks_s": wall, "startup_s": 0.0}

    # Imported here: the serial path and the commands' --help need no Dask.
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if address is None:
        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0", silence_logs=50)
        client = Client(cluster)
    else:
        client = Client(address, timeout="30s")
    try:
        if address is None:
            client.wait_for_workers(n)
        nworkers = len(client.scheduler_info().get("workers", {}))
        submitted = time.monotonic()
        _progress(0, total, 0, start, stream)
        prio = priorities or [0] * total
        futures = {client.submit(func, *args, pure=False, key=f"task-{i}", priority=prio[i]): i
                   for i, args in enumerate(args_list)}
        done = 0
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - includes a worker lost mid-task (KilledWorker)
                results[i] = Failure(f"{type(exc).__name__}: {exc}")
                failed += 1
            done += 1
            _progress(done, total, failed, start, stream)
        end = time.monotonic()
        return results, {"workers": nworkers, "wall_s": end - start, "tasks_s": end - submitted,
                         "startup_s": submitted - start}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
