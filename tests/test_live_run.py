"""The one live-run loop (ui.kit.run_loop) under Streamlit's AppTest: lines grow together, charts end on the
finished run, a refusal or a failure leaves the page usable, an interrupted run is kept as stopped."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from tests.page_runs import click_run


def page():
    import streamlit as st

    import ui.kit.run_loop as live
    from engine.limits import Cost
    from engine.validation import ConfigError
    from ui.kit.errors import ErrorSlots

    live.REDRAW_SECONDS = float(st.session_state.get("redraw", 0.0))
    mode = st.session_state.get("mode", "ok")
    drawn = st.session_state.setdefault("drawn", [])
    started = st.session_state.setdefault("started", [])

    def line(name, n):
        def start():
            started.append(name)
            for i in range(n):
                if mode == "refuse" and i == 1:
                    raise ConfigError("the data set is missing.", "dataset")
                if mode == "crash" and i == 1:
                    raise RuntimeError("the engine broke")
                yield f"{name}{i}"
        return live.LiveLine(name, start, n)

    slots = ErrorSlots()
    st.text_input("data set", key="dataset_box")
    slots.under("dataset")
    slots.fallback()
    cost = Cost(seconds=1e6 if mode == "expensive" else 0.0, memory_mb=1.0, field="runs")
    clicked = st.button("Run", key="go")
    if clicked:
        try:
            price = live.checked(cost, what="These 2 lines")      # the page prices the run once, then starts it
        except ConfigError as err:
            slots.show(err)
        else:
            live.run_live("demo", [line("a", 3), line("b", 2)], values={"v": 1}, errors=slots, price=price,
                          draw=lambda run, suffix: drawn.append(list(run.results)), progress_slot=st.empty(),
                          interleave=mode != "sequential", snapshot=lambda item: item.upper())
    run = live.current_run("demo", clicked)
    st.session_state["status"] = None if run is None else run.status.value


def run_page(**state) -> AppTest:
    return click_run(page, **state)


def test_lines_grow_together_and_every_item_is_drawn_without_throttling():
    at = run_page()
    run = at.session_state["demo"]
    assert at.session_state["status"] == "done" and run.labels == ["a", "b"]
    assert run.results == ["A2", "B1"] and run.values == {"v": 1}
    # Interleaved: b starts right after a's first item, and the snapshots are taken for drawing only.
    assert at.session_state["drawn"] == [["A0", None], ["A0", "B0"], ["A1", "B0"], ["A1", "B1"], ["A2", "B1"]]
    assert run.first_chart is not None and run.seconds >= run.first_chart


def test_throttled_redraws_still_end_on_the_finished_run():
    at = run_page(redraw=60.0)
    drawn = at.session_state["drawn"]
    assert drawn == [["A0", None], ["A2", "B1"]]   # the first item at once, then only the end


def test_lines_can_run_one_after_another():
    at = run_page(mode="sequential")
    assert at.session_state["drawn"][:3] == [["A0", None], ["A1", None], ["A2", None]]
    assert at.session_state["drawn"][-1] == ["A2", "B1"]


def test_a_config_error_clears_the_run_and_shows_under_its_control():
    at = run_page(mode="refuse")
    assert at.session_state["demo"] is None and at.session_state["status"] is None
    assert [e.value for e in at.error] == ["the data set is missing."]


def test_the_host_limit_is_checked_before_anything_starts():
    at = run_page(mode="expensive")
    assert at.session_state["started"] == [] and "demo" not in at.session_state
    assert len(at.error) == 1 and "These 2 lines need about" in at.error[0].value


def test_a_run_starts_only_with_a_price():
    import pytest

    import ui.kit.run_loop as live
    from ui.kit.errors import ErrorSlots

    with pytest.raises(TypeError, match="priced"):
        live.run_live("demo", [], values={}, draw=lambda run, suffix: None, progress_slot=None,
                      errors=ErrorSlots(), price=None)


def test_a_failing_engine_leaves_a_failed_run_and_a_usable_page():
    at = run_page(mode="crash")
    run = at.session_state["demo"]
    assert at.session_state["status"] == "failed" and run.message == "RuntimeError: the engine broke"
    at.session_state["mode"] = "ok"
    at.button(key="go").click().run()
    assert at.session_state["status"] == "done"


def test_a_run_the_script_did_not_finish_is_kept_as_stopped():
    from ui.kit.run_loop import LiveRun, RunStatus

    at = AppTest.from_function(page, default_timeout=60)
    at.session_state["demo"] = LiveRun(status=RunStatus.RUNNING, labels=["a"], results=["A0"], values={})
    at.run()   # a rerun that was not started by Run (e.g. Stop)
    assert at.session_state["status"] == "stopped" and at.session_state["demo"].results == ["A0"]


# ---------------------------------------------------------------- one engine call in the background


def test_a_background_call_reports_progress_then_its_result():
    from ui.kit.background import Progress, in_background

    def work(progress, cancel):
        for done in (2, 4, 6):
            progress(done, 6)
        return "result"

    items = list(in_background(work, poll=0.01))
    assert items[-1] == "result"
    reports = [item for item in items if isinstance(item, Progress)]
    assert [p.done for p in reports if p.total] == [2, 4, 6] and all(p.total in (0, 6) for p in reports)


def test_a_background_calls_error_is_raised_in_the_script():
    import pytest

    from ui.kit.background import in_background

    def work(progress, cancel):
        raise ValueError("the engine refused")

    with pytest.raises(ValueError, match="the engine refused"):
        list(in_background(work, poll=0.01))


def test_closing_a_background_line_cancels_its_call():
    import threading

    from ui.kit.background import in_background

    stopped, chunks = threading.Event(), []

    def work(progress, cancel):
        while not cancel():          # the engine asks before every chunk, as run_audit does
            chunks.append(1)
            progress(len(chunks), 10**9)
            threading.Event().wait(0.005)
        stopped.set()

    line = in_background(work, poll=0.01)
    next(line), next(line)
    line.close()                     # what a rerun (Stop, another control, the session ending) does to the line
    assert stopped.wait(2.0), "the call kept running after its line was closed"
    count = len(chunks)
    threading.Event().wait(0.05)
    assert len(chunks) == count
# ---------------------------------------------------------------- the pool, the time limit, light work
def test_the_pool_starts_runs_in_order_within_its_capacity():
    from ui.kit.run_pool import RunPool

    pool = RunPool(capacity=2)
    first, second, third = pool.join(), pool.join(), pool.join()
    assert pool.ahead(third) == 2
    assert not pool.try_start(second)            # first come, first served
    assert pool.try_start(first) and pool.try_start(second) and not pool.try_start(third)
    assert pool.running == 2 and pool.ahead(third) == 0
    pool.leave(first)
    assert pool.try_start(third) and pool.running == 2
    wide = pool.join(slots=8)                    # a sweep on many workers takes the whole pool, not more
    pool.leave(second), pool.leave(third)
    assert pool.try_start(wide) and pool.running == 2
    pool.leave(wide)
    assert pool.running == 0 and pool.waiting == 0


def slow_page():
    import streamlit as st

    import ui.kit.run_loop as live
    from engine.cancel import checkpoint
    from engine.limits import Cost
    from ui.kit.errors import ErrorSlots

    def forever():
        while True:                              # an engine that would never end, checking its token
            for _ in range(1000):
                checkpoint()
            yield 1

    slots = ErrorSlots()
    if st.button("Run", key="go"):
        live.run_live("slow", [live.LiveLine("x", forever, 10)], values={}, errors=slots, draw=lambda r, s: None,
                      progress_slot=st.empty(), pool=st.session_state.get("pool"),
                      price=live.checked(Cost(seconds=0.0, memory_mb=1.0, field="runs")))
    run = st.session_state.get("slow")
    st.session_state["status"] = None if run is None else (run.status.value, run.message)


def test_the_time_limit_stops_a_run_and_says_so(monkeypatch):
    monkeypatch.setenv("DPBO_MAX_SECONDS", "0.5")      # stopped after twice that of wall-clock time
    at = AppTest.from_function(slow_page, default_timeout=30)
    at.run()
    at.button(key="go").click().run()
    status, message = at.session_state["status"]
    # The engine never ends alone, so only the limit can have stopped it (AppTest's timeout guards a hang).
    assert status == "stopped" and "time limit" in message


def test_a_full_pool_makes_a_run_wait_and_light_work_does_not(monkeypatch):
    import threading

    from ui.kit.run_pool import RunPool
    from ui.kit.compute import compute

    pool = RunPool(capacity=1)
    busy = pool.join()
    assert pool.try_start(busy)                  # another session's heavy run holds the only place
    seen = []

    def release():
        # Gives the place back once the page's run has queued for it (seen waiting while the place is held),
        # however long the page took to get there; 60 s guard against a page that never queues.
        deadline = time.monotonic() + 60
        while pool.waiting == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append((pool.waiting, pool.running))
        time.sleep(0.3)
        seen.append((pool.waiting, pool.running))   # still queued: it does not start while the place is held
        pool.leave(busy)

    monkeypatch.setenv("DPBO_MAX_SECONDS", "0.5")
    at = AppTest.from_function(slow_page, default_timeout=90)
    at.session_state["pool"] = pool
    at.run()
    threading.Thread(target=release, daemon=True).start()
    at.button(key="go").click().run()
    assert seen == [(1, 1), (1, 1)] and at.session_state["status"][0] == "stopped"    # queued, then ran to the limit
    assert pool.running == 0
    # Light work needs no place: it runs while the pool is full.
    again = pool.join()
    assert pool.try_start(again)
    assert compute(sum, [1, 2, 3]) == 6
    pool.leave(again)


def test_sessions_do_not_share_runs():
    first, second = run_page(), AppTest.from_function(page, default_timeout=60)
    second.run()
    assert first.session_state["demo"] is not None
    assert second.session_state["status"] is None and "demo" not in second.session_state
