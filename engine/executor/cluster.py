"""The Dask backend: tasks on a running scheduler's workers, or on a loopback cluster this process starts.

Workers must be able to ``import engine`` (the same project on their
``PYTHONPATH``) and read their own data and cache folders
(``DPBO_DATA_DIR``, ``DPBO_CACHE_DIR`` in the workers' environment); tasks
travel by reference to engine functions and return plain data.

Stopping is the same as on the local pool: the driver waits in slices with a
cancel checkpoint between them, and closing the stream cancels the tasks not
started and sets a ``distributed.Event`` that every running task watches (a
thread on the worker looks at it every :data:`WATCH_SECONDS` and cancels the
task's :class:`engine.cancel.CancelToken`, so its next checkpoint ends it).

A Dask scheduler runs whatever code it is sent: only the host names one
(``--scheduler`` on the command line, ``DPBO_DASK_SCHEDULER`` for a server);
no page, link or setting can. Its TLS settings are Dask's own
(``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``), read
by every client this module opens; docs/hosting.md has the recipe.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
import uuid
from typing import Callable, Iterator

from engine.cancel import CancelToken, cancellable, checkpoint
from engine.executor.tasks import Finished, as_task, main_script_hidden, timed_call
from engine.validation import ConfigError

POLL_SECONDS = 0.2          # longest wait for a task between two cancel checkpoints
WATCH_SECONDS = 0.25        # how often a running task looks whether its run was stopped
CONNECT_TIMEOUT = "15s"
SCHEMES = ("tcp://", "tls://")

_CLIENTS: dict = {}
_LOCK = threading.Lock()


def check_address(address: str) -> str:
    """``address`` if it is a scheduler address (``tcp://host:port`` or ``tls://host:port``), else a sentence."""
    address = str(address).strip()
    if not address.startswith(SCHEMES) or ":" not in address.split("://", 1)[1]:
        raise ConfigError(f"Give the scheduler address as tcp://host:port (or tls://host:port), got {address!r}.",
                          "scheduler")
    return address


# Dask's own settings a client of a tls:// scheduler needs (distributed.comm.tls.*), as environment variables.
TLS_SETTINGS = ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT",
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY")


def check_tls(address: str):
    """Dask's ``Security`` for a client of ``address``: None for tcp://; for tls://, the client's certificate
    settings, checked (one sentence when they are missing or cannot be read, instead of Dask's traceback)."""
    if not address.startswith("tls://"):
        return None
    from distributed.security import Security

    security = Security()
    if not (security.tls_ca_file and security.tls_client_cert):
        raise ConfigError(f"The scheduler {address} speaks TLS, and this machine has no client certificate for it: "
                          f"set {', '.join(TLS_SETTINGS[:2])} and {TLS_SETTINGS[2]} (docs/hosting.md, "
                          "'A Dask cluster for the explorer').", "scheduler")
    try:
        security.get_connection_args("client")
    except (OSError, ssl.SSLError, ValueError) as err:
        raise ConfigError(f"The client certificate settings for {address} could not be read ({_describe(err)}).",
                          "scheduler") from None
    return security


def _describe(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def client_for(address: str):
    """This process's client of the scheduler at ``address`` (opened once, reopened when it was closed)."""
    address = check_address(address)
    with _LOCK:
        client = _CLIENTS.get(address)
        if client is None or client.status not in ("running", "connecting"):
            try:
                from distributed import Client
            except ImportError:  # pragma: no cover - dask[distributed] is a requirement
                raise ConfigError("The Dask executor needs dask[distributed]: pip install 'dask[distributed]'.",
                                  "scheduler") from None
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False, security=check_tls(address))
            except (OSError, TimeoutError) as err:
                raise ConfigError(f"Could not reach the Dask scheduler at {address} ({_describe(err)}).",
                                  "scheduler") from None
            _CLIENTS[address] = client
        return client


def close_clients() -> None:
    """Close every client :func:`client_for` opened (a server shutting down, a cluster stopped under them)."""
    with _LOCK:
        clients = list(_CLIENTS.values())
        _CLIENTS.clear()
    for client in clients:
        try:
            client.close(timeout=5)
        except Exception:  # noqa: BLE001 - already closed, or its scheduler gone
            pass


def loopback_cluster(workers: int):
    """A new Dask cluster of ``workers`` single-threaded processes on 127.0.0.1, no dashboard: ``(client, cluster)``."""
    from distributed import Client, LocalCluster

    with main_script_hidden():
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                               processes=True, silence_logs=logging.ERROR)
    return Client(cluster, set_as_default=False), cluster


def on_worker(fn: Callable, args: tuple, stop: str):
    """On a Dask worker: ``fn(*args)`` under a cancel token that the run's Event ``stop`` cancels."""
    from distributed import Event, get_client

    # The worker's client, taken in the task's thread: the watching thread could not find it by itself.
    token, finished, event = CancelToken(), threading.Event(), Event(stop, client=get_client())

    def watch() -> None:
        while not finished.wait(WATCH_SECONDS):
            try:
                if event.is_set():
                    token.cancel()
                    return
            except Exception:  # noqa: BLE001 - the scheduler went away: the worker's own end stops the task
                return

    threading.Thread(target=watch, name="dpbo-stop-watch", daemon=True).start()
    try:
        with cancellable(token), as_task():
            return timed_call(fn, *args)
    finally:
        finished.set()


def stream(fn: Callable, tasks: list, *, address: str | None = None, workers: int = 1, client=None,
           label: str = "task") -> Iterator[Finished]:
    """``fn(*args)`` of every ``(key, args)`` in ``tasks`` on the cluster, as they finish.

    ``client`` (an open client) or ``address`` (a scheduler) or, with neither, a loopback cluster of
    ``workers`` processes that lives as long as the stream.
    """
    from distributed import Event, as_completed

    own_client = own_cluster = None
    if client is None:
        if address:
            client = client_for(address)
        else:
            own_client, own_cluster = loopback_cluster(workers)
            client = own_client
    run = f"dpbo-{label}-{uuid.uuid4().hex[:12]}"
    stop = run + "-stop"
    futures = {client.submit(on_worker, fn, args, stop, key=f"{run}-{index}", pure=False): key
               for index, (key, args) in enumerate(tasks)}
    try:
        ready = as_completed(futures, loop=client.loop)
        while not ready.is_empty():
            checkpoint()
            batch = ready.next_batch(block=False)
            if not batch:
                time.sleep(POLL_SECONDS)
                continue
            for future in batch:
                key = futures[future]
                try:
                    value, cpu = future.result()
                except Exception as err:  # noqa: BLE001 - e.g. KilledWorker: the caller decides
                    yield Finished(key, None, err)
                else:
                    yield Finished(key, value, None, cpu)
                future.release()
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            try:
                Event(stop, client=client).set()
                client.cancel(pending)
            except Exception:  # noqa: BLE001 - the scheduler is gone: nothing left to stop
                pass
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
