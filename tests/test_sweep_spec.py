"""Sweep definitions: settings, cells, seeds, parsing, and reading a table (Pareto front, series)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from engine.sweep import SweepSpec, get_adapter, pareto_mask, parse_assignment, parse_setting, preset_spec, summarise
from engine.sweep.analysis import series, varied_parameters
from engine.sweep.values import coerce, derive_seed, parse_lines
from engine.validation import ConfigError


def cells_of(spec: SweepSpec):
    return spec.cells(get_adapter(spec.tool))


def test_grid_has_every_combination_once_in_a_fixed_order():
    spec = SweepSpec("toy", axes=(("x", (1.0, 2.0, 4.0)), ("y", (0.0, 0.5))), runs=2, replicates=2)
    cells = cells_of(spec)
    assert len(cells) == 3 * 2 * 2
    combos = [(c.params["x"], c.params["y"]) for c in cells if c.replicate == 0]
    assert combos == list(itertools.product((1.0, 2.0, 4.0), (0.0, 0.5)))
    assert [c.index for c in cells] == list(range(len(cells)))
    assert len({c.key for c in cells}) == len(cells)
    assert all(c.params["runs"] == 2 for c in cells)


def test_one_at_a_time_varies_each_axis_around_the_base_without_repeating_it():
    # The paper's Fig. 3a design: z varies at q = 0.35, q varies at z = 1; (0.35, 1) once.
    spec = preset_spec("fig3a", runs=1)
    settings = [(c.params["q"], c.params["z"]) for c in cells_of(spec) if c.role == "setting"]
    expected = [(0.35, z) for z in (1.0, 1.6, 2.0, 3.0, 4.0)] + [(q, 1.0) for q in (0.1, 0.15, 0.2, 0.25)]
    assert sorted(settings) == sorted(expected)
    refs = [(c.params["algorithm"], c.params["P"]) for c in cells_of(spec) if c.role == "reference"]
    # The paper's "FTS" line is its DP-FTS-DE code with P = 1 and no privacy (fts-de, P = 1).
    assert refs == [("ts", 4), ("fts-de", 1), ("fts-de", 4)]
    # Typed before comparing: a base written "z = 1" (an int) is the same setting as the axis value 1.0.
    typed = SweepSpec("fbo", base={"q": 0.35, "z": 1}, axes=(("z", (1.0, 2.0)), ("q", (0.1, 0.35))),
                      combine="one-at-a-time")
    assert len(cells_of(typed)) == 3


def test_cell_seeds_depend_on_what_a_cell_is_not_on_its_position():
    a = SweepSpec("toy", axes=(("x", (1.0, 2.0)),), replicates=3, seed=7)
    b = SweepSpec("toy", axes=(("x", (2.0, 1.0, 8.0)),), replicates=3, seed=7)
    seeds_a = {(c.params["x"], c.replicate): c.seed for c in cells_of(a)}
    seeds_b = {(c.params["x"], c.replicate): c.seed for c in cells_of(b)}
    assert all(seeds_a[k] == seeds_b[k] for k in seeds_a)
    keys_a = {(c.params["x"], c.replicate): c.key for c in cells_of(a)}
    keys_b = {(c.params["x"], c.replicate): c.key for c in cells_of(b)}
    assert all(keys_a[k] == keys_b[k] for k in keys_a)   # so a grown grid reuses finished cells
    # Paired seeds: every setting sees the same seeds; replicates differ.
    assert seeds_a[(1.0, 0)] == seeds_a[(2.0, 0)] != seeds_a[(1.0, 1)]
    independent = cells_of(SweepSpec("toy", axes=(("x", (1.0, 2.0)),), seed=7, paired_seeds=False))
    assert independent[0].seed != independent[1].seed
    assert cells_of(SweepSpec("toy", axes=(("x", (1.0,)),), seed=8))[0].seed != seeds_a[(1.0, 0)]
    assert derive_seed(7, 0) == derive_seed(7, 0)


def test_values_take_the_type_of_the_configuration_field():
    spec = SweepSpec("fbo", base={"agents": "20", "iterations": 10.0}, axes=(("z", (1, 1.5)), ("P", (1.0, 2.0))))
    cell = cells_of(spec)[0]
    assert isinstance(cell.params["z"], float) and isinstance(cell.params["P"], int)
    assert cell.params["agents"] == 20 and isinstance(cell.params["iterations"], int)
    assert coerce("true", {"bool"}) is True and coerce(1, {"bool"}) is True
    assert coerce(None, {"float", "None"}) is None and coerce("none", {"float", "None"}) is None
    assert coerce("fts", {"str"}) == "fts"


@pytest.mark.parametrize("spec, fragment", [
    (dict(tool="nope"), "tool must be one of"),
    (dict(tool="toy", axes=(("w", (1,)),)), "no setting w"),
    (dict(tool="toy", axes=(("x", (-1.0,)),)), "x must be > 0"),
    (dict(tool="toy", axes=(("x", ()),)), "at least one value"),
    (dict(tool="toy", axes=(("x", (1, 1)),)), "repeat"),
    (dict(tool="toy", axes=(("x", (1,)), ("x", (2,)))), "varied twice"),
    (dict(tool="toy", runs=0), "number of runs"),
    (dict(tool="fbo", axes=(("q", (0.0, 0.5)),)), "q must be in"),
])
def test_bad_sweeps_are_refused_with_a_sentence(spec, fragment):
    with pytest.raises(ConfigError, match=fragment):
        cells_of(SweepSpec(**spec))


def test_command_line_values_parse():
    assert parse_assignment("q=0.15,0.25,0.5", many=True) == ("q", (0.15, 0.25, 0.5))
    assert parse_assignment("z=1,1.5", many=True) == ("z", (1.0, 1.5))        # one type per column
    assert parse_assignment("P=1,2", many=True) == ("P", (1, 2))
    assert parse_assignment("algorithm=ts,fts-de", many=True) == ("algorithm", ("ts", "fts-de"))
    assert parse_setting("algorithm=fts,fts_variant=concurrent") == {"algorithm": "fts",
                                                                     "fts_variant": "concurrent"}
    assert parse_lines("agents = 20\n# a comment\n\ndelta = none\nlocal_exploration = false") == \
        {"agents": 20, "delta": None, "local_exploration": False}
    for bad in ("q", "q=", "=1"):
        with pytest.raises(ConfigError):
            parse_assignment(bad, many=True)


def test_pareto_mask_matches_a_brute_force_definition():
    rng = np.random.default_rng(3)
    for lower in (True, False):
        x = rng.integers(0, 6, 40).astype(float)   # ties on purpose
        y = rng.integers(0, 6, 40).astype(float)
        x[0] = np.nan
        sign = 1 if lower else -1
        expected = []
        for i in range(len(x)):
            if not np.isfinite(x[i]):
                expected.append(False)
                continue
            dominated = any(x[j] <= x[i] and sign * y[j] <= sign * y[i] and (x[j] < x[i] or y[j] != y[i])
                            for j in range(len(x)) if np.isfinite(x[j]))
            expected.append(not dominated)
        assert pareto_mask(x, y, lower).tolist() == expected


def _table(rows):
    frame = pd.DataFrame(rows)
    frame["tool"], frame["metric"], frame["privacy_delta"], frame["wall_seconds"] = "toy", "loss", 1e-5, 0.1
    frame["error"] = None
    return frame


def test_summary_gives_one_point_per_setting_with_standard_errors_and_the_front():
    rows = []
    cell = 0
    for q, z, eps, losses in ((0.1, 1.0, 2.0, [0.5, 0.7]), (0.35, 1.0, 6.0, [0.2, 0.4]),
                              (0.35, 2.0, 3.0, [0.6, 0.8]), (0.35, 4.0, 1.0, [0.9, 1.1])):
        for run, loss in enumerate(losses):
            rows.append(dict(cell=cell, role="setting", setting=f"q={q}, z={z}", run=run, q=q, z=z, seed=5,
                             utility=loss, privacy_loss=eps))
        cell += 1
    rows += [dict(cell=cell, role="reference", setting="algorithm=ts", run=r, q=0.35, z=1.0, seed=5,
                  utility=u, privacy_loss=np.nan) for r, u in enumerate((0.3, 0.5))]
    table = _table(rows)
    summary = summarise(table)
    assert varied_parameters(table) == ["q", "z"]
    assert summary["utility"].round(6).tolist() == [0.6, 0.3, 0.7, 1.0, 0.4]
    assert np.allclose(summary["utility_se"], 0.1)          # sd 0.1414 / sqrt(2)
    assert summary["reference"].tolist() == [False, False, False, False, True]
    # (eps 3, loss 0.7) is beaten by nobody more private and better: (6, 0.3) is better but less private.
    assert summary["pareto"].tolist() == [True, True, False, True, False]
    lines = dict(series(summary, ["q", "z"]))
    assert set(lines) == {"vary q (z=1)", "vary z (q=0.35)"}
    assert lines["vary z (q=0.35)"]["z"].tolist() == [1.0, 2.0, 4.0]
    assert lines["vary q (z=1)"]["q"].tolist() == [0.1, 0.35]


def test_failed_rows_are_counted_not_averaged():
    rows = [dict(cell=0, role="setting", setting="x=1", run=r, x=1.0, seed=1, utility=u, privacy_loss=2.0)
            for r, u in enumerate((0.2, 0.4))]
    rows += [dict(cell=1, role="setting", setting="x=2", run=r, x=2.0, seed=1, utility=np.nan,
                  privacy_loss=np.nan) for r in range(2)]
    table = _table(rows)
    table.loc[table["cell"] == 1, "error"] = "RuntimeError: boom"
    summary = summarise(table)
    assert summary["failed"].tolist() == [0, 2]
    assert summary["runs"].tolist() == [2, 0]
    assert not summary["reference"].iloc[1]       # a failed setting is not mistaken for a reference
