"""The executor seam (engine.executor): no other engine module starts processes for heavy work, the local pool's
workers yield the CPU only on a hosting server, and bad executor options are one sentence each."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

from engine.executor import Executor, from_args
from engine.executor.cluster import TLS_SETTINGS
from engine.validation import ConfigError

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"
EXECUTOR = ENGINE / "executor"
STARTS_PROCESSES = re.compile(r"ProcessPoolExecutor|\bloky\b|\bmultiprocessing\b|(?<![A-Za-z_])Client\(|"
                              r"^\s*(from|import) joblib\b")


def test_no_engine_module_outside_the_executor_starts_processes_or_clients():
    found = [f"{path.relative_to(ENGINE)}:{n}: {line.strip()}" for path in sorted(ENGINE.rglob("*.py"))
             if EXECUTOR not in path.parents
             for n, line in enumerate(path.read_text().splitlines(), 1) if STARTS_PROCESSES.search(line)]
    assert not found, found
    # The pattern finds what it is meant to find (the executor's own modules use all four).
    own = "\n".join(p.read_text() for p in EXECUTOR.glob("*.py"))
    assert {m.group(0) for line in own.splitlines() for m in STARTS_PROCESSES.finditer(line)} >= {
        "ProcessPoolExecutor", "loky", "multiprocessing", "Client("}


def niceness(_key) -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


@pytest.mark.parametrize("hosted", [False, True])
def test_pool_workers_yield_the_cpu_only_on_a_hosting_server(monkeypatch, hosted):
    if hosted:
        monkeypatch.setenv("DPBO_HOSTED", "1")
    else:
        monkeypatch.delenv("DPBO_HOSTED", raising=False)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    got = dict(Executor("joblib", 2).results(niceness, [(k, (k,)) for k in range(2)]))
    assert set(got) == {0, 1}
    assert all(n == (max(mine, 10) if hosted else mine) for n in got.values()), (mine, got)


def test_executor_options_are_sentences():
    with pytest.raises(ConfigError, match="needs --executor dask"):
        from_args(Namespace(executor="joblib", scheduler="tcp://127.0.0.1:8786", workers=None))
    with pytest.raises(ConfigError, match="tcp://host:port"):
        from_args(Namespace(executor="dask", scheduler="127.0.0.1:8786", workers=None))
    with pytest.raises(ConfigError, match="executor must be one of"):
        Executor("spark")
    with pytest.raises(ConfigError, match="workers must be >= 1"):
        Executor("joblib", 0)



def test_a_tls_scheduler_without_this_clients_certificate_is_one_sentence(monkeypatch):
    """Dask's own answer was a 40-line traceback (TypeError: TLS expects a ssl_context ... got None), after the
    command had been priced; now it is refused before, in one sentence that names the settings to give."""
    for name in TLS_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="speaks TLS, and this machine has no client certificate") as refused:
        from_args(Namespace(executor="dask", scheduler="tls://10.0.0.5:8786", workers=None))
    assert all(name in str(refused.value) for name in TLS_SETTINGS) and refused.value.field == "scheduler"
    done = subprocess.run([sys.executable, "-m", "engine", "audit", "--trials", "100", "--executor", "dask",
                           "--scheduler", "tls://127.0.0.1:9"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if k not in TLS_SETTINGS})
    assert done.returncode == 2 and not done.stdout, done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: The scheduler tls://127.0.0.1:9 speaks TLS")


def test_the_hosts_scheduler_is_the_default_address_of_the_dask_executor(monkeypatch):
    monkeypatch.setenv("DPBO_DASK_SCHEDULER", "tcp://10.0.0.5:8786")
    assert Executor("dask").address == "tcp://10.0.0.5:8786"
    assert Executor("dask", scheduler="tcp://127.0.0.1:9000").address == "tcp://127.0.0.1:9000"
    monkeypatch.delenv("DPBO_DASK_SCHEDULER")
    assert Executor("dask").address is None          # a loopback cluster of its own


def test_a_job_inside_a_task_runs_in_that_process():
    pids = dict(Executor("joblib", 2).results(nested_pids, [(k, (k,)) for k in range(2)]))
    for outer, inner in pids.values():
        assert outer != os.getpid() and set(inner) == {outer}


def nested_pids(_key):
    inner = dict(Executor("joblib", 2).results(pid_of, [(k, (k,)) for k in range(3)]))
    return os.getpid(), list(inner.values())


def pid_of(_key) -> int:
    return os.getpid()


def _sleep_then(key, seconds):
    import time

    time.sleep(seconds)
    return key, os.getpid()


def test_jobs_at_once_share_one_session_of_workers():
    """`reproduce all` runs its papers at once (engine.executor.together) inside one session: every job's tasks
    ran on the same two worker processes, none in this one, and each job's CPU meter counted its own tasks."""
    from engine.executor import metered, together, use
    from engine.reproduce.runs import run_tasks

    def job(name):
        with metered() as meter:
            pids = {pid for _, pid in run_tasks([(f"{name}{i}", 0.05) for i in range(6)], _sleep_then)}
        return pids, meter

    with Executor("joblib", 2).session() as shared, use(shared):
        out = together({"a": lambda: job("a"), "b": lambda: job("b")})
    pids = out["a"][0] | out["b"][0]
    assert len(pids) == 2 and os.getpid() not in pids, out
    assert all(meter.tasks >= 0 for _, meter in out.values())


def test_the_first_job_that_fails_stops_the_others():
    import time

    from engine.cancel import checkpoint
    from engine.executor import together

    beats = []

    def endless():
        for _ in range(6000):           # a minute at most: a guard against a broken stop, not a timing
            checkpoint()
            beats.append(1)
            time.sleep(0.01)
        return "never stopped"

    def fails():
        while not beats:
            time.sleep(0.01)
        raise ValueError("the first job's error")

    with pytest.raises(ValueError, match="the first job's error"):
        together({"endless": endless, "fails": fails})
    assert len(beats) < 6000


@pytest.mark.parametrize("mechanism", ["fbo-server", "hype-votes"])
def test_an_audit_gives_the_same_scores_on_worker_processes_and_in_this_process(mechanism):
    """On a Dask cluster too: tests/test_commands_on_dask.py."""
    from engine.audit import ServerAudit, VoteAudit
    from engine.audit.run import run_audit

    config = ServerAudit(q=0.5, z=1.0, trials=2000, seed=5) if mechanism == "fbo-server" else VoteAudit(trials=2000,
                                                                                                          seed=5)
    pooled, alone = run_audit(config, executor=Executor("joblib", 2)), run_audit(config)
    assert pooled.grids == alone.grids and pooled.counts.keys() == alone.counts.keys()
    assert all(np.array_equal(a, b) for name in alone.counts for a, b in zip(pooled.counts[name], alone.counts[name]))
    assert pooled.epsilon_lower == alone.epsilon_lower


def test_a_session_keeps_its_worker_processes_across_jobs_and_ends_them_with_the_block():
    """The advisor's rounds: several jobs, one start of the worker processes."""
    import psutil

    tasks = [(k, (k,)) for k in range(4)]
    with Executor("joblib", 2).session() as kept:
        first = set(dict(kept.results(pid_of, tasks)).values())
        second = set(dict(kept.results(pid_of, tasks)).values())
        assert len(first | second) <= 2 and os.getpid() not in first | second     # the same two processes
    assert not [pid for pid in first | second if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
