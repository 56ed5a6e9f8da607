"""One engine call that runs to the end in one go, as a live line: it runs in a thread and reports progress.

:func:`in_background` turns ``work(progress, cancel)`` into an iterator for a
:class:`ui.kit.run_loop.LiveLine`: it yields a :class:`Progress` after each
report and the call's result at the end, and closing it (or cancelling the run's
token) makes ``cancel()`` true, so the engine stops at its next check.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from streamlit.runtime.scriptrunner import add_script_run_ctx

from engine.cancel import cancellable
from engine.cancel import current as current_token
from ui.kit.compute import POLL_SECONDS


@dataclass(frozen=True)
class Progress:
    """How far an engine call that reports progress has got (what :func:`in_background` yields meanwhile)."""

    done: int
    total: int




def in_background(work: Callable[[Callable[[int, int], None], Callable[[], bool]], Any], *,
                  poll: float = POLL_SECONDS) -> Iterator[Any]:
    """A LiveLine's iterator for one engine call ``work(progress, cancel)`` that runs to the end in one go.

    The call runs in a thread and the line yields a :class:`Progress` after each
    report (and every ``poll`` seconds), then the call's result; an exception it
    raises is raised here. Closing the iterator (Stop or any control rerunning
    the script, the session ending) or cancelling the cancel token it was started
    under (:func:`run_live`'s worker) makes ``cancel()`` return True, so the
    engine stops at its next check instead of finishing unseen.
    """
    reports: queue.Queue = queue.Queue()
    cancelled = threading.Event()
    outcome: dict[str, Any] = {}
    outer = current_token()

    def stop_asked() -> bool:
        return cancelled.is_set() or (outer is not None and outer.cancelled)

    def target() -> None:
        try:
            with cancellable(outer):
                outcome["result"] = work(lambda done, total: reports.put(Progress(int(done), int(total))),
                                         stop_asked)
        except BaseException as err:  # noqa: BLE001 - handed to the script thread, which raises it
            outcome["error"] = err
        finally:
            reports.put(None)

    # The thread sees the session's context, so cached engine calls (st.cache_data) work inside it.
    thread = add_script_run_ctx(threading.Thread(target=target, name="live-run-call", daemon=True))
    latest = Progress(0, 0)
    thread.start()
    try:
        while True:
            try:
                report = reports.get(timeout=poll)
            except queue.Empty:
                yield latest
                continue
            if report is None:
                break
            latest = report
            yield report
        if "error" in outcome:
            raise outcome["error"]
        yield outcome["result"]
    finally:
        cancelled.set()
