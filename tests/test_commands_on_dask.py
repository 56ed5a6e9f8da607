"""Every command that takes ``--executor dask`` runs its work on the cluster it is given, and prints what it prints
locally: the stock ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (tests/dask_loopback.py), the
command in a process of its own. The evidence that the work reached the cluster comes from the cluster itself: the
scheduler's log shows the command's client connecting, and the workers' own transition logs show the command's tasks
(``dpbo-<label>-...``) executed there. (A reproduction once ignored ``--executor dask``: its JSON was right, and came
from the calling process.)

Sizes are tiny: the point is where the work runs and that it gives the same numbers, not the numbers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.dask_loopback import wait_until

from engine.cli import main
from engine.executor.cluster import client_for
from engine.sweep import comparable

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD = 300            # seconds a command may take on a crowded machine before the test calls it hung

# `reproduce all` on a few small parts of each paper (FTS's synthetic part on two of its settings): the command's own
# code path (every paper at once on one session of workers), the parts narrowed in the command's process by the test.
ALL_PARTS = {"dp-fts-de": ("heterogeneous",), "fts": ("synthetic",), "dp-hype": ("simulation", "labels"),
             "po-gp-ucb": ("branin",)}
REPRODUCE_ALL = """
import sys
from tests.test_commands_on_dask import narrow
from engine.cli import main
narrow(setattr)
sys.exit(main(sys.argv[1:]))
"""


def narrow(patch) -> None:
    """Narrow `reproduce all` to :data:`ALL_PARTS` (``patch``: ``setattr``, or pytest's ``monkeypatch.setattr``)."""
    import engine.cli.reproduce as cli
    from engine.reproduce import fts
    from engine.reproduce.replication import restrict

    claim = fts.SYNTHETIC_CLAIMS[0]
    patch(cli, "_parts_of", lambda args, paper: ALL_PARTS[paper])
    patch(fts, "PART_SPECS", dict(fts.PART_SPECS, synthetic=restrict(fts.PART_SPECS["synthetic"],
                                                                      {claim.text: (claim.better[0], claim.worse)})))


# (name, the command's arguments, the tasks it hands the executor at least)
COMMANDS = [
    ("reproduce-all", ["reproduce", "all", "--runs", "2", "--synthetic-runs", "2", "--functions", "2",
                       "--repetitions", "50", "--no-replication", "--quiet"], 5 + 2 + 2 + 1),
    ("reproduce-po-gp-ucb", ["reproduce", "po-gp-ucb", "--parts", "branin,property", "--runs", "2", "--quiet"], 2),
    ("reproduce-ablations", ["reproduce", "ablations", "--parts", "pogpucb-extent", "--runs", "2", "--quiet"], 1),
    ("sweep", ["sweep", "--tool", "hype", "--grid", "epsilon=0.5,1", "--set", "repetitions=50", "--runs", "2",
               "--quiet"], 2),
    ("audit-fbo-server", ["audit", "--trials", "600", "--seed", "3"], 2),
    ("audit-hype-votes", ["audit", "--mechanism", "hype-votes", "--trials", "600", "--seed", "3"], 2),
    ("audit-flower", ["audit", "--mechanism", "flower", "--strategy", "flower-dp-fixed", "--q", "0.5", "--agents",
                      "4", "--trials", "400", "--seed", "2"], 2),
    ("data-build-table", ["data", "build-table", "--dataset", "breast-cancer-lr", "--agents", "2", "--grid", "5"],
     2),
]


def executed(client) -> dict[str, set[str]]:
    """Every task of the engine (``dpbo-...`` keys) each worker has executed, from the worker's own log."""
    def keys(dask_worker):
        return [str(entry[0]) for entry in dask_worker.state.log
                if len(entry) > 2 and entry[1] == "executing" and entry[2] == "memory"
                and str(entry[0]).startswith("dpbo-")]

    return {worker: set(found) for worker, found in client.run(keys).items()}


def connections(workdir: Path) -> int:
    """Clients the scheduler has accepted so far, from its log."""
    return (workdir / "scheduler.log").read_text().count("Receive client connection")


def _arguments(name: str, args: list[str], out: Path) -> list[str]:
    if name == "sweep":
        return args + ["--out", str(out / "sweep.parquet")]
    return args


def _command(name: str, args: list[str], env: dict) -> subprocess.CompletedProcess:
    program = ["-c", REPRODUCE_ALL] if name == "reproduce-all" else ["-m", "engine"]
    done = subprocess.run([sys.executable, *program, *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _local(name: str, args: list[str], out: Path, monkeypatch, capsys) -> dict:
    """The command in this process, on no executor but this process."""
    monkeypatch.setenv("DPBO_CACHE_DIR", str(out / "cache"))
    if name == "reproduce-all":
        narrow(monkeypatch.setattr)
    capsys.readouterr()
    assert main(_arguments(name, args, out) + ["--executor", "local"]) == 0
    return json.loads(capsys.readouterr().out)


TIMES = ("seconds", "wall_seconds", "cpu_seconds", "build_seconds", "machine", "path", "out", "executor")


def same_numbers(value):
    """``value`` without what differs between two runs of the same work: times, the machine, the files' paths."""
    if isinstance(value, dict):
        return {k: same_numbers(v) for k, v in value.items() if k not in TIMES and "seconds" not in k}
    if isinstance(value, list):
        return [same_numbers(v) for v in value]
    return value


@pytest.mark.parametrize("name, args, tasks", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_the_command_runs_on_the_cluster_it_is_given_and_prints_the_local_numbers(
        name, args, tasks, dask_cluster, dask_workdir, tmp_path, monkeypatch, capsys):
    if name == "audit-flower":
        pytest.importorskip("flwr")
    address = dask_cluster[0]
    local = _local(name, args, tmp_path / "local", monkeypatch, capsys)
    client = client_for(address)
    before, clients_before = executed(client), connections(dask_workdir)
    env = dict(os.environ, DPBO_CACHE_DIR=str(tmp_path / "remote" / "cache"))
    done = _command(name, _arguments(name, args, tmp_path / "remote") + ["--executor", "dask", "--scheduler",
                                                                         address], env)
    remote = json.loads(done.stdout)
    after = executed(client)
    ran = {worker: keys - before.get(worker, set()) for worker, keys in after.items()}
    # The scheduler saw the command's own client, and the workers executed its tasks.
    assert connections(dask_workdir) > clients_before
    assert sum(len(keys) for keys in ran.values()) >= tasks, ran
    assert same_numbers(remote) == same_numbers(local)
    if name == "sweep":
        pd.testing.assert_frame_equal(comparable(pd.read_parquet(tmp_path / "remote" / "sweep.parquet")),
                                      comparable(pd.read_parquet(tmp_path / "local" / "sweep.parquet")))
    if name == "data-build-table":
        assert np.array_equal(np.load(remote["path"])["values"], np.load(local["path"])["values"])
        assert "breast-cancer-lr table: 2/2 agents" in done.stderr        # progress as the rows came back
    if name == "reproduce-all":
        assert set(remote["papers"]) == set(ALL_PARTS) and all(p["cpu_seconds"] >= 0 for p in
                                                                remote["papers"].values())


def test_a_worker_killed_mid_sweep_is_restarted_and_the_sweep_finishes_with_the_same_rows(
        dask_cluster, tmp_path, monkeypatch):
    """The recipe's answer to a worker's death (docs/hosting.md): its nanny starts a new worker process, the
    scheduler gives the dead worker's task to a live one, and the sweep ends with exactly the rows it would have had.
    Every wait is on progress (a cell on disk, a worker back), with a guard against a hang."""
    address = dask_cluster[0]
    client = client_for(address)
    args = ["sweep", "--tool", "fbo", "--grid", "agents=20,30,40,50,60,70", "--set", "iterations=6", "--runs", "2",
            "--quiet"]
    out = tmp_path / "dask.parquet"
    command = subprocess.Popen([sys.executable, "-m", "engine", *args, "--out", str(out), "--executor", "dask",
                                "--scheduler", address], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        parts = Path(str(out) + ".parts")
        busy = {}

        def one_cell_done_and_a_worker_computing() -> bool:
            busy.clear()
            busy.update({w: pid for w, (pid, n) in client.run(
                lambda dask_worker: (os.getpid(), dask_worker.state.executing_count)).items() if n})
            return parts.is_dir() and any(parts.iterdir()) and bool(busy) and command.poll() is None

        assert wait_until(one_cell_done_and_a_worker_computing, HANG_GUARD, step=0.02), command.poll()
        done_at_kill = len(list(parts.iterdir()))
        worker, pid = next(iter(busy.items()))
        os.kill(pid, signal.SIGKILL)                           # mid-sweep: a cell is computing on it
        stdout, stderr = command.communicate(timeout=HANG_GUARD)
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
            command.wait()
    assert command.returncode == 0, stderr[-3000:]
    assert done_at_kill < 6
    summary = json.loads(stdout)
    assert summary["complete"] and summary["failed_cells"] == 0 and summary["rows"] == 6 * 2
    # The nanny started a new worker process in place of the killed one (the cluster has two workers again).
    assert wait_until(lambda: len(client.scheduler_info()["workers"]) == 2, HANG_GUARD)
    pids = set(client.run(os.getpid).values())
    assert pid not in pids and len(pids) == 2
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    assert main([*args, "--out", str(tmp_path / "local.parquet"), "--executor", "local"]) == 0
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(out)),
                                  comparable(pd.read_parquet(tmp_path / "local.parquet")))
