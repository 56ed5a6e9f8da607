"""One build per table at a time: a second caller joins the build under way and hears its progress."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from engine.objectives.builds import BuildRegistry, build_table, start_table_build, table_build
from engine.objectives.store import table_state
from engine.objectives.tasks import Task


def test_a_second_caller_waits_for_the_same_build():
    registry = BuildRegistry()
    started, release, calls = threading.Event(), threading.Event(), []

    def work(report):
        calls.append(1)
        report(0, 4)
        started.set()
        release.wait(10)
        for done in range(1, 5):
            report(done, 4)
        return "table"

    first = registry.start("key", work, label="a table")
    assert started.wait(10)
    heard = []

    def join():
        heard.append(registry.run("key", work, progress=lambda done, total: heard.append(done)))

    second = threading.Thread(target=join)
    second.start()
    deadline = time.monotonic() + 60             # a guard: the second caller has joined once it heard the state
    while not heard and time.monotonic() < deadline:
        time.sleep(0.01)
    assert heard == [0] and registry.get("key") is first and first.snapshot().done == 0
    release.set()
    second.join(10)
    assert calls == [1]                                  # built once
    assert heard[-1] == ("table", True)                  # the second caller joined it
    assert heard[:-1][-1] == 4                           # and heard its progress to the end
    assert first.wait(1) == "table" and registry.get("key") is None


def test_time_left_comes_from_the_pace_of_finished_rows(monkeypatch):
    import engine.objectives.builds as builds

    # The build's clock moves only when the work says so: the pace is the same on any machine.
    clock = [100.0]
    monkeypatch.setattr(builds, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    registry = BuildRegistry()
    gate = threading.Event()

    def work(report):
        report(0, 10)
        clock[0] += 0.3          # starting the workers: not part of the pace
        report(2, 10)
        clock[0] += 0.2
        report(4, 10)
        gate.wait(60)
        return None

    build = registry.start("pace", work)
    deadline = time.monotonic() + 60             # a guard: waits for the work's progress, not for time
    while build.snapshot().done < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    snap = build.snapshot()
    # 2 rows per 0.2 s after the first finished rows: 6 rows left take 0.6 s (not 0.75 s from the start).
    assert snap.seconds_left == pytest.approx(0.6) and snap.elapsed == pytest.approx(0.5)
    gate.set()
    build.wait(5)


def test_a_failed_build_reaches_every_waiter_and_can_be_retried():
    registry = BuildRegistry()

    def broken(report):
        raise RuntimeError("the scorer broke")

    build = registry.start("bad", broken)
    with pytest.raises(RuntimeError, match="scorer broke"):
        build.wait(5)
    assert build.snapshot().error == "the scorer broke" and registry.get("bad") is None
    assert registry.run("bad", lambda report: 7) == (7, False)


class SlowTask(Task):
    """A tiny task whose scoring waits, so a test can look at a build under way."""

    name, dim, n_agents, default_grid = "slow-test-task", 1, 3, 5
    metric_label, lengthscale, noise_var = "loss", 0.1, 1e-3
    calls = 0

    def definition(self):
        return {"task": self.name}

    def score(self, agent, points):
        SlowTask.calls += 1
        time.sleep(0.15)
        return np.full(len(points), float(agent))


def test_start_table_build_runs_in_the_background_and_build_table_joins_it(tmp_path):
    task = SlowTask()
    build = start_table_build(task, directory=tmp_path)
    assert build is not None and table_build(task, directory=tmp_path) is build
    joined = build_table(task, directory=tmp_path)       # waits for the background build: no second scoring
    assert joined.from_cache and SlowTask.calls == 3
    assert np.array_equal(joined.values[:, 0], [0.0, 1.0, 2.0])
    assert table_state(task, directory=tmp_path)["complete"]
    assert start_table_build(task, directory=tmp_path) is None          # ready: nothing to start
