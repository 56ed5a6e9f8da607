"""AppTest of the federated BO page and the teaching view."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.fbo.presets import PRESETS
from ui.fbo.controls import RUN_KEY
from ui.kit.run_loop import RunStatus

ROOT = Path(__file__).resolve().parents[1]
FBO = str(ROOT / "pages" / "1_Federated_BO.py")
TEACH = str(ROOT / "pages" / "2_Teaching_view.py")
TIMEOUT = 120  # seconds; generous for a busy 2-core machine
# A run small enough for a unit test: 10 agents, 4 iterations, 2 runs.
SMALL = {"fbo_agents": 10, "fbo_iterations": 4, "fbo_runs": 2}


def small_page(**query) -> AppTest:
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    for key, value in SMALL.items():
        at.number_input(key=key).set_value(value)
    return at.run()


def run_state(at):
    return at.session_state[RUN_KEY] if RUN_KEY in at.session_state else None


def done(state) -> bool:
    return state is not None and state.status is RunStatus.DONE


def test_defaults_render_without_exception():
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert not at.error
    assert not at.button(key="fbo_run").disabled
    # Empty chart frames wait for the run; nothing has run yet.
    assert len(at.get("plotly_chart")) == 2
    assert run_state(at) is None
    # The privacy preview shows epsilon for the private default line.
    assert any("ε after T" in col for df in at.dataframe for col in df.value.columns)


def test_short_run_produces_charts_and_downloads():
    at = small_page()
    at.button(key="fbo_run").click().run()
    assert not at.exception and not at.error
    state = run_state(at)
    assert done(state)
    assert state.labels == ["TS", "DP-FTS-DE"]
    assert [len(res.records) for res in state.results] == [5, 5]
    assert "Finished" in at.success[0].value
    charts = at.get("plotly_chart")
    assert len(charts) >= 4  # convergence, privacy, clipping, selection (+ weights, heat map in tabs)
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in charts]
    assert any(t.startswith("Convergence") for t in titles)
    assert any(t.startswith("Privacy loss") for t in titles)
    labels = [button.label for button in at.get("download_button")]
    assert labels == ["Results (CSV)", "Configuration (JSON)", "Curves and ε (JSON)", "Export as a Flower app"]
    # The exported app deploys this run's delta (the product's rule for 10 agents), and the page says which.
    assert any("delta = 1e-05 for 10 agents (the product's rule" in caption.value for caption in at.caption)
    table = pd.read_csv(io.BytesIO(state.cache["csv"]))
    # One row per line x run x agent x query: the 10 initial points (iteration 0), then one per iteration 1..4.
    assert len(table) == 2 * 2 * 10 * (10 + 4)
    assert {"query", "x0", "y"} <= set(table.columns) and table["iteration"].max() == 4
    # As in a sweep table: "metric" names what is measured, "utility" holds the number (issue 13, item 9).
    assert set(table["metric"]) == {"simple regret"} and table["utility"].dtype == float
    assert set(table["line"]) == {"TS", "DP-FTS-DE"}
    private = table[table["line"] == "DP-FTS-DE"]
    assert (np.diff(private.groupby("iteration")["epsilon"].first().to_numpy()) > 0).all()


def test_a_single_run_shows_no_standard_error():
    at = small_page()
    at.number_input(key="fbo_runs").set_value(1).run()
    at.button(key="fbo_run").click().run()
    assert not at.exception and done(run_state(at))
    summary = next(df.value for df in at.dataframe if "± s.e. over runs" in df.value.columns)
    assert set(summary["± s.e. over runs"]) == {"—"}          # one run: nothing to estimate it from
    conv = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Convergence"))
    assert not [t for t in conv["data"] if t.get("fill") == "toself"]
    at.number_input(key="fbo_runs").set_value(2).run()
    at.button(key="fbo_run").click().run()
    summary = next(df.value for df in at.dataframe if "± s.e. over runs" in df.value.columns)
    assert "—" not in set(summary["± s.e. over runs"])


def test_plot_option_does_not_rerun_the_simulation():
    at = small_page()
    at.button(key="fbo_run").click().run()
    results = run_state(at).results
    at.toggle(key="fbo_opt_log").set_value(True).run()
    assert not at.exception
    assert run_state(at).results is results  # the same objects: nothing was recomputed
    layout = next(json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")
                  if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Convergence"))
    assert layout["yaxis"]["type"] == "log"


def test_budget_modes_stop_releases_or_calibrate_z():
    from engine.privacy import DEFAULT_ACCOUNTANT, default_delta, epsilon_curve

    curve = epsilon_curve(0.25, 1.0, 4, default_delta(10), DEFAULT_ACCOUNTANT)
    budget = float(curve[1]) + 1e-3  # enough for two releases, not three
    at = small_page()
    at.radio(key="fbo_budget_mode").set_value("stop").run()
    at.number_input(key="fbo_budget").set_value(budget).run()
    preview = at.dataframe[0].value
    assert "2 (stops after t = 2)" in preview["server releases"].tolist()
    at.button(key="fbo_run").click().run()
    dp = run_state(at).results[1]
    eps = [r.epsilon for r in dp.records]
    assert dp.budget_reached_at == 2
    assert max(eps) <= budget and eps[-1] == eps[2]  # no privacy spent after the server went quiet

    at.radio(key="fbo_budget_mode").set_value("calibrate").run()
    at.button(key="fbo_run").click().run()
    dp = run_state(at).results[1]
    # The budget only covers two releases at z = 1, so four releases need more noise.
    assert dp.z > 1.0
    final = dp.records[-1].epsilon
    assert final <= budget + 1e-9
    assert final == pytest.approx(budget, rel=0.02)  # z is calibrated to 1e-4, so epsilon ends at the budget


def test_invalid_input_shows_sentence_and_runs_nothing():
    at = small_page()
    cases = [("fbo_q", 0.0, 0.25, ("q must be in (0, 1]", "got 0")),
             ("fbo_z", -1.0, 1.0, ("z must be > 0", "got -1")),
             ("fbo_S", 0.0, 11.0, ("S must be > 0",)),
             ("fbo_P", 20, 2, ("P must be at most the number of agents (10)", "got 20")),
             ("fbo_delta", 1.0, 0.001, ("delta must be in (0, 1)", "got 1")),
             ("fbo_iterations", 0, 4, ("number of iterations T must be", "got 0"))]
    for key, bad, good, words in cases:
        at.number_input(key=key).set_value(bad).run()
        assert not at.exception
        assert len(at.error) == 1
        assert all(word in at.error[0].value for word in words), at.error[0].value
        assert at.button(key="fbo_run").disabled
        at.number_input(key=key).set_value(good).run()
        assert not at.error and not at.button(key="fbo_run").disabled
    assert run_state(at) is None


def test_run_larger_than_the_host_limit_is_refused(monkeypatch):
    from engine.fbo import FboConfig
    from engine.fbo.plan import make_plan

    # A limit the DP-FTS-DE line fits under and the two lines (TS + DP-FTS-DE, each 10 agents x 4 iterations x
    # 2 runs; the private one also accounts its privacy) do not.
    ts, dp = (make_plan(FboConfig(algorithm=a, agents=10, iterations=4, runs=2, features=50)).cost.seconds
              for a in ("ts", "dp-fts-de"))
    monkeypatch.setenv("DPBO_MAX_SECONDS", f"{max(ts, dp) + min(ts, dp) / 2:.9g}")
    at = small_page()
    assert len(at.error) == 1
    assert "These 2 lines need about" in at.error[0].value and "the limit here is" in at.error[0].value
    assert at.button(key="fbo_run").disabled
    at.multiselect(key="fbo_algorithms").set_value(["dp-fts-de"]).run()
    assert not at.error and not at.button(key="fbo_run").disabled


def test_failing_run_shows_a_message_and_leaves_the_page_usable(monkeypatch):
    import engine.fbo

    class Broken:
        def __init__(self, config, objective=None):
            raise RuntimeError("the engine broke")

    monkeypatch.setattr(engine.fbo, "Simulation", Broken)
    at = small_page()
    at.button(key="fbo_run").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "the engine broke" in at.error[0].value
    assert not at.button(key="fbo_run").disabled
    monkeypatch.undo()
    at.button(key="fbo_run").click().run()
    assert done(run_state(at)) and not at.error


def test_unavailable_dataset_turns_run_off_and_says_where_the_file_goes(monkeypatch, tmp_path):
    # Issue 13, item 2: checked before Run, said in the main area in one or two lines, the preview kept.
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path))  # an empty data folder: no LandmineData.mat
    at = small_page()
    assert not at.button(key="fbo_run").disabled
    at.selectbox(key="fbo_dataset").set_value("landmine").run()
    assert not at.exception and not at.error
    assert at.button(key="fbo_run").disabled
    [warning] = [w.value for w in at.main.warning]
    assert str(tmp_path / "landmine" / "LandmineData.mat") in warning
    assert "http://www.ee.duke.edu/~lcarin/LandmineData.zip" in warning   # what `data fetch` downloads
    assert not at.sidebar.warning and not at.sidebar.error
    # The privacy preview stays: ε needs no data (29 fields: δ = 29^-1.1).
    assert any("ε after T" in col for df in at.dataframe for col in df.value.columns)
    assert at.number_input(key="fbo_agents_fixed").value == 29 and at.number_input(key="fbo_agents_fixed").disabled
    assert run_state(at) is None


def test_query_params_reproduce_the_configuration():
    at = small_page(q="0.15", z="1.5", algorithms="dp-fts-de")
    assert at.number_input(key="fbo_q").value == 0.15
    assert at.number_input(key="fbo_z").value == 1.5
    assert at.multiselect(key="fbo_algorithms").value == ["dp-fts-de"]
    at.number_input(key="fbo_S").set_value(5.0).run()
    params = dict(at.query_params)
    assert params["S"] in ("5", ["5"]) and params["q"] in ("0.15", ["0.15"])


def test_link_built_by_another_page_opens_that_configuration():
    from engine.fbo import FboConfig
    from ui.fbo.controls import link_params

    config = FboConfig(algorithm="dp-fts", agents=12, iterations=6, runs=2, q=0.4, z=1.3, budget=4.0)
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    for name, value in link_params(config.to_dict()).items():
        at.query_params[name] = value
    at.run()
    assert not at.exception and not at.warning
    assert at.multiselect(key="fbo_algorithms").value == ["dp-fts"]
    for name in ("agents", "iterations", "runs", "q", "z", "budget"):
        assert at.number_input(key=f"fbo_{name}").value == getattr(config, name)
    assert at.radio(key="fbo_budget_mode").value == "stop"


def test_bad_query_param_is_ignored_with_a_note():
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    at.query_params["q"] = "abc"
    at.run()
    assert not at.exception
    assert at.number_input(key="fbo_q").value == 0.25
    assert any("q" in w.value for w in at.warning)


@pytest.mark.parametrize("name, varied", [("fig2c", "q"), ("fig2a", "P")])
def test_paper_preset_from_the_url_fills_the_controls(name, varied):
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    at.query_params["preset"] = name
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="fbo_vary").value == varied
    expected = [str(entry[varied]) for entry in PRESETS[name]["compare"] if varied in entry]
    shown = [v.strip() for v in at.text_input(key="fbo_values").value.split(",")]
    assert [float(v) for v in shown] == [float(v) for v in expected]
    assert at.number_input(key="fbo_agents").value == PRESETS[name]["base"]["agents"]
    assert "ts" in at.multiselect(key="fbo_algorithms").value
    assert at.selectbox(key="fbo_preset_choice").value == name      # the preset box shows what the link loaded


def test_a_task_with_its_own_agents_puts_them_in_the_link_and_the_run():
    # Fig. 2c has 200 agents; the landmine task has one agent per field (29), whatever the control held before.
    from engine.objectives.registry import default_agents

    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    at.query_params["preset"] = "fig2c"
    at.run()
    assert at.query_params["agents"] == "200"
    at.selectbox(key="fbo_dataset").set_value("landmine").run()
    assert not at.exception
    assert at.query_params["agents"] == str(default_agents("landmine")) == "29"
    # A run stores the same values the URL mirrors (the exported configuration's link is built from them).
    at.selectbox(key="fbo_dataset").set_value("synthetic").run()
    assert at.query_params["agents"] == "200"             # the synthetic task's agents are kept


def test_a_refusal_by_the_host_limit_marks_the_knob_it_names():
    at = AppTest.from_file(FBO, default_timeout=TIMEOUT)
    at.query_params["agents"] = "100000"
    at.run()
    assert not at.exception and at.button(key="fbo_run").disabled
    assert len(at.main.error) == 1 and "lower the agents" in at.main.error[0].value
    marks = [w.value for w in at.sidebar.warning]
    assert len(marks) == 1 and marks[0].startswith("Lower this first")
    captions = [c.value for c in at.caption if "Run is off" in c.value]
    assert captions == [":material/arrow_back: Run is off until the setting marked on the left (agents) is fixed."]


def test_a_run_is_priced_once(monkeypatch):
    import engine.limits
    import ui.kit.run_loop as loop

    checks = []
    real = engine.limits.check

    def counted(cost, *args, **kw):
        checks.append(cost)
        return real(cost, *args, **kw)

    # Wherever the check is reached from: the page's script (imports it on every run) or the run loop.
    monkeypatch.setattr(engine.limits, "check", counted)
    monkeypatch.setattr(loop, "check", counted)
    at = small_page()
    checks.clear()
    at.button(key="fbo_run").click().run()
    assert done(run_state(at))
    assert len(checks) == 1       # the page's price before Run is drawn; run_live takes it as it is


def test_compared_values_add_lines():
    at = small_page()
    at.selectbox(key="fbo_vary").set_value("z").run()
    at.text_input(key="fbo_values").set_value("1, 2").run()
    at.button(key="fbo_run").click().run()
    assert run_state(at).labels == ["TS", "DP-FTS-DE (z = 1)", "DP-FTS-DE (z = 2)"]
    at.text_input(key="fbo_values").set_value("1, x").run()
    assert len(at.error) == 1 and "'x' is not a number" in at.error[0].value


def test_teaching_view_walks_through_the_steps():
    at = AppTest.from_file(TEACH, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error
    seen = []
    for _ in range(8):
        assert len(at.get("plotly_chart")) >= 1
        seen.append(at.session_state["teach_step"])
        if at.button(key="teach_next").disabled:
            break
        at.button(key="teach_next").click().run()
        assert not at.exception
    assert seen == list(range(7))
    at.button(key="teach_prev").click().run()    # step 6 of the round; the 7th compares the noise with DP-FTS's
    # The right axis of step 6 has round ticks of its own (issue 13, item 7).
    functions = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["yaxis2"]
    assert functions["tickformat"] == ".1f" and functions["tickmode"] == "auto"
    at.button(key="teach_prev").click().run()
    assert at.session_state["teach_step"] == 4
    # The noise step states the formula's value, z * phi_max * S / q.
    noise_std = float(next(m.value for m in at.metric if m.label.startswith("noise std")))
    assert noise_std > 0
    at.number_input(key="teach_z").set_value(2.0).run()
    assert float(next(m.value for m in at.metric if m.label.startswith("noise std"))) == pytest.approx(
        2 * noise_std, abs=2e-3)  # shown with 3 decimals


def test_teaching_view_says_why_the_weight_bars_have_two_heights():
    at = AppTest.from_file(TEACH, default_timeout=TIMEOUT)
    at.session_state["teach_step"] = 3
    at.run()
    assert not at.exception
    [text] = [m.value for m in at.markdown if "two heights" in m.value]
    # At t = 3 with N = 100, P = 2, q = 0.5: each of the 50 explorers of a sub-region weighs 1/50, so φ/q = 0.04.
    assert "φ/q = 0.04" in text and "where an agent **started**" in text


def test_teaching_view_bad_input_shows_sentence():
    at = AppTest.from_file(TEACH, default_timeout=TIMEOUT).run()
    at.number_input(key="teach_q").set_value(1.5).run()
    assert not at.exception
    assert len(at.error) == 1 and "q must be in (0, 1]" in at.error[0].value
