"""AppTest of the DP-HYPE page: noise summary, a live run matching the engine, bad input beside its control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.hype import HypeConfig, calibrate_sigma, run_hype

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "4_DP_HYPE.py")
TIMEOUT = 180  # seconds: a run plus its curve on a busy 2-core machine


@pytest.fixture
def page(cache_dir, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    return AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()


def metric(at, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r}"
    return values[0]


def test_defaults_show_the_calibrated_noise_and_empty_histograms(page):
    assert not page.exception and not page.error
    assert float(metric(page, "σ on the sum")) == pytest.approx(calibrate_sigma(0.25, 1e-5, 5), rel=5e-3)
    assert metric(page, "ε of one vote") == "0.25"
    # Before a run: a sentence saying what will appear, not charts with meaningless axes (issue 13, item 7).
    assert len(page.get("plotly_chart")) == 0
    assert any("Nothing has been voted yet" in m.value and "Run" in m.value for m in page.markdown)
    assert not any(m.label == "good candidate chosen" for m in page.metric)


def test_a_run_shows_the_engines_result(page):
    page.number_input(key="hype_repetitions").set_value(300).run()
    page.button(key="hype_run").click().run()
    assert not page.exception and not page.error
    expected = run_hype(HypeConfig(clients=250, candidates=100, good=5, sigma_loss=0.5, k=5, epsilon=0.25,
                                   repetitions=300, seed=0))
    assert metric(page, "good candidate chosen") == f"{expected.success_rate:.1%}"
    assert metric(page, "winner (last)") == f"#{expected.winner}"
    assert len(page.get("plotly_chart")) == 4  # three vote histograms and the success curve
    # Changing a plot option keeps the result; changing a setting marks it as stale.
    page.number_input(key="hype_seed").set_value(1).run()
    assert any("settings changed" in info.value for info in page.info)
    assert metric(page, "good candidate chosen") == f"{expected.success_rate:.1%}"


@pytest.mark.parametrize("control, value, sentence", [
    ("hype_k", 101, "k must be at most the number of candidates p (100), got 101."),
    ("hype_k", 0, "k must be >= 1, got 0."),
    ("hype_epsilon", 0.0, "epsilon must be in [0.01, 10000], got 0."),
    ("hype_delta", 1.0, "delta must be in (0, 1), got 1."),
    ("hype_xi", 1.0, "dropout tolerance xi must be in [0, 1), got 1."),
    ("hype_good", 150, "The number of good candidates must be at most the number of candidates (100), got 150."),
])
def test_bad_input_shows_its_sentence_and_runs_nothing(page, control, value, sentence):
    page.number_input(key=control).set_value(value).run()
    assert not page.exception
    assert [e.value for e in page.error] == [sentence]
    assert page.button(key="hype_run").disabled
    assert not any(m.label == "σ on the sum" for m in page.metric)


def test_sigma_zero_means_no_privacy(page):
    page.radio(key="hype_noise").set_value("sigma").run()
    page.number_input(key="hype_sigma").set_value(0.0).run()
    assert not page.error
    assert metric(page, "ε of one vote") == "∞ (no noise)"


def test_data_mode_reports_dp_hype_opt_and_randguess(page):
    page.radio(key="hype_mode").set_value("data").run()
    page.selectbox(key="hype_dataset").set_value("breast-cancer").run()
    page.number_input(key="hype_clients").set_value(100).run()
    page.number_input(key="hype_runs").set_value(2).run()
    page.number_input(key="hype_repetitions").set_value(200).run()
    page.button(key="hype_run").click().run()
    assert not page.exception and not page.error
    hype, opt, rand = (float(metric(page, f"{name} accuracy")) for name in ("DP-HYPE", "OPT", "RANDGUESS"))
    # 100 clients give the best candidates ~90 clean votes against noise sigma 12.8 at epsilon 1.
    assert rand < hype <= opt
    assert len(page.get("plotly_chart")) == 5  # histograms, success curve, accuracy against epsilon
    # How the candidates trained: the paper's schedule on a bundled set (the stand-ins say theirs is reduced).
    assert any("5 rounds of 5 local epochs" in c.value for c in page.caption)


def test_presets_fill_the_controls(page):
    page.selectbox(key="hype_preset_choice").set_value("fig2a").run()
    assert page.number_input(key="hype_sigma_loss").value == pytest.approx(0.2)
    assert page.number_input(key="hype_repetitions").value == 2000
    assert page.checkbox(key="hype_fig2a").value
    page.selectbox(key="hype_preset_choice").set_value("digits-noniid").run()
    assert page.radio(key="hype_mode").value == "data"
    assert page.number_input(key="hype_alpha").value == pytest.approx(0.5)
    assert page.number_input(key="hype_clients").value == 100


def test_fig2a_grid_is_drawn_when_asked(page):
    page.number_input(key="hype_repetitions").set_value(100).run()
    page.checkbox(key="hype_fig2a").check().run()
    page.button(key="hype_run").click().run()
    assert not page.exception and not page.error
    assert len(page.get("plotly_chart")) == 5  # histograms, success curve, Fig. 2a
    assert any("Paper Fig. 2a" in header.value for header in page.subheader)


@pytest.mark.parametrize("preset, figure", [("fig2a", "Fig. 2a"), ("fig2b", "Fig. 2b"), ("fig4-cifar", "Fig. 4"),
                                            ("fig5-mnist", "Fig. 5"), ("fig7-cifar", "Fig. 7"),
                                            ("fig8-adult", "Fig. 8"), ("fig9-mnist", "Fig. 9")])
def test_a_reproduced_figures_preset_quotes_its_stored_verdicts(page, preset, figure):
    from engine.reproduce.stored_papers import figure_note

    page.selectbox(key="hype_preset_choice").set_value(preset).run()
    assert not page.exception
    note = figure_note("dp-hype", figure)
    shown = [box.value for box in (*page.info, *page.warning) if "Against the paper" in box.value]
    assert len(shown) == 1 and note.headline in shown[0]
    if preset == "fig5-mnist":
        assert page.selectbox(key="hype_dataset").value == "mnist-like"
    # The data figures are drawn from the stored reproduction beside the verdicts: Figs. 7-8 the label mix of the
    # first clients, Figs. 4 and 9 the candidates' accuracies, Fig. 5 the preset's setting against epsilon.
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in page.get("plotly_chart")]
    drawn = [t.split(",")[0] if t.startswith(figure + ":") else t for t in titles
             if t.startswith((figure + ":", figure + " (stored"))]
    assert drawn == {"Fig. 7": ["Fig. 7: mnist-like stand-in", "Fig. 7: cifar-like stand-in"],
                     "Fig. 8": ["Fig. 8: adult-like stand-in"],
                     "Fig. 4": ["Fig. 4 (stored, n = 100, iid): the 100 candidates' test accuracies"],
                     "Fig. 5": ["Fig. 5 (stored): mnist-like, n = 100, iid, 20 runs"],
                     "Fig. 9": ["Fig. 9 (stored, n = 50, mnist-like): the 100 candidates' test accuracies"],
                     }.get(figure, [])
