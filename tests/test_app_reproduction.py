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


def verdict_tables(at) -> list:
    """The tables of claims (the page opens on the per-paper summary, another table)."""
    return [t.value for t in at.table if "verdict" in t.value.columns]


def chart_titles(at) -> list[str]:
    return [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]


@pytest.mark.parametrize("name", ["landmine", "synthetic"])
def test_the_page_shows_the_stored_curves_verdicts_and_checkpoints(name):
    at = page(part=name)
    stored = stored_part(name).payload
    assert not at.error and not [w for w in at.warning if w.value.startswith("Only")]   # 100 runs: a test
    # The part's curves only: the other papers are one choice of the paper selector away.
    [title] = chart_titles(at)
    assert f"{stored['runs']} runs" in title and "s.e. over runs" in title
    [verdicts], checkpoints = verdict_tables(at), checkpoint_frame(at)
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
    [verdicts], checkpoints = verdict_tables(at), checkpoint_frame(at)
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
    # At the page's default runs: a plain sentence beside the disabled Run, the stored results below it.
    assert not at.error and any("A small run of this part with 4 runs per setting is more than the 1 s"
                                in str(c.value) for c in at.caption)
    assert at.button(key="repro_run").disabled
    at.number_input(key="repro_runs").set_value(6).run()      # runs the visitor chose: refused at the control
    assert len(at.error) == 1 and "This reproduction needs about" in at.error[0].value
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
    # Each claim that is alone in its family and does not hold is quoted with its verdict and numbers.
    families = [c["family"] for c in verdicts.claims]
    alone = [c for c in verdicts.claims if c["verdict"] != "holds" and families.count(c["family"]) == 1]
    assert alone and verdicts.headline in note and "Not holding (" in note
    for claim in alone:
        n = deciding_comparison(claim["numbers"])
        assert f"{claim['family']}: {claim['verdict']} ({n['difference']:+.4f} ± {n['stderr']:.4f})" in note


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
    from engine.reproduce.papers import data_label
    from engine.reproduce.stored_papers import figure_order, summary

    at = page(part="synthetic")
    table = at.dataframe[0].value
    rows = summary()
    assert {"dp-fts-de", "fts", "dp-hype", "po-gp-ucb"} <= {r["paper"] for r in rows}
    assert list(table["figure"]) == [r["figure"] for r in rows]
    assert list(table["hold"]) == [r["holds"] for r in rows]
    assert list(table["reversed"]) == [r["reversed"] for r in rows]
    assert list(table["inconsistent"]) == [r["inconsistent"] for r in rows]
    # Each row says what its data is; identities are counted apart and other data sets beside the tally.
    assert list(table["data"]) == [data_label(r["kinds"]) for r in rows]
    assert list(table["by construction"]) == [r["by construction"] for r in rows]
    assert list(table["other data (beside)"]) == [r["other data"] for r in rows]
    assert "stand-in" in set(table["data"]) and "generated" in set(table["data"])
    # Above it, the verdicts per paper and data kind, never added up across kinds, identities in rows of their own.
    from engine.reproduce.tallies import stored_tallies
    from ui.reproduction.papers import SHORT_KINDS as KIND_LABELS

    per_kind = at.table[0].value
    tallies = stored_tallies()
    expected = [(p, KIND_LABELS[k]) for p in ("dp-fts-de", "fts", "dp-hype", "po-gp-ucb") for k in tallies[p]]
    names = {"dp-fts-de": "DP-FTS-DE", "fts": "FTS", "dp-hype": "DP-HYPE", "po-gp-ucb": "PO-GP-UCB"}
    assert list(zip(per_kind["paper"], per_kind["data"])) == [(names[p], k) for p, k in expected]
    fig11 = per_kind[(per_kind["paper"] == "DP-FTS-DE") & (per_kind["data"] == KIND_LABELS["identity"])]
    assert list(fig11["claims"]) == [tallies["dp-fts-de"]["identity"]["claims"]]
    ours = per_kind[(per_kind["paper"] == "DP-FTS-DE") & (per_kind["data"] == KIND_LABELS["paper"])].iloc[0]
    assert ours["reversed"] == tallies["dp-fts-de"]["paper"]["reversed"]
    assert ours["n.s., leans the paper's way"] == tallies["dp-fts-de"]["paper"]["readings"]["leans the paper's way"]
    paper_of = {"DP-FTS-DE": "dp-fts-de", "FTS": "fts", "DP-HYPE": "dp-hype", "PO-GP-UCB": "po-gp-ucb"}
    for link, r in zip(table["see"], rows):
        assert link.startswith(f"Paper_reproduction?paper={r['paper']}") and link.endswith(f"#{r['anchor']}")
    # Each paper's figures in the paper's order (DP-HYPE's Fig. 4 before Fig. 5, 9 after 8).
    for paper in {r["paper"] for r in rows}:
        figures = [r["figure"] for r in rows if r["paper"] == paper]
        assert figures == sorted(figures, key=figure_order), (paper, figures)
    assert [r["figure"] for r in rows if r["paper"] == "dp-hype"][:8] == [
        "Fig. 2a", "Fig. 2b", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8"]
    # Every figure of the chosen paper has its claims under the anchor the summary links to.
    for paper in ("dp-hype", "po-gp-ucb"):
        chosen = page(paper=paper)
        headers = [h.proto.anchor for h in chosen.subheader]
        assert [a for a in headers if a.startswith(paper)] == [r["anchor"] for r in rows if r["paper"] == paper]
        assert {paper_of[t] for t in table["paper"]} >= {paper}


def test_the_title_the_selector_and_the_summary_name_every_stored_paper():
    from engine.reproduce.stored_papers import stored_payloads

    at = page()
    names = {"dp-fts-de": "DP-FTS-DE", "fts": "FTS", "dp-hype": "DP-HYPE", "po-gp-ucb": "PO-GP-UCB"}
    stored = set(stored_payloads())
    assert stored == set(names)                                   # the four papers' files are in the project
    title = at.title[0].value
    assert all(names[p] in title for p in stored), title
    selector = at.sidebar.radio[0]
    assert selector.label == "paper" and set(selector.options) >= {
        "DP-FTS-DE (Dai et al. 2021)", "FTS (Dai, Low and Jaillet 2020)"} and len(selector.options) == 4
    assert all(any(o.startswith(names[p] + " (") for o in selector.options) for p in stored)
    per_kind = at.table[0].value
    assert list(dict.fromkeys(per_kind["paper"])) == ["DP-FTS-DE", "FTS", "DP-HYPE", "PO-GP-UCB"]


def test_one_paper_at_a_time_its_claims_in_full_and_each_investigation_once():
    from engine.reproduce.investigations import investigation
    from engine.reproduce.stored_papers import claims_of, summary

    at = page(part="landmine")
    stored = stored_part("landmine").payload
    [verdicts] = verdict_tables(at)
    assert "investigation" not in verdicts.columns
    notes = [m.value for m in at.markdown if m.value.startswith("**Investigated")]
    expected = {investigation(c["claim"], c["verdict"]) for c in stored["claims"]} - {""}
    assert len(notes) == len(expected) and all(sum(n.endswith(e) for n in notes) == 1 for e in expected)
    assert not [h for h in at.subheader if h.value.startswith(("DP-HYPE", "PO-GP-UCB"))]   # one paper at a time
    # DP-HYPE: every figure's claims in full (no cut text), runs as whole numbers, the stored data figures.
    hype = page(paper="dp-hype")
    assert not hype.error and not [c for c in chart_titles(hype) if "s.e. over runs" in c]
    tables = verdict_tables(hype)
    figures = [r["figure"] for r in summary() if r["paper"] == "dp-hype"]
    assert len(tables) == len(figures) + 1          # and, after them, Fashion-MNIST's beside the tally
    tables = tables[:len(figures)]
    for table, figure in zip(tables, figures):
        claims = claims_of("dp-hype", figure)
        assert list(table["the paper claims"]) == [c["claim"] for c in claims]
        assert all(r == "—" or r.isdigit() for r in table["runs"]), list(table["runs"])
    labels = [t for t in chart_titles(hype) if t.startswith(("Fig. 7:", "Fig. 8:"))]
    assert [t.split(",")[0] for t in labels] == ["Fig. 7: mnist-like stand-in", "Fig. 7: cifar-like stand-in",
                                                 "Fig. 8: adult-like stand-in"]
    curves = [t.split(" (stored")[0] for t in chart_titles(hype) if " (stored" in t]
    assert sorted(curves) == ["Fig. 10", "Fig. 11", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 9"]     # each once
    # Each figure's investigation is written once, under its figure.
    shown = [m.value for m in hype.markdown if m.value.startswith("**Investigated.**")]
    assert len(shown) == len(set(shown)) and shown


def test_the_estimate_before_run_says_it_includes_a_missing_tables_build(tmp_path, monkeypatch):
    # A part whose table of scores is not built yet (a fresh cache): the estimate shown before Run holds the
    # build, and says so with the build's own figure; the runs alone are what the limit checks (the build is a
    # job of its own, started by Run), so the part's default is not refused for its first build.
    from engine.fbo.plan import lines_cost, resolve_agents
    from engine.limits import format_seconds
    from engine.limits.fbo import objective_cost
    from engine.reproduce import small_run_configs

    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    at = page(part="har-standin")
    assert not at.error and not at.button(key="repro_run").disabled
    configs = tuple(c for _, c in small_run_configs(PART_SPECS["har-standin"], 4, 0))
    runs = lines_cost(configs, objectives_built=True).seconds
    build = objective_cost("har-standin", resolve_agents(configs[0]), domain=configs[0].domain).seconds
    assert build > 0 and lines_cost(configs).seconds == pytest.approx(runs + build)
    [caption] = [c.value for c in at.caption if c.value.startswith("Runs all")]
    assert f"(about {format_seconds(runs + build)} of computing, which includes building the har-standin table " \
           "of scores first, once)" in caption, caption
    assert f"The table's build is about {format_seconds(build)} of that" in caption, caption


def test_an_investigation_shows_its_ablation_table():
    from engine.reproduce.ablation_tables import stored_ablations

    if stored_ablations() is None:
        pytest.skip("data/reproduction/ablations.json not generated")
    at = page(part="heterogeneous")
    tables = [d.value for d in at.dataframe if "our deviation" in d.value.columns]
    assert len(tables) == 1 and tables[0]["verdict with it"][0].startswith("reversed")
    assert tables[0]["verdict without it"][0].startswith("reversed")
    pogpucb = page(paper="po-gp-ucb")
    extents = [d.value for d in pogpucb.dataframe if "our deviation" in d.value.columns]
    assert extents and any("3.75" in a for t in extents for a in t["the authors' way"])


def test_dp_hype_shows_its_fashion_mnist_claims_beside_its_tally():
    """DP-HYPE's Fashion-MNIST part (real images the paper did not use) is shown after the paper's figures, every
    stored claim in full, and counted beside the tally, not in it."""
    from engine.reproduce.stored_papers import stored_beside, stored_payload, summary

    beside = stored_beside("dp-hype")
    assert list(beside) == ["fashion-mnist"]
    claims = beside["fashion-mnist"]["claims"]
    at = page(paper="dp-hype")
    assert not at.error
    assert at.subheader[-1].proto.anchor == "other-data-fashion-mnist"
    assert list(verdict_tables(at)[-1]["the paper claims"]) == [c["claim"] for c in claims]
    assert any("beside its tally and not in it" in c.value and f"{len(claims)} claims" in c.value
               for c in at.caption)
    # The summary's DP-HYPE rows count the paper's stored claims only.
    own = sum(len(part["claims"]) for part in stored_payload("dp-hype")["parts"].values())
    assert sum(r["claims"] for r in summary() if r["paper"] == "dp-hype") == own


def test_without_the_landmine_file_the_page_opens_and_says_where_it_goes(tmp_path, monkeypatch):
    """A checkout without LandmineData.mat: the page opens on the stored results (no traceback), Run is off for
    the landmine part, and the main area says where the file goes."""
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path))
    at = page(part="landmine")
    assert not at.error
    assert any("needs its data file" in w.value and str(tmp_path) in w.value for w in at.warning)
    assert at.button(key="repro_run").disabled
