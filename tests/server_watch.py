"""Playing a hosted server in this process, for the wall tests: pages opened as sessions (AppTest), the process's
resident memory sampled by pid while they run, and a second session's light page timed while heavy work computes.

Under AppTest every session's script runs in this process, as every visitor's does in the one Streamlit server,
and walled workers are this process's grandchildren (children of its forkserver), as they are the server's.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Callable

import psutil
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = {path.stem.split("_", 1)[1]: path for path in (ROOT / "pages").glob("[0-9]_*.py")}


def hosted(monkeypatch, memory_mb: float, seconds: float | None = None) -> None:
    """Hosting mode with heavy work in walled workers and the host's memory limit ``memory_mb``."""
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_RUN_WORKERS", "1")
    monkeypatch.setenv("DPBO_MAX_MEMORY_MB", f"{memory_mb:g}")
    if seconds is not None:
        monkeypatch.setenv("DPBO_MAX_SECONDS", f"{seconds:g}")


def wall_under_test(monkeypatch, memory_mb: float, *, margin_mb: float = 64, seconds: float | None = None) -> None:
    """Hosting mode where the wall, not the price, must stop a heavy request: a price with a blind spot
    (:func:`blind_price`), the host's limit ``memory_mb`` and a worker's margin above it of ``margin_mb``."""
    import engine.executor.walled

    hosted(monkeypatch, memory_mb, seconds)
    blind_price(monkeypatch)
    monkeypatch.setattr(engine.executor.walled, "MEMORY_MARGIN_MB", margin_mb)


def blind_price(monkeypatch) -> None:
    """Every price the server checks says yes: a cost model with a blind spot, so the wall is what stops a run."""
    import engine.limits
    import engine.limits.core
    import ui.kit.run_loop

    def accept(cost, *args, **kwargs):
        return cost

    for module in (engine.limits, engine.limits.core, ui.kit.run_loop):
        monkeypatch.setattr(module, "check", accept)


def page(name: str, query: dict[str, str] | None = None, timeout: float = 120) -> AppTest:
    """A new session on the page ``name`` (e.g. "Tradeoff_explorer"), opened with the link's ``query``."""
    at = AppTest.from_file(str(PAGES[name]), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at


def sentences(at: AppTest) -> list[str]:
    """The error and warning boxes a session shows."""
    return [box.value for box in at.error] + [box.value for box in at.warning]


class RssWatch:
    """The resident memory of process ``pid`` (default: this one, the server), sampled every ``every`` seconds.

    ``baseline`` is the size when the watch starts; ``peak`` the largest sample while it runs.
    """

    def __init__(self, pid: int | None = None, every: float = 0.02):
        self.process = psutil.Process(os.getpid() if pid is None else pid)
        self.every = every
        self.baseline = self.peak = self._mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-watch", daemon=True)

    def _mb(self) -> float:
        return self.process.memory_info().rss / 2**20

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self._mb())

    def __enter__(self) -> "RssWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2)
        self.peak = max(self.peak, self._mb())

    @property
    def grown_mb(self) -> float:
        return self.peak - self.baseline


def walled_workers() -> list[psutil.Process]:
    """Processes computing for this server in walled workers: the children of its forkserver, and only those (a
    process some earlier test left behind, or a server's own children, is not a walled worker)."""
    found = []
    try:
        for child in psutil.Process(os.getpid()).children():
            with contextlib.suppress(psutil.Error):
                if any("multiprocessing.forkserver" in part for part in child.cmdline()):
                    found.extend(p for p in child.children() if p.is_running())
    except psutil.Error:
        return []
    return found


@contextlib.contextmanager
def sessions_side_by_side():
    """Let two sessions' scripts run at once in this process, as they do in a server.

    AppTest plays the server's runtime with one class attribute (``Runtime._instance``), set when a session's
    run starts and cleared when it ends; a second session ending first would leave the first one's script
    without a runtime ("Runtime hasn't been created!") and the visitor's page empty. While this is open, a
    session finding it cleared gets the last one set (each is a stand-in with the same managers)."""
    from streamlit.runtime import Runtime

    seen: dict = {}
    original = Runtime.__dict__["instance"]

    def instance(cls):
        current = cls._instance
        if current is not None:
            seen["last"] = current
            return current
        if "last" in seen:
            return seen["last"]
        return original.__func__(cls)

    Runtime.instance = classmethod(instance)
    try:
        yield
    finally:
        Runtime.instance = original


def light_seconds(name: str = "Privacy_accountant", query: dict[str, str] | None = None) -> float:
    """Seconds a second session takes to open the light page ``name`` (its whole script run)."""
    at = page(name, query, timeout=60)
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    assert not at.exception, at.exception
    return elapsed


def while_heavy(heavy: Callable[[], object], light: Callable[[], float], *, wait: float = 60) -> tuple[object, float,
                                                                                                       bool]:
    """Run ``heavy`` (a session's request) in a thread and, once a walled worker computes for it (or it has
    ended), ``light`` (another session's page). Returns (heavy's value, light's seconds, whether a worker was
    computing while ``light`` ran)."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = heavy()
        except BaseException as err:  # noqa: BLE001 - raised again in the test's thread
            box["error"] = err

    with sessions_side_by_side():
        thread = threading.Thread(target=run, name="heavy-session", daemon=True)
        thread.start()
        deadline = time.perf_counter() + wait
        while thread.is_alive() and not walled_workers() and time.perf_counter() < deadline:
            time.sleep(0.02)
        overlapped = thread.is_alive() and bool(walled_workers())
        seconds = light()
        thread.join(wait)
    assert not thread.is_alive(), "the heavy session did not end"
    if "error" in box:
        raise box["error"]
    return box.get("value"), seconds, overlapped
