"""A real Dask cluster (the stock ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1,
tests/dask_loopback.py): it listens on loopback only, Stop reaches the tasks running on it, and a hosted walled run
streams its records from a stock (daemonic) worker, holds its walls and stops at once. Every command's work on it,
with the local numbers: tests/test_commands_on_dask.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.dask_loopback import listening, wait_until
from tests.walled_work import CPU_PER_BEAT, beating, forever, gone, hog, records, spin

from engine.advise import AdviceRequest, advise_now
from engine.cancel import Cancelled, CancelToken, cancellable
from engine.executor import Executor
from engine.walls import MEMORY, TIME, Wall, WallHit, run_walled

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD = 60.0          # seconds: only for a broken stop path, never a timing assertion


@pytest.fixture(scope="module")
def dask(dask_cluster):
    address, processes = dask_cluster
    return Executor("dask", scheduler=address)


def test_the_cluster_listens_on_loopback_only(dask_cluster):
    """The recipe of docs/hosting.md: scheduler, workers, nannies and their health pages all on 127.0.0.1."""
    _, processes = dask_cluster
    addresses = listening(processes)
    assert len(addresses) >= 5 and all(a.startswith("127.0.0.1:") for a in addresses), addresses


def test_an_advice_on_the_cluster_is_the_local_one(dask):
    """The advisor's rounds (several jobs of one session) on the cluster: the same settings, runs and pick."""
    request = AdviceRequest(agents=6, iterations=3, epsilon=4.0, sensitivity=False)
    local = advise_now(request, executor=Executor("local"))
    assert advise_now(request, executor=dask).to_json() == local.to_json()


def test_stop_ends_the_tasks_running_on_the_cluster(dask, tmp_path):
    """Stop reaches tasks already computing on the workers (not only those waiting): each sees it at its next
    checkpoint, as it would in a local worker process."""
    paths = [tmp_path / f"task{i}" for i in range(2)]
    token = CancelToken()

    def press_stop_once_both_run():
        wait_until(lambda: all(p.exists() for p in paths), HANG_GUARD)
        token.cancel()

    threading.Thread(target=press_stop_once_both_run, daemon=True).start()
    with pytest.raises(Cancelled), cancellable(token):
        for _ in dask.stream(forever, [(i, (str(p),)) for i, p in enumerate(paths)], label="stop-test"):
            pass                     # never: the tasks do not end by themselves
    assert all(wait_until(lambda p=p: p.exists() and p.read_text() == "stopped", HANG_GUARD) for p in paths), \
        [p.read_text() if p.exists() else None for p in paths]


# ---------------------------------------------------------------- hosted walled runs on stock workers
def test_a_walled_run_streams_its_records_from_a_stock_worker(dask):
    environ = {"DPBO_DASK_SCHEDULER": dask.scheduler}
    got = list(run_walled(records, CancelToken(), Wall(200, 30), environ=environ))
    assert [m[:2] for m in got] == [("record", 0), ("record", 1), ("record", 2)]
    assert got[0][2] != os.getpid()


def test_the_walls_hold_on_the_cluster(dask):
    environ = {"DPBO_DASK_SCHEDULER": dask.scheduler}
    with pytest.raises(WallHit) as hit:
        list(run_walled(hog, CancelToken(), Wall(100, 30), environ=environ))
    assert hit.value.kind == MEMORY
    with pytest.raises(WallHit) as hit:
        list(run_walled(spin, CancelToken(), Wall(None, 1), environ=environ))
    assert hit.value.kind == TIME


def test_stop_ends_a_walled_run_on_the_cluster_within_a_second_of_its_cpu(dask, tmp_path):
    """Measured in the run's own progress: the beats (10 ms of its CPU each) it made after Stop."""
    path = tmp_path / "beats"
    token, pid, at_stop = CancelToken(), None, None
    with pytest.raises(Cancelled):
        for message in run_walled(beating(str(path)), token, Wall(300, 120),
                                  environ={"DPBO_DASK_SCHEDULER": dask.scheduler}):
            if message[0] == "pid":
                pid = message[1]
            elif message[1] >= 20 and at_stop is None:
                at_stop = int(path.read_text())
                token.cancel()
    assert pid is not None and pid != os.getpid()
    assert wait_until(lambda: gone(pid), HANG_GUARD)
    after = int(path.read_text()) - at_stop
    assert 0 <= after <= 1.0 / CPU_PER_BEAT, after


def test_a_hosted_page_run_streams_its_records_from_the_cluster(dask, monkeypatch):
    """The page path of every hosted run (ui.kit.run_loop through ui.kit.run_worker) with the host's scheduler set:
    the page draws the records the cluster's walled worker sent (an internal error before)."""
    from tests.page_runs import click_run
    from tests.test_walls import page

    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_DASK_SCHEDULER", dask.scheduler)
    at = click_run(page)
    assert not at.exception and at.session_state["status"] == "done"
    assert at.session_state["demo"].results == ["A2", "B1"]
    assert at.session_state["drawn"][-1] == ["A2", "B1"]
