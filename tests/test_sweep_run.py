"""Running sweeps: same rows whichever executor, nothing lost on interruption, failures recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.sweep import PartStore, SweepSpec, comparable, iter_sweep, run_sweep
from engine.sweep.runner import Progress
from engine.validation import ConfigError

ROOT = Path(__file__).resolve().parents[1]
# Tiny federated BO cells (about 0.1 s each): 20 agents, 10 iterations, M = 20.
TINY_FBO = dict(dataset="synthetic", agents=20, iterations=10, features=20, n_init=3)


def tiny_fbo_spec(**changes) -> SweepSpec:
    spec = dict(tool="fbo", base=dict(TINY_FBO, algorithm="dp-fts-de"),
                axes=(("q", (0.15, 0.5)), ("z", (1.0, 1.5))), references=({"algorithm": "ts"},), runs=2, seed=3)
    spec.update(changes)
    return SweepSpec(**spec)


def test_a_dask_cluster_gives_exactly_the_rows_of_joblib(tmp_path, dask_cluster):
    spec = tiny_fbo_spec()
    by_joblib = run_sweep(spec, tmp_path / "joblib.parquet", executor="joblib", workers=2)
    # The stock dask scheduler and two dask worker processes on loopback (tests/dask_loopback.py): tasks and
    # results go through the scheduler and are serialised as on any cluster.
    by_dask = run_sweep(spec, tmp_path / "dask.parquet", executor="dask", scheduler=dask_cluster[0])
    assert by_dask.complete and by_joblib.complete and not by_dask.failed
    assert by_dask.rows == by_joblib.rows == 5 * 2
    on_disk = pd.read_parquet(tmp_path / "dask.parquet")
    pd.testing.assert_frame_equal(comparable(on_disk), comparable(by_joblib.table))
    # The rows are real results, not copies: private settings spend privacy, runs differ.
    private = on_disk[on_disk["role"] == "setting"]
    assert (private["privacy_loss"] > 0).all() and on_disk.loc[on_disk["role"] == "reference",
                                                              "privacy_loss"].isna().all()
    assert private.groupby("cell")["utility"].nunique().gt(1).all()
    assert sorted(private["q"].unique()) == [0.15, 0.5]


def test_an_interrupted_sweep_resumes_with_only_the_missing_cells(tmp_path):
    spec = SweepSpec("toy", axes=(("x", (0.5, 1.0, 2.0, 4.0)), ("y", (0.0, 0.1))), runs=3, seed=11)
    reference = run_sweep(spec, tmp_path / "whole.parquet", executor="local").table

    out = tmp_path / "sweep.csv"
    events = iter_sweep(spec, out, executor="local")
    seen = 0
    for event in events:
        if isinstance(event, Progress) and event.done == 3:
            break                                  # the caller goes away after three cells
        seen += 1
    events.close()
    partial = pd.read_csv(out)
    assert sorted(partial["cell"].unique()) == [0, 1, 2] and len(partial) == 3 * 3
    assert len(PartStore(out).keys()) == 3

    summary = run_sweep(spec, out, executor="local")
    assert (summary.cells_reused, summary.cells_run, summary.rows) == (3, 5, 8 * 3)
    table = pd.read_csv(out)
    assert not table.duplicated(["cell", "run"]).any()
    expected = comparable(reference)
    got = comparable(table)
    pd.testing.assert_frame_equal(got[["cell", "run", "x", "y", "seed"]], expected[["cell", "run", "x", "y", "seed"]],
                                  check_dtype=False)
    np.testing.assert_allclose(got["utility"], expected["utility"], rtol=1e-12)   # CSV round trip of floats

    again = run_sweep(spec, out, executor="local")
    assert (again.cells_run, again.rows) == (0, 24)


def test_an_exception_in_the_caller_keeps_the_finished_cells(tmp_path):
    spec = SweepSpec("toy", axes=(("x", (1.0, 2.0, 3.0, 4.0, 5.0)),), runs=2)
    out = tmp_path / "sweep.parquet"

    def stop_after_two(progress):
        if progress.done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, out, executor="local", on_progress=stop_after_two)
    assert len(pd.read_parquet(out)) == 4
    summary = run_sweep(spec, out, executor="joblib", workers=2)
    assert (summary.cells_reused, summary.cells_run) == (2, 3)
    pd.testing.assert_frame_equal(comparable(summary.table),
                                  comparable(run_sweep(spec, tmp_path / "fresh.parquet", executor="local").table))


def test_a_killed_sweep_process_resumes_without_losing_or_duplicating_rows(tmp_path):
    out = tmp_path / "killed.parquet"
    command = [sys.executable, "-m", "engine", "sweep", "--tool", "toy", "--grid", "x=1,2,3,4,5,6,7,8",
               "--set", "sleep=0.25", "--runs", "2", "--out", str(out), "--executor", "local", "--quiet"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    store = PartStore(out)
    deadline = time.time() + 60
    while len(store.keys()) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)              # no chance to clean up
    proc.wait()
    finished = len(store.keys())
    assert 3 <= finished < 8, "the kill should land part way through the sweep"
    # Only whole parts exist: every one reads back with its two runs.
    assert all(len(store.load(k)) == 2 for k in store.keys())

    # Resume in this process with the sweep the command line described (same cells, same keys).
    spec = SweepSpec("toy", base={"sleep": 0.25}, axes=(("x", tuple(range(1, 9))),), runs=2)
    summary = run_sweep(spec, out, executor="local")
    assert (summary.cells_run, summary.cells_reused) == (8 - finished, finished)
    table = pd.read_parquet(out)
    assert len(table) == 16 and not table.duplicated(["cell", "run"]).any()
    assert table["x"].tolist() == [float(x) for x in range(1, 9) for _ in range(2)]
    fresh = run_sweep(spec.__class__(**dict(spec.to_dict(), base={"sleep": 0.0}, axes=spec.axes)),
                      tmp_path / "fresh.parquet", executor="local").table
    np.testing.assert_array_equal(table["utility"], fresh["utility"])   # sleep changes nothing but the time


def test_a_failing_cell_is_recorded_and_the_rest_finish(tmp_path):
    spec = SweepSpec("toy", base={"fail_at": 2.0}, axes=(("x", (1.0, 2.0, 3.0, 4.0)),), runs=3)
    out = tmp_path / "sweep.parquet"
    summary = run_sweep(spec, out, executor="joblib", workers=2)
    assert summary.complete and summary.rows == 12
    assert [f["setting"] for f in summary.failed] == ["x=2"]
    assert "toy failure injected at x=2" in summary.failed[0]["error"]
    table = pd.read_parquet(out)
    failed = table[table["x"] == 2.0]
    assert failed["error"].str.contains("RuntimeError").all() and failed["utility"].isna().all()
    others = table[table["x"] != 2.0]
    assert others["error"].isna().all() and np.isfinite(others["utility"]).all()
    # A rerun tries the failed cell again (and only it), unless told not to.
    assert run_sweep(spec, out, executor="local").cells_run == 1
    assert run_sweep(spec, out, executor="local", retry_failed=False).cells_run == 0


def test_a_missing_data_set_refuses_the_sweep_with_its_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path / "nowhere"))     # data folders come from the environment
    spec = SweepSpec("fbo", base=dict(dataset="landmine", agents=None, iterations=5),
                     axes=(("q", (0.2, 0.3)),), runs=1)
    with pytest.raises(ConfigError, match="LandmineData.mat"):
        run_sweep(spec, tmp_path / "sweep.parquet", executor="local")
    assert not (tmp_path / "sweep.parquet").exists()


def test_bad_executor_settings_are_sentences(tmp_path):
    spec = SweepSpec("toy", axes=(("x", (1.0,)),))
    with pytest.raises(ConfigError, match="executor must be one of"):
        run_sweep(spec, tmp_path / "a.parquet", executor="spark")
    with pytest.raises(ConfigError, match="needs the dask executor"):
        run_sweep(spec, tmp_path / "a.parquet", executor="joblib", scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="tcp://host:port"):
        run_sweep(spec, tmp_path / "a.parquet", executor="dask", scheduler="127.0.0.1")
    with pytest.raises(ConfigError, match=r"\.parquet or \.csv"):
        run_sweep(spec, tmp_path / "a.xlsx", executor="local")


def test_progress_counts_cells_and_estimates_what_is_left(tmp_path):
    spec = SweepSpec("toy", base={"sleep": 0.02}, axes=(("x", (1.0, 2.0, 3.0, 4.0)),), runs=1)
    events = list(iter_sweep(spec, tmp_path / "p.parquet", executor="local"))
    progress, summary = events[:-1], events[-1]
    assert [p.done for p in progress] == [0, 1, 2, 3, 4] and all(p.total == 4 for p in progress)
    assert progress[0].remaining is None
    # Each cell sleeps 0.02 s, so three cells left cannot be estimated at less than 0.06 s.
    assert progress[1].remaining >= 0.06 and progress[-1].remaining == 0
    assert [p.last for p in progress[1:]] == ["x=1", "x=2", "x=3", "x=4"]
    assert "4/4 cells" in progress[-1].line() and "left" not in progress[-1].line()
    assert summary.cells == 4 and summary.rows == 4 and summary.complete
    rerun = list(iter_sweep(spec, tmp_path / "p.parquet", executor="local"))
    assert rerun[0].done == 4 and rerun[0].reused == 4 and "4 from disk" in rerun[0].line()


@pytest.mark.parametrize("tool, base, axis", [
    ("hype", dict(mode="simulation", clients=50, candidates=20, good=2, repetitions=40), ("epsilon", (0.5, 3.0))),
    ("pogpucb", dict(dataset="branin", iterations=3, baseline=False, distortion_pairs=10), ("epsilon", (3.0, 4.5))),
])
def test_the_other_tools_run_as_sweeps(tmp_path, tool, base, axis):
    spec = SweepSpec(tool, base=base, axes=(axis,), runs=2, seed=5)
    summary = run_sweep(spec, tmp_path / f"{tool}.parquet", executor="local")
    table = summary.table
    assert not summary.failed, summary.failed
    assert len(table) == 4 and table["run"].tolist() == [0, 1, 0, 1]
    # The privacy loss of these mechanisms is the epsilon they are given.
    np.testing.assert_allclose(table["privacy_loss"], table["epsilon"])
    assert np.isfinite(table["utility"]).all() and (table["utility"] >= 0).all()
    if tool == "hype":
        assert (table["utility"] <= 1).all()           # a success rate
    again = run_sweep(spec, tmp_path / f"{tool}-again.parquet", executor="local").table
    pd.testing.assert_frame_equal(comparable(again), comparable(table))
