"""The sweep figures are plain functions of a summary table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sweep import summarise
from ui.sweep.figures import frontier_figure, heatmap_figure, reference_label, settings_table


def grid_table() -> pd.DataFrame:
    rows = []
    cell = 0
    rng = np.random.default_rng(0)
    for q in (0.1, 0.5):
        for z in (1.0, 2.0):
            for run in range(3):
                rows.append(dict(tool="fbo", cell=cell, role="setting", setting=f"q={q:g}, z={z:g}", run=run,
                                 algorithm="dp-fts-de", q=q, z=z, seed=1, metric="1 - AUC",
                                 utility=0.2 - 0.1 * q + 0.02 * z + 0.01 * rng.standard_normal(),
                                 privacy_loss=10 * q / z, privacy_delta=0.01, wall_seconds=0.1, error=None))
            cell += 1
    for algorithm, level in (("ts", 0.25), ("fts-de", 0.15)):
        for run in range(3):
            rows.append(dict(tool="fbo", cell=cell, role="reference", setting=f"algorithm={algorithm}", run=run,
                             algorithm=algorithm, q=0.25, z=1.0, seed=1, metric="1 - AUC", utility=level,
                             privacy_loss=np.nan, privacy_delta=np.nan, wall_seconds=0.1, error=None))
        cell += 1
    return pd.DataFrame(rows)


def test_frontier_draws_every_setting_the_front_and_the_references():
    summary = summarise(grid_table())
    fig = frontier_figure(summary, ["q", "z"], metric_label="1 - AUC", lower_is_better=True)
    by_name = {t.name: t for t in fig.data}
    front = by_name["Pareto-optimal settings"]
    expected = summary[summary["pareto"]].sort_values("privacy_loss")
    np.testing.assert_allclose(front.x, expected["privacy_loss"])
    np.testing.assert_allclose(front.y, expected["utility"])
    # One line per value of z along q, each point with its standard error and its cell for click-through.
    assert {"z=1", "z=2"} <= set(by_name)
    line = by_name["z=1"]
    rows = summary[(summary["z"] == 1.0) & ~summary["reference"]].sort_values("q")
    np.testing.assert_allclose(line.y, rows["utility"])
    np.testing.assert_allclose(line.error_y.array, rows["utility_se"])
    assert [list(c) for c in line.customdata] == [[c] for c in rows["cell"]]
    levels = sorted(s.y0 for s in fig.layout.shapes if s.type == "line")
    assert levels == [0.15, 0.25]
    assert {"TS (no DP)", "FTS-DE (no DP)"} <= set(by_name)
    assert "lower is better" in fig.layout.yaxis.title.text and "δ = 0.01" in fig.layout.xaxis.title.text


def test_heatmap_holds_the_mean_utility_of_each_pair():
    summary = summarise(grid_table())
    fig = heatmap_figure(summary, "q", "z", metric_label="1 - AUC")
    z = np.asarray(fig.data[0].z, dtype=float)
    for i, zv in enumerate((1.0, 2.0)):
        for j, qv in enumerate((0.1, 0.5)):
            row = summary[(summary["q"] == qv) & (summary["z"] == zv) & ~summary["reference"]]
            assert z[i, j] == row["utility"].iloc[0]
    assert fig.data[0].reversescale            # lower is better: the best cells are the bright ones


def test_settings_table_and_labels():
    summary = summarise(grid_table())
    table = settings_table(summary, ["q", "z"])
    assert table["setting"].tolist()[-2:] == ["TS", "FTS-DE"]
    # References do not use the swept values: a dash in the table, never the word "None".
    assert (table.loc[table["reference"], "q"] == "—").all()
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()
    assert reference_label(pd.Series({"setting": "algorithm=fts, fts_variant=concurrent", "algorithm": "fts"})) == "FTS"
    empty = frontier_figure(pd.DataFrame(), [])
    assert len(empty.data) == 0


def test_tables_show_a_dash_where_a_value_is_missing():
    from ui.kit.tables import readable

    table = settings_table(summarise(grid_table()), ["q", "z"])
    text = readable(table, formats={"privacy loss ε": "{:.3g}"}).to_string()
    assert "—" in text and "None" not in text and "nan" not in text.lower()
