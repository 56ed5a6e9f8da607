"""AppTest of the Paper reproduction page, the paper presets' notes (Federated BO, Trade-off explorer) and the
teaching view's noise comparison: every number shown is the engine's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.fbo.teaching import MAX_ROUND, noise_schedule, teaching_config
from engine.reproduce import PART_SPECS, Claim, Part, Setting
from engine.reproduce.report import deciding_comparison, run_part
from engine.reproduce.stored import figure_verdicts, stored_part

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "8_Paper_reproduction.py")
FBO = str(ROOT / "pages" / "1_Federated_BO.py")
TRADEOFF = str(ROOT / "pages" / "6_Tradeoff_explorer.py")
TEACH = str(ROOT / "pages" / "2_Teaching_view.py")
TIMEOUT = 180   # seconds; generous for a busy 2-core machine


def page(path=PAGE, **query) -> AppTest:
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def checkpoint_frame(at):
    """The part's checkpoint table (the page opens on the summary of every paper, another dataframe)."""
    return next(d.value for d in at.dataframe if "setting" in d.value.columns)


def chart_titles(at) -> list[str]:
    return [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]


@pytest.mark.parametrize("name", ["landmine", "synthetic"])
def test_the_page_shows_the_stored_curves_verdicts_and_checkpoints(name):
    at = page(part=name)
    stored = stored_part(name).payload
    assert not at.error and not [w for w in at.warning if w.value.startswith("Only")]   # 100 runs: a test
    # The part's curves, and further down DP-HYPE's stored data figures: the label distributions (Figs. 7-8, one
    # chart per stand-in), the candidates' accuracies (Figs. 4 and 9) and accuracy against epsilon (5, 6, 10, 11).
    labels = [t for t in chart_titles(at) if t.startswith(("Fig. 7:", "Fig. 8:"))]
    assert [t.split(",")[0] for t in labels] == ["Fig. 7: mnist-like stand-in", "Fig. 7: cifar-like stand-in",
                                                 "Fig. 8: adult-like stand-in"]
    hype = [t.split(" (stored")[0] for t in chart_titles(at) if " (stored" in t]
    assert sorted(hype) == ["Fig. 10", "Fig. 11", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 9"]     # each once
    [title] = [t for t in chart_titles(at) if t not in labels and " (stored" not in t]
    assert f"{stored['runs']} runs" in title and "s.e. over runs" in title
    verdicts, checkpoints = at.table[0].value, checkpoint_frame(at)
    assert list(verdicts["the paper claims"]) == [c["claim"] for c in stored["claims"]]
    assert list(verdicts["verdict"]) == [c["verdict"] for c in stored["claims"]]
    for (_, row), claim in zip(verdicts.iterrows(), stored["claims"]):
        n = deciding_comparison(claim["numbers"])
        assert row["difference ± s.e."].startswith(f"{n['difference']:+.4f} ± {n['stderr']:.4f}")
    assert list(checkpoints["setting"]) == [s["label"] for s in stored["settings"]]
    last = stored["checkpoints"][-1]
    for (_, row), setting in zip(checkpoints.iterrows(), stored["settings"]):
        point = setting["checkpoints"][str(last)]
        assert row[f"t = {last}"] == f"{point['mean']:.4f} ({point['stderr']:.4f})"
    # The provenance of the stored file is on the page.
    assert any(c.value.startswith("Stored with `python -m engine reproduce dp-fts-de --parts " + name)
               for c in at.caption)


def test_the_lines_drawn_follow_the_papers_figures():
    at = page(part="synthetic")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    drawn = [t["name"] for t in spec["data"] if t.get("fill") != "toself"]
    part = PART_SPECS["synthetic"]
    labels = {s.key: s.label for s in part.settings}
    assert drawn == [labels[k] for k in part.settings_of("fig2d")]        # the default: the part's last figure
    at.segmented_control(key="repro_stored_lines").set_value("fig2a").run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t["name"] for t in spec["data"] if t.get("fill") != "toself"] == [labels[k] for k in
                                                                             part.settings_of("fig2a")]
    bands = [t for t in spec["data"] if t.get("fill") == "toself"]
    assert len(bands) == 4                                                 # one s.e. band per line, over runs


TINY = Part("synthetic", "A tiny synthetic part", "simple regret",
            dict(dataset="synthetic", agents=6, iterations=3, features=10, n_init=3),
            (Setting("ts", "TS", dict(algorithm="ts")), Setting("fts", "FTS (fts-de, P = 1)",
                                                                dict(algorithm="fts-de", P=1))),
            (Claim("FTS converges faster than TS", "Sec. 5.1, Fig. 2a", ("fts",), "ts"),), (0, 3), 5)


def test_a_small_live_run_shows_the_same_numbers_as_the_command_line(monkeypatch):
    # The page's own part is 9 settings of 200 agents: the mechanics are the same for a tiny part.
    monkeypatch.setitem(PART_SPECS, "synthetic", TINY)
    at = page(part="synthetic")
    at.number_input(key="repro_runs").set_value(3).run()
    at.button(key="repro_run").click().run()
    assert not at.exception and not at.error
    reference = run_part(TINY, runs=3, seed=0, jobs=1).to_json()        # what the CLI prints for these runs
    verdicts, checkpoints = at.table[0].value, checkpoint_frame(at)
    [claim] = reference["claims"]
    n = deciding_comparison(claim["numbers"])
    assert list(verdicts["verdict"]) == [claim["verdict"]]
    assert verdicts["difference ± s.e."][0] == f"{n['difference']:+.4f} ± {n['stderr']:.4f}" and n["runs"] == 3
    assert any("what 3 paired runs say" in m.value for m in at.markdown)
    assert any(w.value.startswith("Only 3 runs per setting") for w in at.warning)   # a demonstration, not a test
    for (_, row), setting in zip(checkpoints.iterrows(), reference["settings"]):
        point = setting["checkpoints"]["3"]
        assert row["t = 3"] == f"{point['mean']:.4f} ({point['stderr']:.4f})"
    # The stored results stay one click away.
    control = at.segmented_control(key="repro_source")
    assert control.value == "live" and list(control.options) == ["stored: 100 runs per setting",
                                                                  "your run: 3 runs per setting"]


