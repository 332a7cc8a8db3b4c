"""Where an experiment's tasks run: local worker processes that exit with their parent,
and a Dask cluster's client (made from an address, or the caller's own)."""
from __future__ import annotations

import os
import time

#: Seconds to wait for a Dask scheduler to answer.
SCHEDULER_TIMEOUT = 10.0
#: Seconds between a local worker's checks that the process that started it
#: still runs: a worker whose parent died (even by SIGKILL) exits within this.
PARENT_POLL = 0.2


def _watch_parent(parent):
    """Initializer of a local worker: exit as soon as ``parent`` is gone.

    joblib's loky workers otherwise outlive a killed experiment (they wait for
    work for loky's idle timeout, 300 s). A daemon thread polls the parent pid
    every `PARENT_POLL` seconds; once the worker is re-parented, it exits.
    """
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name="fastnet-parent-watch", daemon=True).start()


def _dask_distributed():
    """dask.distributed, or an ImportError saying how to install it."""
    try:
        import dask.distributed
    except ImportError:
        raise ImportError("running on a Dask cluster needs dask.distributed: "
                          "pip install 'dask[distributed]'") from None
    return dask.distributed


def _client(scheduler):
    Client = _dask_distributed().Client
    if isinstance(scheduler, str):
        try:
            return Client(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=False), True
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"`scheduler`: could not reach a Dask scheduler at {scheduler!r} "
                                  f"within {SCHEDULER_TIMEOUT:g} s ({exc}).") from None
    if type(scheduler).__name__ != "Client":
        raise TypeError(f"`scheduler` must be an address such as 'tcp://host:8786' or a "
                        f"dask.distributed.Client, got {scheduler!r}.")
    return scheduler, False


def _check_address(scheduler):
    """A ValueError naming ``scheduler`` if it is no Dask address. (Checked before a
    Client is made: a Client that fails on its address is left half made, and its
    clean-up at exit waits 20 s.)"""
    _dask_distributed()
    from distributed.comm import parse_address, parse_host_port

    try:
        protocol, location = parse_address(scheduler)
        if protocol in ("tcp", "tls", "ucx"):
            parse_host_port(location)
    except ValueError as exc:
        raise ValueError(f"`scheduler` must be a Dask scheduler address such as "
                         f"'tcp://host:8786', got {scheduler!r} ({exc}).") from None


def joblib_backend(jobs, scheduler, n_tasks):
    """(name, joblib config, own Dask client or None): where ``n_tasks`` tasks run, for
    the experiments, the timing studies and the suites alike. A Dask cluster at
    ``scheduler`` (an address: a client made here, to be closed by the caller; or a
    Client); else no more local processes than tasks (a worker without a task only costs),
    ``jobs`` -1 for all cores, one: this process."""
    if scheduler is not None:
        client, own = _client(scheduler)
        return "dask", {"backend": "dask", "client": client, "n_jobs": -1}, (client if own else None)
    workers = max(1, min((os.cpu_count() or 1) if jobs == -1 else jobs, n_tasks))
    if workers == 1:
        return "sequential", {"backend": "sequential", "n_jobs": 1}, None
    # max_nbytes=None: the tasks are small, so no memory-mapped folder in /dev/shm
    # that a killed run would leave behind.
    return "loky", {"backend": "loky", "n_jobs": workers, "max_nbytes": None,
                    "initializer": _watch_parent, "initargs": (os.getpid(),)}, None
