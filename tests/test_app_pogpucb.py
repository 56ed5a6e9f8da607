"""The PO-GP-UCB page under Streamlit's AppTest: branch indicator, a short run, presets, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "5_PO_GP_UCB.py")


@pytest.fixture
def app():
    return AppTest.from_file(PAGE, default_timeout=180).run()


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_page_shows_the_curators_branch_without_running(app):
    assert not app.exception
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["largest admissible r"] == "11"
    assert float(metrics["σ_min of the centred inputs"].replace(",", "")) == pytest.approx(1030.9, abs=0.1)
    assert any("σ_min ≥ ω" in s.value for s in app.success)
    assert len(app.get("plotly_chart")) == 3  # omega, distortion, release scatter
    assert any("No run yet" in m.value for m in app.markdown)  # the regret chart's empty state says what comes
    assert not app.dataframe


def test_short_run_draws_curves_and_a_table(app):
    app.number_input(key="po_runs").set_value(2)
    app.number_input(key="po_iterations").set_value(6)
    app.button(key="po_run").click().run()
    assert not app.exception and not errors(app)
    table = app.dataframe[0].value
    assert list(table["setting"]) == ["PO-GP-UCB (log ε = 1.10, r = 10)", "GP-UCB on X (non-private)"]
    assert (table["runs"] == 2).all()


def test_the_default_runs_table_tells_the_two_lines_apart_when_both_reach_zero_regret(app):
    # With the page's defaults every run of both lines ends at the best point: the table read
    # "0.0000 ± 0.0000" twice. It now also gives the mean regret over the iterations and when the best was found.
    app.button(key="po_run").click().run()
    assert not app.exception and not errors(app)
    table = app.dataframe[0].value
    assert (table["S_50 mean"] == 0).all()
    assert any("Every run found the best point by t = 50" in c.value for c in app.caption)
    means = list(table["mean S_t over t"])
    assert all(m > 0 for m in means) and means[0] != means[1]
    found = [float(t) for t in table["found the best at t (median)"]]
    assert all(1 <= t <= 50 for t in found)


def test_table_preset_compares_the_papers_r_values(app):
    app.selectbox(key="po_preset_choice").set_value("table1").run()
    assert app.selectbox(key="po_compare").value == "r"
    assert app.text_input(key="po_values").value == "3, 6, 8, 10, 15, 20"
    assert "among the compared r: 10" in [c.value for c in app.caption]
    branches = [w.value for w in app.warning]
    assert sum("σ_min < ω" in w for w in branches) == 2  # r = 15 and r = 20 are lifted


@pytest.mark.parametrize("control, value, words", [
    ("po_r", 0, "r (projection dimension) must be at least 1"),
    ("po_iterations", 0, "must be at least 1"),
    ("po_delta", 1.5, "delta must be in (0, 1)"),
])
def test_bad_input_is_a_sentence_and_disables_run(app, control, value, words):
    app.number_input(key=control).set_value(value).run()
    assert not app.exception
    assert any(words in e for e in errors(app))
    assert app.button(key="po_run").disabled


def test_epsilon_entered_directly_must_be_positive(app):
    app.radio(key="po_eps_mode").set_value("eps").run()
    app.number_input(key="po_epsilon").set_value(-1.0).run()
    assert any("epsilon must be in [1e-06, 1000000]" in e for e in errors(app))
    app.number_input(key="po_epsilon").set_value(3.004).run()
    assert not errors(app)
    assert any("exp(1.10)" in c.value for c in app.caption)


@pytest.mark.parametrize("preset, figure", [("fig2a", "Fig. 2a"), ("table5", "Table 5"), ("fig2c", "Fig. 2c")])
def test_a_reproduced_figures_preset_quotes_its_stored_verdicts(app, preset, figure):
    from engine.reproduce.stored_papers import figure_note

    app.selectbox(key="po_preset_choice").set_value(preset).run()
    note = figure_note("po-gp-ucb", figure)
    shown = [box.value for box in (*app.info, *app.warning) if "Against the paper" in box.value]
    assert len(shown) == 1 and note.headline in shown[0]
