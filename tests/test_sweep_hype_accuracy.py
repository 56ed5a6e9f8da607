"""A DP-HYPE sweep in data mode records the chosen candidate's test accuracy beside the success rate, and the
table can be read with either metric."""

from __future__ import annotations

import numpy as np
import pytest

from engine.sweep import SweepSpec, run_sweep, summarise
from engine.sweep.analysis import lower_is_better, metric_choices, parameter_columns, with_metric


def test_a_data_mode_sweep_records_the_test_accuracy_of_the_chosen_candidate(tmp_path):
    base = dict(mode="data", dataset="digits", clients=10, runs=1, repetitions=30)
    spec = SweepSpec("hype", base=base, axes=(("epsilon", (0.25, 3.0)),), runs=3, seed=2)
    table = run_sweep(spec, tmp_path / "hype.parquet", executor="local").table
    assert "test_accuracy" in table and "test_accuracy" not in parameter_columns(table)
    accuracy = table["test_accuracy"].to_numpy(float)
    assert np.isfinite(accuracy).all() and ((accuracy > 0) & (accuracy <= 1)).all()
    assert metric_choices(table) == {"utility": "success rate",
                                     "test_accuracy": "test accuracy of the chosen candidate"}
    read = with_metric(table, "test_accuracy")
    assert not lower_is_better(read) and (read["metric"] == "test accuracy of the chosen candidate").all()
    summary = summarise(read)
    for _, row in summary.iterrows():
        runs = table.loc[table["setting"] == row["setting"], "test_accuracy"].to_numpy(float)
        assert row["utility"] == pytest.approx(runs.mean())
        assert row["utility_se"] == pytest.approx(runs.std(ddof=1) / np.sqrt(len(runs)))
    # The success rate stays the table's utility.
    assert summarise(with_metric(table, "utility"))["utility"].tolist() == summarise(table)["utility"].tolist()


def test_a_simulation_sweep_offers_the_success_rate_only(tmp_path):
    base = dict(mode="simulation", clients=50, candidates=20, good=2, repetitions=40)
    spec = SweepSpec("hype", base=base, axes=(("epsilon", (0.5, 3.0)),), runs=2, seed=5)
    table = run_sweep(spec, tmp_path / "sim.parquet", executor="local").table
    assert "test_accuracy" not in table
    assert metric_choices(table) == {"utility": "success rate"}
    assert with_metric(table, "test_accuracy") is table
