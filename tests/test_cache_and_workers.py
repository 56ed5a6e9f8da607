"""Disk and processes stay bounded: the one cache evicts its least recently used entries beyond
DPBO_CACHE_MAX_MB, and worker processes of a killed sweep exit by themselves (issue 12, finding 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from engine.cache import cache_entries, cache_limit_bytes, cached_arrays, enforce_limit, load_arrays

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20


def entry(root: Path, name: str, size: int, age: float) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_the_cache_limit_comes_from_the_host(monkeypatch):
    assert cache_limit_bytes({}) == 2048 * MB
    assert cache_limit_bytes({"DPBO_CACHE_MAX_MB": "10"}) == 10 * MB
    assert cache_limit_bytes({"DPBO_CACHE_MAX_MB": "none"}) is None
    for bad in ("-1", "inf", "nan", "lots"):
        assert cache_limit_bytes({"DPBO_CACHE_MAX_MB": bad}) == 2048 * MB


def test_least_recently_used_entries_go_first_and_in_flight_writes_stay(tmp_path):
    old = entry(tmp_path, "table-a.npz", MB, age=300)
    used = entry(tmp_path, "table-b.npz", MB, age=200)
    sweep = entry(tmp_path, "sweeps/fbo-1.parquet.parts/cell.parquet", MB, age=250)
    stamp = time.time() - 250
    os.utime(sweep.parent, (stamp, stamp))              # a folder's last use is its newest file
    newest = entry(tmp_path, "hype-scores-c.npz", MB, age=10)
    writing = entry(tmp_path, "table-d.npz.x.tmp", MB, age=1)
    os.utime(used)                                      # read just now: used most recently
    removed = enforce_limit(directory=tmp_path, limit=int(2.5 * MB))
    assert removed == [old, sweep.parent]               # oldest first, a sweep's parts as one entry
    assert used.exists() and newest.exists() and writing.exists()
    assert sum(size for _, size, _ in cache_entries(tmp_path)) <= 2.5 * MB


def test_writing_to_the_cache_keeps_it_under_its_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_MAX_MB", "1")
    arrays = {"x": np.zeros(40_000)}                    # 320 kB each
    paths = []
    for seed in range(6):
        cached_arrays("kind", {"seed": seed}, lambda: arrays, directory=tmp_path)
        paths.append(sorted(tmp_path.glob("kind-*.npz"), key=os.path.getmtime)[-1])
        time.sleep(0.02)
    total = sum(p.stat().st_size for p in tmp_path.glob("*.npz"))
    assert total <= MB and paths[-1].exists() and not paths[0].exists()
    # Reading an entry counts as using it: it outlives a newer one that is not read.
    survivors = sorted(tmp_path.glob("kind-*.npz"), key=os.path.getmtime)
    time.sleep(0.02)
    load_arrays(survivors[0])
    cached_arrays("kind", {"seed": 99}, lambda: arrays, directory=tmp_path)
    assert survivors[0].exists() and not survivors[1].exists()


@pytest.mark.parametrize("executor", ["joblib", "dask"])
def test_a_killed_sweep_leaves_no_worker_behind(executor, tmp_path):
    cli = subprocess.Popen([sys.executable, "-m", "engine", "sweep", "--tool", "toy", "--grid",
                            "sleep=50,51,52,53", "--executor", executor, "--workers", "2", "--quiet",
                            "--out", str(tmp_path / "t.parquet")], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=dict(os.environ, DPBO_CACHE_DIR=str(tmp_path)))
    parent = psutil.Process(cli.pid)
    deadline = time.time() + 60
    workers: list[psutil.Process] = []
    while time.time() < deadline and len(workers) < 2:
        workers = [p for p in parent.children(recursive=True) if "resource_tracker" not in " ".join(p.cmdline())]
        time.sleep(0.2)
    assert len(workers) >= 2, "the workers did not start"
    time.sleep(1.0)
    os.kill(cli.pid, signal.SIGKILL)
    cli.wait(10)
    # A worker exits at once once its guard runs (loky starts it after the worker's imports, a few seconds on a
    # busy machine); before this change the workers kept computing for minutes. The wait below is a guard wide
    # enough for a busy machine, shorter than a cell, so only the guard can have ended the workers.
    deadline = time.time() + 40
    alive = workers
    while alive and time.time() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.1)
    for proc in alive:
        proc.kill()                                      # leave the machine clean whatever the outcome
    assert not alive, [p.cmdline()[:4] for p in alive]
