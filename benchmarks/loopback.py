"""Tools for attacking and measuring a dashboard on loopback, shared by the probe, the load benchmark and the tests.

- :func:`image_config` (from :mod:`hosting`, which ``python -m hosting`` runs): the Docker image's environment
  and command, read from the Dockerfile, so that hosted-mode tests and benchmarks run the image's own recipe;
- :func:`start_server` / :func:`stop_server`: ``streamlit run`` on a free loopback port;
- :class:`FakeScheduler`: a loopback socket that only counts connections;
- :func:`cpu_seconds`, :func:`rss_mb`, :func:`seconds_until_quiet`: a server process tree's use of the machine;
- :class:`HealthProbe`: the health endpoint's latency, probed from a process of its own (a client that floods the
  server from this process would otherwise delay its own probes).

Nothing here listens or connects beyond 127.0.0.1, and every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

from hosting import image_config  # noqa: F401  (the Dockerfile's reader, shared with `python -m hosting`)

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def image_environment(cache: str | os.PathLike) -> dict[str, str]:
    """This process's environment with the image's on top; only this machine's folders replace the image's."""
    image_env, _ = image_config()
    return dict(os.environ, **dict(image_env, DPBO_CACHE_DIR=str(cache),
                                   DPBO_DATA_DIR=os.environ.get("DPBO_DATA_DIR", image_env["DPBO_DATA_DIR"])))


def start_server(command: list[str], env: dict[str, str], log, cwd: Path = ROOT,
                 timeout: float = 90) -> tuple[subprocess.Popen, str]:
    """Run ``command`` (``streamlit run ...``) on a free loopback port and wait for its health check.

    The command's own address and port options are replaced by 127.0.0.1 and a free port. Returns
    (process, base URL); raises RuntimeError (after stopping it) when it does not start.
    """
    port = free_port()
    options = {"--server.address": "127.0.0.1", "--server.port": str(port)}
    argv = [sys.executable, "-m"] + [part for part in command if part.split("=", 1)[0] not in options]
    argv += [f"{name}={value}" for name, value in options.items()]
    # A process group of its own (its id is the server's pid): stop_server ends every process the server
    # started, also the walled workers a forkserver forks after the server was asked to stop.
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    stop_server(proc)
    raise RuntimeError("the dashboard did not start")


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server and everything it started."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)     # the server's group (see start_server), by the server's pid
    except (ProcessLookupError, PermissionError):
        pass


class FakeScheduler:
    """A loopback socket that only counts who connects (it never answers, so nothing could be unpickled)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()

    def __enter__(self) -> "FakeScheduler":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root] + root.children(recursive=True)
    except psutil.Error:
        return []


def cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by the process ``pid`` and its children."""
    total = 0.0
    for proc in tree(pid):
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def rss_mb(pid: int) -> float:
    """Resident memory of the process ``pid`` and its children, in MB."""
    total = 0
    for proc in tree(pid):
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def seconds_until_quiet(pid: int, limit: float = 20.0, window: float = 0.2, windows: int = 3,
                        busy: float = 0.2) -> float:
    """From now until the tree's CPU use stays below ``busy`` cores for ``windows`` windows in a row
    (measured to the start of the first quiet window); ``inf`` when not within ``limit`` seconds."""
    start = time.perf_counter()
    last, since, quiet = cpu_seconds(pid), None, 0
    while time.perf_counter() - start < limit:
        time.sleep(window)
        now = cpu_seconds(pid)
        if (now - last) / window < busy:
            since = time.perf_counter() - window if quiet == 0 else since
            quiet += 1
            if quiet >= windows:
                return since - start
        else:
            quiet = 0
        last = now
    return float("inf")


PROBE = """
import sys, time, urllib.request
url, every, timeout = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
while True:
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=timeout) as response:
            response.read()
        print(time.perf_counter() - started, flush=True)
    except OSError:
        print("inf", flush=True)
    time.sleep(max(0.0, every - (time.perf_counter() - started)))
"""


class HealthProbe:
    """``/_stcore/health`` probed every ``every`` seconds (``timeout``: the Dockerfile's 5 s) by a process of its own
    while the block runs; ``latencies`` after it (inf: no answer within the timeout). Stopped by its pid."""

    def __init__(self, url: str, every: float = 0.25, timeout: float = 5.0):
        self.url, self.every, self.timeout = url, every, timeout
        self.latencies: list[float] = []

    def __enter__(self) -> "HealthProbe":
        self.proc = subprocess.Popen([sys.executable, "-c", PROBE, self.url, str(self.every), str(self.timeout)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=self.timeout + 5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.latencies = [float(line) for line in out.split()]
