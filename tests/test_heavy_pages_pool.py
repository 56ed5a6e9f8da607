"""The teaching view's round and a long accounting, priced above the light budget, take a place in the server's
run pool (DPBO_MAX_RUNS) like every heavy run; light ones compute at once, so a first view never queues behind
heavy runs. A rerun of the same round computes nothing, and the shared cache of rounds is small."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

import ui.kit.compute as compute_module
from ui.kit.run_pool import RunPool

ROOT = Path(__file__).resolve().parents[1]
TEACH = str(ROOT / "pages" / "2_Teaching_view.py")
ACCOUNTANT = str(ROOT / "pages" / "3_Privacy_accountant.py")


def test_pooled_work_waits_for_a_free_place_and_holds_it_while_it_computes():
    pool = RunPool(1)
    other = pool.join()
    assert pool.try_start(other)                 # another session's run holds the only place
    seen = {}

    def work():
        seen["running"] = pool.running
        return 42

    thread = threading.Thread(target=lambda: seen.setdefault("value", compute_module.pooled(work, pool=pool)))
    thread.start()
    deadline = time.monotonic() + 60                         # a guard: waits for the work to queue
    while pool.waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)                                          # it would have started by now if it did not wait
    assert "running" not in seen and pool.waiting == 1      # queued, not computing
    pool.leave(other)
    thread.join(10)
    assert seen == {"running": 1, "value": 42}
    assert pool.running == 0 and pool.waiting == 0


def _counting(monkeypatch, name: str = "pooled"):
    calls = []
    original = getattr(compute_module, name)

    def counted(fn, *args, **kwargs):
        calls.append(getattr(fn, "__name__", fn))
        return original(fn, *args, **kwargs)

    monkeypatch.setattr(compute_module, name, counted)
    return calls


def test_a_light_teaching_round_is_computed_at_once_not_queued(monkeypatch):
    pooled, direct = _counting(monkeypatch), _counting(monkeypatch, "compute")
    at = AppTest.from_file(TEACH, default_timeout=120)
    at.query_params["agents"] = "40"
    at.run()
    assert not at.exception, at.exception
    assert pooled == [] and direct == ["cached_round"]


def test_a_heavy_teaching_round_is_computed_in_the_pool_once_per_setting(monkeypatch):
    import engine.limits

    monkeypatch.setattr(engine.limits, "LIGHT_SECONDS", 0.0)
    calls = _counting(monkeypatch)
    at = AppTest.from_file(TEACH, default_timeout=120)
    at.query_params["agents"] = "40"
    at.run()
    assert not at.exception, at.exception
    assert len(calls) == 1
    at.run()                                      # a rerun (a toggle): the session's round, nothing computed
    assert not at.exception and len(calls) == 1
    redraw = next(b for b in at.button if b.label == "Draw another round")
    redraw.click().run()                          # a new seed: a new round, computed in the pool
    assert not at.exception and len(calls) == 2
    source = Path(TEACH).read_text()
    assert "max_entries=8" in source and "max_entries=64" not in source


def test_accounting_above_the_light_budget_waits_in_the_pool(monkeypatch):
    import engine.limits

    calls = _counting(monkeypatch)
    at = AppTest.from_file(ACCOUNTANT, default_timeout=120).run()
    assert not at.exception, at.exception
    assert calls == []                            # the default accounting is light: computed at once
    monkeypatch.setattr(engine.limits, "LIGHT_SECONDS", 0.0)
    at = AppTest.from_file(ACCOUNTANT, default_timeout=120).run()
    assert not at.exception, at.exception
    assert calls and all(name == "account" for name in calls)
