"""Objective tables: cache keys, resumable builds, and never trusting a half-written table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest

from engine.cli import main
from engine.objectives import breast_cancer_lr, build_objective, digits_svm
from engine.objectives.builds import build_table, report_progress
from engine.objectives.registry import check_split, make_task
from engine.objectives.store import cached_tables, load_table, table_path, table_state
from engine.objectives.task_objective import table_objective
from engine.objectives.tasks import Task, grid_candidates
from engine.validation import ConfigError


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("DPBO_CACHE_DIR", str(path))
    return path


@dataclass(eq=False)
class CountingTask(Task):
    """A cheap task whose agent ``fail_at`` raises, recording which agents were scored."""

    n_agents: int = 5
    offset: float = 0.0
    fail_at: int | None = None
    error: type = RuntimeError
    scored: list = field(default_factory=list)
    name: str = "counting"
    dim: int = 2
    default_grid: int = 4
    metric_label: str = "1 - score"
    lengthscale: float = 0.1
    noise_var: float = 1e-4

    def definition(self) -> dict:
        return {"task": self.name, "n_agents": self.n_agents, "offset": self.offset}

    def score(self, agent, points):
        if agent == self.fail_at:
            raise self.error(f"agent {agent} interrupted")
        self.scored.append(agent)
        return self.offset + (agent + 1) * points[:, 0] * (1 - points[:, 1])


def _expected(task, grid):
    candidates = grid_candidates(task.dim, grid)
    return np.stack([task.offset + (a + 1) * candidates[:, 0] * (1 - candidates[:, 1])
                     for a in range(task.n_agents)])


def test_grid_has_size_to_the_dim_points_with_the_last_axis_fastest():
    grid = grid_candidates(3, 4)
    assert grid.shape == (64, 3) and grid.min() == 0.0 and grid.max() == 1.0
    assert np.array_equal(grid[:4, 2], np.linspace(0, 1, 4)) and np.all(grid[:16, 0] == 0)
    assert len(np.unique(grid, axis=0)) == 64


def test_a_finished_table_is_read_back_without_computing():
    task = CountingTask()
    first = build_table(task, n_jobs=1)
    assert not first.from_cache and first.path.is_file() and sorted(task.scored) == list(range(5))
    assert np.array_equal(first.values, _expected(task, 4))
    again = CountingTask()
    second = build_table(again, n_jobs=1)
    assert second.from_cache and again.scored == [] and np.array_equal(second.values, first.values)
    assert not first.path.with_suffix(".parts").exists()  # partial rows are cleaned up


def test_cache_key_changes_when_the_task_changes():
    base = table_path(CountingTask())
    assert table_path(CountingTask()) == base
    assert table_path(CountingTask(offset=1.0)) != base
    assert table_path(CountingTask(n_agents=4)) != base
    assert table_path(CountingTask(), grid=5) != base
    # Real tasks: the split seed, alpha, number of agents and hyperparameter ranges are all in the key.
    digits = table_path(digits_svm.make_task(n_agents=3))
    assert digits != table_path(digits_svm.make_task(n_agents=3, seed=1))
    assert digits != table_path(digits_svm.make_task(n_agents=3, alpha=2.0))
    assert digits != table_path(digits_svm.make_task(n_agents=4))
    assert table_path(digits_svm.make_task(n_agents=3)) == digits
    ranged = digits_svm.make_task(n_agents=3)
    object.__setattr__(ranged, "c_range", (1e-1, 1e3))
    assert table_path(ranged) != digits
    versioned = digits_svm.make_task(n_agents=3)
    object.__setattr__(versioned, "scorer_version", 2)
    assert table_path(versioned) != digits


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_interrupted_build_leaves_no_table_and_resumes_from_finished_agents(error):
    broken = CountingTask(fail_at=3, error=error)
    with pytest.raises(error):
        build_table(broken, n_jobs=1)
    path = table_path(broken)
    assert not path.exists() and load_table(broken) is None
    assert table_state(CountingTask()) == {"complete": False, "agents_done": 3, "total": 5, "path": str(path)}
    assert not list(path.parent.glob("*.tmp")) and not list(path.with_suffix(".parts").glob("*.tmp"))
    assert sorted(broken.scored) == [0, 1, 2]

    calls = []
    fixed = CountingTask()
    built = build_table(fixed, n_jobs=1, progress=lambda done, total: calls.append((done, total)))
    assert built.resumed == 3 and sorted(fixed.scored) == [3, 4]
    assert calls == [(3, 5), (4, 5), (5, 5)]
    assert np.array_equal(built.values, _expected(fixed, 4))
    assert table_state(CountingTask())["complete"] is True


def test_a_corrupt_partial_row_is_recomputed_not_trusted():
    with pytest.raises(RuntimeError):
        build_table(CountingTask(fail_at=2), n_jobs=1)
    parts = table_path(CountingTask()).with_suffix(".parts")
    (parts / "agent-0001.npy").write_bytes(b"\x93NUMPY garbage")
    task = CountingTask()
    built = build_table(task, n_jobs=1)
    assert built.resumed == 1 and sorted(task.scored) == [1, 2, 3, 4]
    assert np.array_equal(built.values, _expected(task, 4))


def test_a_damaged_or_mismatched_table_file_is_rebuilt():
    task = CountingTask()
    path = build_table(task, n_jobs=1).path
    path.write_bytes(path.read_bytes()[:100])  # truncated, as by a full disk
    assert load_table(task) is None
    rebuilt = CountingTask()
    assert not build_table(rebuilt, n_jobs=1).from_cache and len(rebuilt.scored) == 5
    np.savez(path, values=np.zeros((2, 16)), candidates=grid_candidates(2, 4))  # wrong shape under the same key
    assert load_table(task) is None


def test_progress_reaches_the_total_and_can_come_from_a_context():
    seen = []
    with report_progress(lambda done, total: seen.append((done, total))):
        objective = table_objective(CountingTask(n_agents=3), n_jobs=1)
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert objective.values.shape == (3, 16) and np.all(objective.reference == 1.0)


def test_worker_processes_give_the_same_table_as_one_process(cache):
    task = breast_cancer_lr.make_task(n_agents=3)
    parallel = build_table(task, grid=2, n_jobs=2, directory=cache / "parallel")
    serial = build_table(task, grid=2, n_jobs=1, directory=cache / "serial")
    assert np.array_equal(parallel.values, serial.values)


def test_cli_builds_reports_and_lists_tables(cache, capsys):
    args = ["data", "build-table", "--dataset", "breast-cancer-lr", "--agents", "2", "--grid", "2", "--workers", "1"]
    assert main(args) == 0
    captured = capsys.readouterr()
    first = json.loads(captured.out)
    assert first["from_cache"] is False and first["candidates"] == 8 and first["n_agents"] == 2
    assert first["build_seconds"] >= 0 and "breast-cancer-lr table: 2/2 agents" in captured.err
    assert main(args + ["--quiet"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["from_cache"] is True and second["path"] == first["path"]

    with pytest.raises(RuntimeError):
        build_table(CountingTask(fail_at=1), n_jobs=1)
    assert main(["data", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    states = {(t["task"], t["state"]) for t in status["tables"]}
    assert ("breast-cancer-lr", "complete") in states and ("counting", "interrupted") in states
    assert status["cache_dir"] == str(cache)
    assert {d["name"] for d in status["datasets"]} >= {"landmine", "digits-svm", "breast-cancer-lr"}
    assert cached_tables(cache) == status["tables"]


def test_a_data_split_applies_to_landmine_only():
    check_split("landmine", "seeded")
    check_split("digits-svm", None)
    refusals = (lambda: check_split("digits-svm", "seeded"), lambda: make_task("breast-cancer-lr", split="authors"),
                lambda: build_objective("synthetic", split="authors"))
    for refuse in refusals:
        with pytest.raises(ConfigError) as err:
            refuse()
        assert err.value.field == "split"
        assert str(err.value) == "The data split option applies to the landmine task only."
