"""Comparisons of federated BO lines (engine.fbo.variants): lines from values, presets, and the way back."""

from __future__ import annotations

import pytest

from engine.fbo import FboConfig
from engine.fbo.presets import PRESETS
from engine.fbo.variants import (
    COMPARISON_DEFAULTS,
    build_variants,
    comparison_values,
    preset_values,
    sweep_base,
)
from engine.validation import ConfigError


def comparison(**changes) -> dict:
    return dict(COMPARISON_DEFAULTS, **changes)


def test_a_varied_parameter_adds_lines_only_where_it_matters():
    lines = build_variants(comparison(algorithms=["ts", "fts-de", "dp-fts-de"], vary="q", values="0.1, 0.3"))
    assert [label for label, _ in lines] == ["TS", "FTS-DE", "DP-FTS-DE (q = 0.1)", "DP-FTS-DE (q = 0.3)"]
    assert [cfg.q for _, cfg in lines[2:]] == [0.1, 0.3]
    lines = build_variants(comparison(algorithms=["ts", "fts-de"], vary="P", values="1, 3"))
    assert [label for label, _ in lines] == ["TS", "FTS-DE (P = 1)", "FTS-DE (P = 3)"]


def test_a_budget_applies_to_private_lines_only():
    lines = dict(build_variants(comparison(budget_mode="calibrate", budget=4.0)))
    assert lines["TS"].budget is None and not lines["TS"].calibrate_z
    assert lines["DP-FTS-DE"].budget == 4.0 and lines["DP-FTS-DE"].calibrate_z


@pytest.mark.parametrize("changes, field", [
    (dict(algorithms=[]), "algorithms"), (dict(vary="z", values="1, -2"), "values"), (dict(q=2.0), "q"),
    (dict(vary="P", values="1.5"), "values"), (dict(agents=1), "agents")])
def test_bad_comparisons_are_refused_by_field(changes, field):
    with pytest.raises(ConfigError) as err:
        build_variants(comparison(**changes))
    assert err.value.field == field


@pytest.mark.parametrize("name", ["fig2a", "fig2b", "fig2c", "fig2d", "fig4", "fig5-equal", "fig5-global", "fig6",
                                  "fig7a", "fig7b", "fig7b-fast", "fig12a"])
def test_presets_become_the_paper_lines_plus_ts(name):
    lines = build_variants(preset_values(name))
    configs = [cfg for _, cfg in lines]
    assert configs[0].algorithm == "ts" and all(cfg.runs == 3 for cfg in configs)
    for entry in PRESETS[name]["compare"]:
        wanted = FboConfig(**dict(PRESETS[name]["base"], **entry)).replace(runs=3)
        assert wanted in configs, entry


@pytest.mark.parametrize("config", [
    FboConfig(algorithm="dp-fts", agents=12, iterations=6, runs=2, q=0.4, z=1.3, budget=4.0),
    FboConfig(algorithm="dp-fts-de", agents=20, budget=3.0, calibrate_z=True, delta=1e-3, alpha=0.2),
    FboConfig(algorithm="fts", agents=8, fts_variant="concurrent", local_exploration=False),
], ids=["stop", "calibrate", "fts"])
def test_a_configuration_comes_back_from_its_comparison(config):
    (_, again), = build_variants(comparison(**comparison_values(config.to_dict())))
    assert again == config


def test_a_comparison_becomes_a_sweep_base_with_references():
    base, refs = sweep_base(dict(algorithms=["ts", "fts-de", "dp-fts-de"], agents=40, q=0.3, budget_mode="none"))
    assert base["algorithm"] == "dp-fts-de" and base["agents"] == 40 and base["q"] == 0.3
    assert "budget" not in base and "runs" not in base and refs == ["ts", "fts-de"]
    base, _ = sweep_base(dict(algorithms=["dp-fts-de"], dataset="landmine", budget_mode="stop", budget=5.0))
    assert base["agents"] is None and base["budget"] == 5.0 and base["calibrate_z"] is False