def test_a_small_run_over_the_hosts_limit_is_refused(monkeypatch):
    monkeypatch.setenv("DPBO_MAX_SECONDS", "1")
    at = page(part="synthetic")
    assert len(at.error) == 1 and "This reproduction needs about" in at.error[0].value
    assert at.button(key="repro_run").disabled
    at.number_input(key="repro_runs").set_value(40).run()     # beyond one block: a sentence, never a traceback
    assert not at.exception and any("runs per setting" in e.value for e in at.error)


@pytest.mark.parametrize("figure", ["fig2a", "fig2c", "fig2d"])
def test_the_federated_bo_presets_say_what_the_reproduction_found(figure):
    at = page(FBO, preset=figure)
    verdicts = figure_verdicts(figure)
    notes = [box.value for box in (*at.warning, *at.info) if "Against the paper" in box.value]
    assert len(notes) == 1 and verdicts.headline in notes[0] and verdicts.details in notes[0]
    # Changing a compared setting leaves the figure: the note goes.
    at.number_input(key="fbo_agents").set_value(50).run()
    assert not [box for box in (*at.warning, *at.info) if "Against the paper" in box.value]


def test_the_default_federated_bo_page_has_no_paper_note():
    at = page(FBO)
    assert not [box for box in (*at.warning, *at.info) if "Against the paper" in box.value]


def test_the_tradeoff_fig3a_preset_says_which_claims_do_not_hold():
    at = page(TRADEOFF, preset="fig3a")
    verdicts = figure_verdicts("fig3a")
    [note] = [box.value for box in at.warning if "Against the paper" in box.value]
    [reversed_claim] = [c for c in verdicts.claims if c["verdict"] == "reversed"]
    n = deciding_comparison(reversed_claim["numbers"])
    assert verdicts.headline in note and "Not holding (" in note
    assert f"reversed ({n['difference']:+.4f} ± {n['stderr']:.4f})" in note


def test_the_teaching_view_explains_the_early_noise_with_the_engines_numbers():
    at = AppTest.from_file(TEACH, default_timeout=TIMEOUT)
    at.session_state["teach_step"] = 6
    at.run()
    assert not at.exception and not at.error
    schedule = noise_schedule(teaching_config(agents=100, P=2, t=3, q=0.5, z=1.0, S=11.0, seed=0), MAX_ROUND)
    [text] = [m.value for m in at.markdown if "times noisier" in m.value]
    assert f"**{schedule.dp_fts_de[0]:.3f}**" in text and f"**{schedule.dp_fts:.3f}**" in text
    assert f"**DP-FTS-DE's first rounds are {schedule.ratio[0]:.1f} times noisier than DP-FTS's** (P = 2)" in text
    assert f"even out at t = {schedule.even_from}" in text and "not a bug" in text
    [why] = [m.value for m in at.markdown if "≈ P/N" in m.value]
    assert f"φ_max = {schedule.phi_max[0]:.4f} ≈ P/N" in why and "1/N = 0.0100" in why
    assert chart_titles(at) == ["Noise std z·φ_max·S/q per coordinate, round by round"]
    # More sub-regions, more early noise: the text follows the settings.
    at.number_input(key="teach_P").set_value(4).run()
    [text] = [m.value for m in at.markdown if "times noisier" in m.value]
    assert "**DP-FTS-DE's first rounds are 4.0 times noisier than DP-FTS's** (P = 4)" in text


def test_the_fts_paper_shows_its_stored_verdicts_and_what_cannot_be_reproduced():
    from engine.reproduce import fts

    at = page(paper="fts")
    stored = fts.stored()["output"]
    assert not at.error
    assert len(chart_titles(at)) == len(stored["parts"])
    shown = [list(table.value["the paper claims"]) for table in at.table if "verdict" in table.value.columns]
    assert shown == [[c["claim"] for c in part["claims"]] for part in stored["parts"].values()]
    missing = at.table[-1].value
    assert list(missing["figure"]) == ["Fig. 2b", "Fig. 2c", "Fig. 3b", "Fig. 3c"]
    assert any(c.value.startswith("Stored with `python -m engine reproduce fts") and "AMD" in c.value
               for c in at.caption)


def test_the_page_opens_on_every_papers_summary_with_a_link_to_each_figures_claims():
    from engine.reproduce.stored_papers import stored_payloads, summary

    at = page(part="synthetic")
    table = at.dataframe[0].value
    rows = summary()
    assert {"dp-fts-de", "po-gp-ucb"} <= {r["paper"] for r in rows}
    assert list(table["figure"]) == [r["figure"] for r in rows]
    assert list(table["hold"]) == [r["holds"] for r in rows]
    assert list(table["reversed"]) == [r["reversed"] for r in rows]
    assert all(link == f"#{r['anchor']}" for link, r in zip(table["see"], rows))
    # Every figure of the other papers has its claims under the anchor the summary links to.
    headers = {h.proto.anchor for h in at.subheader}
    payloads = stored_payloads()
    for row in rows:
        if row["paper"] != "dp-fts-de" and row["paper"] in payloads:
            assert row["anchor"] in headers
