"""Heavy work behind hard walls (engine.walls, ui.kit.run_worker): a run in a worker process streams its records,
ends alone at the memory or CPU wall with one sentence naming the knob, and Stop kills it.

The workers here never end alone (they spin), so a worker that is gone was ended by the wall or by Stop; the
seconds given to the waits are guards against a hang, wide enough for a machine busy with other work, not
bounds the verdict depends on."""

from __future__ import annotations

import os
import resource
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.page_runs import click_run
from tests.walled_work import BIG, hog, spin

from engine.cancel import Cancelled, CancelToken
from engine.hosting import HEAVY_NICENESS
from engine.walls import MEMORY, TIME, WORKER_NICENESS, Wall, WallHit, run_walled, use_workers

HANG_GUARD = 30.0       # seconds a wait for a worker to be gone gives up after (a guard, not a bound)


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended (or is a zombie waiting for its parent) within ``seconds``."""
    deadline = time.perf_counter() + seconds
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split()[2] == "Z":
                    return True
        except OSError:
            return True
        if time.perf_counter() > deadline:
            return False
        time.sleep(0.02)


def records(send):
    for i in range(3):
        send(("record", i, os.getpid()))
        time.sleep(0.02)


def test_records_stream_from_a_worker_process():
    got = list(run_walled(records, CancelToken(), Wall(200, 30)))
    assert [m[:2] for m in got] == [("record", 0), ("record", 1), ("record", 2)]
    assert got[0][2] != os.getpid()                    # computed in another process


def niceness(send):
    send(("niceness", os.getpriority(os.PRIO_PROCESS, 0), os.getpid()))


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities on this platform")
def test_a_walled_worker_runs_at_a_lower_priority_than_the_server():
    server = os.getpriority(os.PRIO_PROCESS, 0)
    (kind, worker, pid), = run_walled(niceness, CancelToken(), Wall(200, 30))
    assert pid != os.getpid() and WORKER_NICENESS >= 10
    assert worker == max(WORKER_NICENESS, server)           # the server's own threads get the CPU first
    assert worker > server or server >= 19


def test_the_memory_wall_ends_the_run_alone_and_the_server_stays_small():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = []
    with pytest.raises(WallHit) as hit:
        for message in run_walled(hog, CancelToken(), Wall(100, 30)):
            got.append(message)
    assert hit.value.kind == MEMORY and [m[:2] for m in got] == [("record", 0)]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100                               # the 3 GB never reached this process
    assert list(run_walled(records, CancelToken(), Wall(200, 30)))    # the next run works


def test_the_cpu_wall_ends_a_run_that_would_never_stop():
    with pytest.raises(WallHit) as hit:
        for _ in run_walled(spin, CancelToken(), Wall(200, 1)):
            pass
    assert hit.value.kind == TIME


def test_stop_kills_the_worker():
    token = CancelToken()
    pids = []
    with pytest.raises(Cancelled):
        for message in run_walled(spin, token, Wall(200, 60)):
            pids.append(message[2])
            threading.Timer(0.3, token.cancel).start()
    assert gone_within(pids[0], HANG_GUARD), "the worker still runs after Stop"


def test_workers_are_on_when_hosted_or_asked_for():
    assert use_workers({"DPBO_HOSTED": "1"}) and not use_workers({})
    assert use_workers({"DPBO_RUN_WORKERS": "1"}) and not use_workers({"DPBO_HOSTED": "1", "DPBO_RUN_WORKERS": "0"})
    assert use_workers({"DPBO_DASK_SCHEDULER": "tcp://10.0.0.5:8786"})


def page():
    import streamlit as st

    import ui.kit.run_loop as live
    from engine.limits import Cost
    from ui.kit.errors import ErrorSlots

    live.REDRAW_SECONDS = 0.0
    mode = st.session_state.get("mode", "ok")

    def line(name, n):
        def start():
            for i in range(n):
                if mode == "hog" and i == 1:
                    import numpy as np
                    yield float(np.ones(3 * 1024 ** 3 // 8).sum())
                yield f"{name}{i}"
        return live.LiveLine(name, start, n)

    slots = ErrorSlots()
    st.number_input("agents", key="agents_box")
    slots.under("agents")
    slots.fallback()
    drawn = st.session_state.setdefault("drawn", [])
    if st.button("Run", key="go"):
        price = live.checked(Cost(seconds=0.0, memory_mb=1.0, field="agents"))
        live.run_live("demo", [line("a", 3), line("b", 2)], values={}, errors=slots, price=price, in_workers=True,
                      draw=lambda run, suffix: drawn.append(list(run.results)), progress_slot=st.empty(),
                      snapshot=lambda item: str(item).upper())
    run = st.session_state.get("demo")
    st.session_state["status"] = None if run is None else run.status.value
    st.text_input("light", key="light")


def run_page(**state) -> AppTest:
    return click_run(page, **state)


def test_a_page_run_in_a_worker_draws_the_same_records():
    at = run_page()
    assert at.session_state["status"] == "done" and at.session_state["demo"].results == ["A2", "B1"]
    drawn = at.session_state["drawn"]
    assert drawn[0] == ["A0", None] and drawn[-1] == ["A2", "B1"]


def test_a_page_run_over_the_memory_wall_ends_with_one_sentence_naming_the_knob(monkeypatch):
    monkeypatch.setenv("DPBO_MAX_MEMORY_MB", "100")
    at = run_page(mode="hog")
    assert at.session_state["demo"] is None and at.session_state["status"] is None
    assert len(at.error) == 1
    sentence = at.error[0].value
    assert "more memory than this server allows" in sentence and "Lower the agents" in sentence
    second = AppTest.from_function(page, default_timeout=60)          # another session still answers
    second.run()
    assert not second.exception and second.text_input(key="light")


def slow_page():
    import streamlit as st

    import ui.kit.run_loop as live
    from engine.cancel import checkpoint
    from engine.limits import Cost
    from ui.kit.errors import ErrorSlots

    def forever():
        import os
        while True:                              # an engine that would never end, checking its token
            for _ in range(1000):
                checkpoint()
            yield os.getpid()

    if st.button("Run", key="go"):
        live.run_live("slow", [live.LiveLine("x", forever, 10)], values={}, errors=ErrorSlots(), in_workers=True,
                      draw=lambda r, s: None, progress_slot=st.empty(),
                      price=live.checked(Cost(seconds=0.0, memory_mb=1.0, field="runs")))
    run = st.session_state.get("slow")
    st.session_state["status"] = None if run is None else (run.status.value, run.message, run.results)


def test_the_time_limit_stops_a_worker_run_and_ends_its_worker(monkeypatch):
    monkeypatch.setenv("DPBO_MAX_SECONDS", "0.5")      # stopped after twice that of wall-clock time
    at = AppTest.from_function(slow_page, default_timeout=60)
    at.run()
    at.button(key="go").click().run()
    status, message, results = at.session_state["status"]
    assert status == "stopped" and "time limit" in message          # the engine never ends alone
    worker = results[0]
    assert worker != os.getpid()
    assert gone_within(worker, HANG_GUARD)


def allocate(n_bytes: int) -> float:
    import numpy as np

    return float(np.ones(n_bytes // 8).sum())


def refuse():
    from engine.validation import ConfigError

    raise ConfigError("the file has no utility column.", "upload")


def test_light_work_a_visitor_sizes_can_be_walled_too(monkeypatch):
    import streamlit as st  # noqa: F401 - compute draws a placeholder (bare mode here)

    from engine.validation import ConfigError
    from ui.kit.compute import compute

    monkeypatch.setenv("DPBO_RUN_WORKERS", "1")
    monkeypatch.setenv("DPBO_MAX_MEMORY_MB", "100")
    assert compute(allocate, 8 * 1000, walled="upload") == 1000.0
    with pytest.raises(ConfigError) as err:
        compute(allocate, BIG, walled="upload")
    assert err.value.field == "upload" and "Lower the size of the file" in str(err.value)
    with pytest.raises(ConfigError, match="no utility column") as err:
        compute(refuse, walled="upload")
    assert err.value.field == "upload"


def test_a_table_build_in_the_callers_thread_leaves_its_priority_alone():
    """Only a background build thread is niced; a build run in the caller's thread (the CLI's, or the test
    runner's main thread) must not leave that thread niced, or later work there would run below the pages."""
    from engine.objectives.builds import BuildRegistry

    me = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, me)
    result, waited = BuildRegistry().run("key", lambda report: os.getpriority(os.PRIO_PROCESS, me))
    assert (result, waited) == (before, False)
    assert os.getpriority(os.PRIO_PROCESS, me) == before
    seen = []
    BuildRegistry().start("other", lambda report: seen.append(
        os.getpriority(os.PRIO_PROCESS, threading.get_native_id())), label="t").wait()
    assert seen == [max(HEAVY_NICENESS, before)]


def test_a_cached_page_function_travels_to_a_worker_from_the_first_page_a_server_opens():
    """The teaching view computes its round walled through ``ui.kit.compute`` alone; a Streamlit-cached function
    holds locks, so it must travel by name (or as its plain function) before the live-run loop was ever imported.
    A fresh interpreter, as a fresh server opening the teaching view first, with no other page's imports."""
    import subprocess
    import sys

    code = (
        "import sys, cloudpickle, streamlit as st\n"
        "import ui.kit.compute\n"
        "assert 'ui.kit.run_loop' not in sys.modules\n"
        "from ui.kit.cached import cached_epsilon\n"
        "@st.cache_data\n"
        "def page_round(x):\n"
        "    return x + 1\n"
        "for fn, arg in ((cached_epsilon, None), (page_round, 1)):\n"
        "    back = cloudpickle.loads(cloudpickle.dumps(fn))\n"
        "    assert callable(back)\n"
        "print(cloudpickle.loads(cloudpickle.dumps(page_round))(1))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, DPBO_RUN_WORKERS="0"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "2"
