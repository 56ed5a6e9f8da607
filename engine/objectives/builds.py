"""One build per table at a time in this process, with its progress readable by anyone who asks.

Building an objective table takes seconds to tens of seconds (landmine: about
20 s on two cores). When a second caller (another visitor of the dashboard,
a sweep preparing its cells) asks for a table that is already being built,
it must wait for that build instead of starting its own: two builds of the
same table would double the work and race on the same files.

:class:`BuildRegistry` keys builds by the table's cache path. ``start``
launches a build in a background thread (so a page that asked for it stays
usable and can poll :meth:`Build.snapshot`), ``run`` builds in the calling
thread unless the same build is already under way, in which case it waits
for that one. The process-wide registry is :data:`BUILDS`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class BuildSnapshot:
    """What a build has done so far (a copy: safe to read from any thread)."""

    label: str
    done: int                      # rows (agents) finished, including rows kept from an interrupted build
    total: int
    elapsed: float                 # seconds since the build started
    seconds_left: float | None     # from the pace since this build's first finished row; None until a second
    finished: bool
    error: str | None              # the failure's sentence when the build failed

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class Build:
    """One table build: its progress, and its result or error once finished."""

    def __init__(self, key: str, label: str):
        self.key = key
        self.label = label
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._started = time.perf_counter()
        # (time, rows) when this build first finished a row: the pace is measured from there, not from the start,
        # which includes starting the worker processes (seconds, or tens of seconds on a busy machine).
        self._first: tuple[float, int] | None = None
        self._initial: int | None = None
        self._done, self._total = 0, 0
        self._result: Any = None
        self._error: BaseException | None = None
        self._listeners: list[Progress] = []

    # -- reported by the builder --------------------------------------------
    def report(self, done: int, total: int) -> None:
        with self._lock:
            if self._initial is None:
                self._initial = int(done)
            elif self._first is None and done > self._initial:
                self._first = (time.perf_counter(), int(done))
            self._done, self._total = int(done), int(total)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(done, total)
            except Exception:  # noqa: BLE001 - one caller's broken display must not stop everyone's build
                with self._lock:
                    if listener in self._listeners:
                        self._listeners.remove(listener)

    def _finish(self, result: Any = None, error: BaseException | None = None) -> None:
        with self._lock:
            self._result, self._error = result, error
        self._finished.set()

    # -- read by anyone -----------------------------------------------------
    def listen(self, callback: Progress | None) -> None:
        """Call ``callback(done, total)`` on every further report (and now, with the current state)."""
        if callback is None:
            return
        with self._lock:
            self._listeners.append(callback)
            done, total = self._done, self._total
        if total:
            callback(done, total)

    def snapshot(self) -> BuildSnapshot:
        with self._lock:
            now = time.perf_counter()
            left = None
            if self._first is not None and self._done > self._first[1]:
                rate = (self._done - self._first[1]) / max(now - self._first[0], 1e-9)
                left = (self._total - self._done) / rate
            error = None if self._error is None else (str(self._error) or type(self._error).__name__)
            return BuildSnapshot(self.label, self._done, self._total, now - self._started, left,
                                 self._finished.is_set(), error)

    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> Any:
        """The build's result (waiting up to ``timeout`` seconds); re-raises its error."""
        if not self._finished.wait(timeout):
            raise TimeoutError(f"{self.label} is still being built")
        if self._error is not None:
            raise self._error
        return self._result


class BuildRegistry:
    """Builds under way in this process, keyed by what they build (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._builds: dict[str, Build] = {}

    def get(self, key: str) -> Build | None:
        """The build of ``key`` under way, or None."""
        with self._lock:
            return self._builds.get(key)

    def _claim(self, key: str, label: str) -> tuple[Build, bool]:
        with self._lock:
            build = self._builds.get(key)
            if build is not None:
                return build, False
            build = self._builds[key] = Build(key, label)
            return build, True

    def _execute(self, build: Build, work: Callable[[Progress], Any]) -> None:
        try:
            result = work(build.report)
        except BaseException as err:  # noqa: BLE001 - handed to every waiter, who re-raises it
            build._finish(error=err)  # noqa: SLF001 - the registry owns its builds
        else:
            build._finish(result=result)  # noqa: SLF001
        finally:
            with self._lock:
                if self._builds.get(build.key) is build:
                    del self._builds[build.key]

    def start(self, key: str, work: Callable[[Progress], Any], *, label: str = "table") -> Build:
        """Start ``work(report)`` in a background thread unless ``key`` is already being built; return the build.

        The thread outlives the caller (a page's script run may stop at any
        click): the build always finishes, and whoever asks next reads the
        finished table from the cache.
        """
        build, mine = self._claim(key, label)
        if mine:
            threading.Thread(target=self._execute, args=(build, work), name=f"build {label}", daemon=True).start()
        return build

    def run(self, key: str, work: Callable[[Progress], Any], *, label: str = "table",
            progress: Progress | None = None) -> tuple[Any, bool]:
        """``work(report)`` in this thread, or wait for the same build under way elsewhere.

        Returns ``(result, waited)``; ``waited`` is True when another caller's
        build was joined. ``progress`` hears every report of whichever build runs.
        """
        build, mine = self._claim(key, label)
        build.listen(progress)
        if mine:
            self._execute(build, work)
        return build.wait(), not mine


# Every build of this process goes through this registry, so two callers never build the same table twice.
BUILDS = BuildRegistry()
