"""Every heavy job through a real Dask cluster (the stock ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, tests/dask_loopback.py) gives what the local process pool gives: a reproduction, an objective table,
an audit (a sweep: tests/test_sweep_run.py); a hosted walled run streams its records from a stock (daemonic)
worker, holds its walls and stops at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.dask_loopback import listening, wait_until
from tests.walled_work import CPU_PER_BEAT, beating, forever, gone, hog, records, spin

from engine.advise import AdviceRequest, advise_now
from engine.audit import ServerAudit, VoteAudit
from engine.audit.run import run_audit
from engine.cancel import Cancelled, CancelToken, cancellable
from engine.executor import Executor, use
from engine.objectives.builds import build_table
from engine.objectives.registry import make_task
from engine.reproduce.report import Claim, Part, Setting, run_part
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


BASE = dict(dataset="synthetic", agents=6, iterations=3, features=10, n_init=3, P=2)
SETTINGS = (Setting("ts", "TS", dict(algorithm="ts")), Setting("dp", "DP-FTS-DE", dict(algorithm="dp-fts-de", q=0.5)))
PART = Part("toy", "toy", "simple regret", BASE, SETTINGS,
            (Claim("TS beats DP-FTS-DE", "test", ("ts",), "dp"),), (0, 3), 3)


def test_a_reproduction_gives_the_local_pools_curves_and_verdicts(dask):
    local = run_part(PART, runs=30, seed=2, jobs=2)                 # two blocks of runs per setting
    with use(dask):
        remote = run_part(PART, runs=30, seed=2)
    for key, setting in local.results.items():
        assert np.array_equal(remote.results[key].run_curves, setting.run_curves)
        assert remote.results[key].epsilon == setting.epsilon
    assert [v.to_json() for v in remote.verdicts] == [v.to_json() for v in local.verdicts]


def test_an_advice_on_the_cluster_is_the_local_one(dask):
    """The advisor's rounds (several jobs of one session) on the cluster: the same settings, runs and pick."""
    request = AdviceRequest(agents=6, iterations=3, epsilon=4.0, sensitivity=False)
    local = advise_now(request, executor=Executor("local"))
    assert advise_now(request, executor=dask).to_json() == local.to_json()


def test_the_command_line_reproduces_on_the_cluster(dask, tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine", "reproduce", "dp-fts-de", "--parts", "synthetic",
                           "--synthetic-runs", "2", "--executor", "dask", "--scheduler", dask.scheduler, "--quiet"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    part = json.loads(done.stdout)["parts"]["synthetic"]
    assert part["runs"] == 2 and part["claims"] and all(c["verdict"] for c in part["claims"])


def test_a_table_build_gives_the_local_pools_table(dask, tmp_path):
    task = make_task("breast-cancer-lr", n_agents=4)
    local = build_table(task, 5, n_jobs=2, directory=tmp_path / "local")
    seen = []
    with use(dask):
        remote = build_table(task, 5, directory=tmp_path / "dask", progress=lambda done, total: seen.append(done))
    assert not remote.from_cache and np.array_equal(remote.values, local.values)
    assert seen[0] == 0 and seen[-1] == task.n_agents          # progress as rows came back


@pytest.mark.parametrize("config", [ServerAudit(q=0.5, z=1.0, trials=2000, seed=5),
                                    VoteAudit(trials=2000, seed=5)], ids=["fbo-server", "hype-votes"])
def test_an_audit_gives_the_local_pools_scores(dask, config):
    local = run_audit(config, executor=Executor("joblib", 2))
    remote = run_audit(config, executor=dask)
    alone = run_audit(config)
    assert np.array_equal(remote.scores_in, local.scores_in) and np.array_equal(remote.scores_out, local.scores_out)
    assert np.array_equal(local.scores_in, alone.scores_in) and remote.epsilon_lower == alone.epsilon_lower


def test_a_flower_strategy_audit_gives_the_local_pools_scores(dask):
    pytest.importorskip("flwr")
    from engine.flower.audit import StrategyAudit, audit_strategy

    config = StrategyAudit(strategy="flower-dp-fixed", q=0.5, agents=4, trials=600, seed=2)
    local = audit_strategy(config, workers=2)
    remote = audit_strategy(config, executor=dask)
    assert np.array_equal(remote.scores_in, local.scores_in) and np.array_equal(remote.scores_out, local.scores_out)
    assert remote.epsilon_lower == local.epsilon_lower and remote.trials == 600


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
