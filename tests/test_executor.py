"""The executor seam (engine.executor): no other engine module starts processes for heavy work, the local pool's
workers yield the CPU only on a hosting server, and bad executor options are one sentence each."""

from __future__ import annotations

import os
import re
from argparse import Namespace
from pathlib import Path

import pytest

from engine.executor import Executor, from_args
from engine.validation import ConfigError

ENGINE = Path(__file__).resolve().parents[1] / "engine"
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
    assert from_args(Namespace(executor="dask", scheduler="tls://10.0.0.5:8786", workers=None)).address == \
        "tls://10.0.0.5:8786"


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


def test_a_session_keeps_its_worker_processes_across_jobs_and_ends_them_with_the_block():
    """The advisor's rounds: several jobs, one start of the worker processes (about 3 s for the three pools)."""
    import contextlib

    import psutil

    tasks = [(k, (k,)) for k in range(4)]
    with Executor("joblib", 2).session() as kept:
        first = set(dict(kept.results(pid_of, tasks)).values())
        second = set(dict(kept.results(pid_of, tasks)).values())
        assert first == second and os.getpid() not in first and kept.kept.started == 1
        stream = kept.stream(pid_of, tasks)           # stopped after its first task: its workers are ended
        with contextlib.closing(stream):
            next(stream)
        third = set(dict(kept.results(pid_of, tasks)).values())
        assert not third & first and kept.kept.started == 2
    assert not [pid for pid in third if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
