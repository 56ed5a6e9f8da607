"""The stored 100-run reproduction (data/reproduction/), the verdicts each paper preset quotes, the small run a
page makes, and the noise schedule the teaching view explains."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from engine.fbo import FboConfig, Simulation
from engine.fbo.presets import LANDMINE
from engine.fbo.teaching import noise_schedule, teaching_config
from engine.fbo.variants import preset_in_view, preset_values
from engine.reproduce import PART_SPECS, Claim, Part, Setting, part_from_results, small_run_configs
from engine.reproduce.report import deciding_comparison, run_part
from engine.reproduce.stored import STORED_DIR, STORED_FILES, figure_verdicts, stored_part

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(STORED_FILES))
def test_the_stored_parts_are_the_commands_output_for_every_setting_and_claim(name):
    stored = stored_part(name)
    assert stored is not None, f"{STORED_DIR / STORED_FILES[name]} is missing"
    raw = json.loads(stored.path.read_text())
    assert raw["paper"] == "dp-fts-de" and list(raw["parts"]) == [name]     # one part per file, as printed
    part, payload = PART_SPECS[name], stored.payload
    runs = stored.provenance["runs"]      # the count stored (provenance says why when below the paper's)
    assert payload["runs"] == runs and (runs == 100 or name not in ("landmine", "synthetic"))
    assert runs >= 10 and (runs >= part.paper_runs or "paper" in stored.provenance["note"])
    assert [s["key"] for s in payload["settings"]] == [s.key for s in part.settings]
    assert [c["claim"] for c in payload["claims"]] == [c.text for c in part.claims]
    for setting in payload["settings"]:
        assert setting["runs"] == runs and len(setting["curve"]) == len(setting["curve_stderr"])
        assert all(s > 0 for s in setting["curve_stderr"][1:])     # over 10 or more runs: never 0 or null
    for claim, spec in zip(payload["claims"], part.claims):
        n = deciding_comparison(claim["numbers"])
        assert claim["data_kind"] == part.data_kind and claim["by_construction"] == spec.by_construction
        if spec.kind == "metric":
            assert n["runs"] == runs and n["z"] == pytest.approx(n["difference"] / n["stderr"])
    provenance = stored.provenance
    assert provenance["command"].startswith("python -m engine reproduce dp-fts-de --parts ")
    assert name in provenance["command"].split("--parts ")[1].split()[0].split(",")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", provenance["date"]) and provenance["load_average"]


@pytest.mark.parametrize("figure", ["fig2a", "fig2c", "fig2d", "fig3a", "fig3d"])
def test_a_figures_verdicts_are_its_claims_with_their_numbers(figure):
    verdicts = figure_verdicts(figure)
    part = PART_SPECS[verdicts.part]
    expected = [c.text for c in part.claims if figure in c.figures]
    assert [c["claim"] for c in verdicts.claims] == expected and expected
    held = sum(c["verdict"] == "holds" for c in verdicts.claims)
    assert verdicts.held == held and f"{held} of {len(expected)} claims hold" in verdicts.headline
    assert verdicts.details.startswith("All hold (" if held == len(expected) else "Not holding (")
    for claim in verdicts.claims:
        n = deciding_comparison(claim["numbers"])
        if claim["verdict"] != "holds" and claim["family"] == claim["claim"]:
            # A claim that does not hold is named with its paired difference and standard error.
            assert f"{claim['claim']}: {claim['verdict']} ({n['difference']:+.4f} ± {n['stderr']:.4f})" \
                in verdicts.details


def test_fig3a_note_counts_the_nine_beats_ts_claims_together():
    verdicts = figure_verdicts("fig3a")
    family = [c for c in verdicts.claims if c["family"].startswith("DP-FTS-DE beats TS")]
    assert len(family) == 9
    counts = {v: sum(c["verdict"] == v for c in family) for v in ("holds", "not significant", "reversed")}
    for verdict, count in counts.items():
        if count:
            assert f"{verdict} in {count} of 9" in verdicts.details
    assert figure_verdicts("fig9z") is None


def test_figures_and_their_settings_come_from_the_claims():
    landmine, synthetic = PART_SPECS["landmine"], PART_SPECS["synthetic"]
    assert landmine.figures == ("fig3a", "fig3d") and synthetic.figures == ("fig2a", "fig2c", "fig2d")
    assert synthetic.settings_of("fig2d") == ("dp-fts-de q=0.25", "dp-fts-de q=0.25 z=1.2", "dp-fts-de q=0.25 z=1.5")
    assert set(landmine.settings_of("fig3a")) == {s.key for s in landmine.settings}


def test_a_small_run_stepped_setting_by_setting_gives_the_reproductions_numbers():
    base = dict(dataset="synthetic", agents=6, iterations=3, features=10, n_init=3)
    toy = Part("toy", "toy", "simple regret", base,
               (Setting("ts", "TS", dict(algorithm="ts")), Setting("fts", "FTS", dict(algorithm="fts-de", P=1))),
               (Claim("FTS beats TS", "Fig. 1a", ("fts",), "ts"),), (0, 3), 3)
    reference = run_part(toy, runs=3, seed=4, jobs=1).to_json()
    results = {}
    for setting, config in small_run_configs(toy, 3, seed=4):
        sim = Simulation(config)
        for _ in sim:        # one iteration at a time, as the page steps it
            pass
        results[setting.key] = sim.result()
    small = part_from_results(toy, results).to_json()
    for ours, theirs in zip(small["settings"], reference["settings"]):
        np.testing.assert_allclose(ours["curve"], theirs["curve"])
        np.testing.assert_allclose(ours["curve_stderr"], theirs["curve_stderr"])
    assert [c["verdict"] for c in small["claims"]] == [c["verdict"] for c in reference["claims"]]
    # Only the claims whose settings ran are judged.
    assert part_from_results(toy, {"ts": results["ts"]}).to_json()["claims"] == []
    with pytest.raises(Exception, match="runs per setting"):
        small_run_configs(toy, 26)


def test_noise_schedule_is_the_simulations_noise_and_p_times_dp_ftss_early():
    config = teaching_config(agents=40, P=2, t=12, q=0.5, z=1.0, S=11.0, seed=0)
    schedule = noise_schedule(config)
    recorded = [r.server_step.noise_std for r in Simulation(config) if r.server_step is not None]
    np.testing.assert_allclose(schedule.dp_fts_de, recorded)            # exactly what the server added
    dp_fts = [r.server_step.noise_std for r in Simulation(config.replace(algorithm="dp-fts", P=1))
              if r.server_step is not None]
    np.testing.assert_allclose(dp_fts, schedule.dp_fts)
    # Early on phi_max is about P / N: the noise is P times DP-FTS's; equal once the weights are uniform (t = 10).
    assert schedule.ratio[0] == pytest.approx(2.0, rel=1e-5)
    assert schedule.even_from == 10 and np.allclose(schedule.ratio[9:], 1.0)


def test_landmine_noise_numbers_quoted_in_the_docs():
    # docs/paper-comparisons.md: 9.0 per coordinate for the first 30 iterations at q = 0.35, z = 1, 2.2 from t = 40
    # (29 agents in 4 sub-regions of 8, 7, 7, 7 explorers: phi_max = 1/7 against DP-FTS's 1/29).
    schedule = noise_schedule(FboConfig(**dict(LANDMINE, algorithm="dp-fts-de", q=0.35, z=1.0)))
    assert round(schedule.dp_fts_de[0], 1) == 9.0 and round(schedule.dp_fts, 1) == 2.2
    assert schedule.even_from == 40 and schedule.ratio[0] == pytest.approx(29 / 7, rel=1e-4)


def test_the_preset_in_view_ignores_runs_and_seed_only():
    for name in ("fig2a", "fig2c", "fig2d"):
        values = preset_values(name)
        assert preset_in_view(values) == name
        assert preset_in_view(dict(values, runs=20, seed=3)) == name
    assert preset_in_view(dict(preset_values("fig2c"), z=1.5)) is None


# The section of docs/paper-comparisons.md that shows each stored part.
@pytest.mark.parametrize("paper", ["dp-hype", "po-gp-ucb"])
def test_the_stored_dp_hype_and_po_gp_ucb_verdicts_follow_from_their_numbers(paper):
    """Each stored claim's verdict is the rule applied to its difference and standard error; DP-HYPE's file holds
    every part of its command, Figs. 7-8 at the paper's 20 runs, and says how its score tables trained."""
    from engine.reproduce.claims import redecided
    from engine.reproduce.papers import default_parts
    from engine.reproduce.stored_papers import provenance, stored_payload

    payload = stored_payload(paper)
    # The command's default parts (DP-HYPE's Fashion-MNIST part is stored apart, tests/test_hype_fashion.py).
    assert list(payload["parts"]) == list(default_parts(paper))
    claims = [c for part in payload["parts"].values() for c in part["claims"]]
    assert [c["verdict"] for c in claims] == redecided(claims)
    assert all(c["holds"] == (c["verdict"] == "holds") for c in claims)
    if paper == "dp-hype":
        labels, data = payload["parts"]["labels"], payload["parts"]["data"]
        assert labels["runs"] == 20 and {c["figure"] for c in labels["claims"]} == {"Fig. 7", "Fig. 8"}
        assert all(len(c["skew"]) == 20 and len(c["counts"]) == 10 for c in labels["cells"])
        # The paper's 20 runs, trained as the paper trains (5 rounds of 5 local epochs).
        assert data["runs"] == 20 and data["training"] == "paper" and "reduced" not in data["title"]
        assert all(cell["runs"] == 20 and (cell["rounds"], cell["epochs"]) == (5, 5) for cell in data["cells"])
        assert "--training short" not in provenance(paper)["command"]


# (docs/paper-comparisons.md's tables are made from these files: tests/test_sentences.py.)


@pytest.mark.parametrize("paper", ["dp-hype", "po-gp-ucb"])
def test_every_figure_with_a_claim_that_does_not_hold_says_what_the_investigation_found(paper):
    """The Paper reproduction page shows an investigation's conclusion under each figure whose stored claims are
    not all holding (engine/reproduce/conclusions.py); none may be missing, and none stands under a figure whose
    claims all hold."""
    from engine.reproduce.conclusions import CONCLUSIONS
    from engine.reproduce.papers import summary_rows
    from engine.reproduce.stored_papers import stored_payload

    rows = summary_rows({paper: stored_payload(paper)})
    failing = {row["figure"] for row in rows if row["not significant"] or row["reversed"] or row["inconsistent"]}
    figures = {row["figure"] for row in rows}
    explained = {figure for (name, figure) in CONCLUSIONS if name == paper and figure in figures}
    assert failing <= explained, f"no conclusion for {sorted(failing - explained)}"
    assert explained <= failing, f"conclusions under figures that hold: {sorted(explained - failing)}"
