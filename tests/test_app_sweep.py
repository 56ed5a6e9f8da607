"""The trade-off explorer page under Streamlit's AppTest: build, run, read, link, download, upload."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.fbo.controls import RUN_KEY
from ui.kit.run_loop import LiveRun, RunStatus

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "6_Tradeoff_explorer.py")
TINY = "algorithm = dp-fts-de\ndataset = synthetic\nagents = 20\niterations = 8\nfeatures = 20\nn_init = 3"


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))   # the page keeps sweep parts there
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def run_tiny(at, runs=2):
    at.radio(key="sw_executor").set_value("local")
    at.text_area(key="sw_base").set_value(TINY)
    at.number_input(key="sw_runs").set_value(runs)
    at.run()
    at.button(key="sw_run").click().run()
    assert not at.exception, at.exception
    assert not errors(at), errors(at)


def open_link(at) -> dict:
    """The query parameters of the 'Open ... page' link (a page link, or a markdown link under AppTest)."""
    links = [m.value for m in at.markdown if m.value.startswith("[Open ")]
    assert len(links) == 1, links
    url = links[0].split("](", 1)[1].rstrip(")")
    assert urlparse(url).path == "Federated_BO"
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def test_default_sweep_is_described_and_runs_to_a_frontier_and_heatmap(app):
    assert "6 settings + 1 reference = 7 cells x 60 runs" in app.caption[0].value
    run_tiny(app)
    charts = app.get("plotly_chart")
    assert len(charts) == 2                         # frontier + heatmap (q x z is a full grid)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["settings"] == "6" and metrics["rows (cell x run)"] == "14" and metrics["failed cells"] == "0"
    table = app.dataframe[0].value
    assert len(table) == 7 and table["reference"].sum() == 1 and table["Pareto-optimal"].any()
    assert set(table.loc[~table["reference"], "q"]) == {"0.25", "0.5", "1"}
    assert (table.loc[table["reference"], ["q", "z"]] == "—").all().all()   # a dash, not "None"
    # The link opens the chosen setting (by default the best Pareto-optimal one) on the federated BO page.
    front = table[table["Pareto-optimal"]]
    best = front.loc[front["utility"].idxmin()]
    params = open_link(app)
    assert float(params.get("q", 0.25)) == float(best["q"]) and float(params.get("z", 1.0)) == float(best["z"])
    assert params["agents"] == "20" and params["iterations"] == "8"
    assert [b.label for b in app.get("download_button")] == ["Download CSV", "Download Parquet"]


def test_choosing_another_setting_changes_the_link(app):
    run_tiny(app, runs=1)
    box = next(s for s in app.selectbox if s.label.startswith("setting to open"))
    target = next(i for i, label in enumerate(box.options) if label.startswith("q=0.5, z=2"))  # shown labels
    box.set_value(target).run()
    params = open_link(app)
    assert params["q"] == "0.5" and params["z"] == "2"


def test_bad_values_show_a_sentence_and_run_nothing(app):
    app.text_input(key="sw_v1").set_value("0, 0.5").run()
    assert any("q must be in (0, 1]" in e for e in errors(app))
    assert app.button(key="sw_run").disabled
    app.text_input(key="sw_v1").set_value("0.2, 0.5").run()
    app.text_area(key="sw_base").set_value("agents = many").run()
    assert any("number of agents N must be a number" in e or "agents" in e for e in errors(app))


def test_the_landmine_preset_loads_fig3a_and_says_when_the_data_is_missing(app, tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path / "no-data"))
    app.selectbox(key="sw_preset").set_value("fig3a").run()
    assert app.selectbox(key="sw_p1").value == "z" and app.text_input(key="sw_v1").value == "1, 1.6, 2, 3, 4"
    assert app.selectbox(key="sw_p2").value == "q"
    assert app.radio(key="sw_combine").value == "one-at-a-time"
    assert app.multiselect(key="sw_refs").value == ["ts", "fts", "fts-de"]
    assert "9 settings + 3 references = 12 cells x 5 runs" in app.caption[0].value
    # Checked before Run (issue 13, item 2): Run is off and the main area says where the file goes.
    assert app.button(key="sw_run").disabled
    assert any(str(tmp_path / "no-data" / "landmine" / "LandmineData.mat") in w.value for w in app.warning)
    assert not errors(app)
    assert not any(c.type == "plotly_chart" for c in app.get("plotly_chart"))


def test_a_rerun_says_which_cells_come_from_an_earlier_session(app):
    # Issue 13, item 9: results read back from disk are labelled as such.
    run_tiny(app, runs=1)
    assert not any("were not run now" in i.value for i in app.info)
    fresh = AppTest.from_file(PAGE, default_timeout=180)
    fresh.run()
    run_tiny(fresh, runs=1)
    [note] = [i.value for i in fresh.info if "were not run now" in i.value]
    assert note.startswith("7 of 7 cells") and "earlier session saved on" in note


def test_results_of_a_data_set_that_is_gone_say_so(monkeypatch, tmp_path):
    from ui.sweep.controls import provenance

    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path))
    notes = provenance(dict(dataset="landmine", reused=None))
    assert len(notes) == 1 and "no longer available" in notes[0]
    assert provenance(dict(dataset="synthetic", reused=None)) == []


def test_a_saved_table_can_be_opened_again(app):
    run_tiny(app, runs=1)
    first = app.dataframe[0].value
    table = app.session_state["sw_result"]["table"]
    csv = table.to_csv(index=False).encode()
    fresh = AppTest.from_file(PAGE, default_timeout=60)
    fresh.run()
    fresh.file_uploader(key="sw_upload").upload("saved.csv", csv, "text/csv")
    fresh.run()
    assert not fresh.exception and not errors(fresh)
    assert any("Uploaded table saved.csv" in s.value for s in fresh.subheader)
    again = fresh.dataframe[0].value
    pd.testing.assert_frame_equal(again[["setting", "utility", "privacy loss ε"]].reset_index(drop=True),
                                  first[["setting", "utility", "privacy loss ε"]].reset_index(drop=True))
    fresh.file_uploader(key="sw_upload").set_value(("junk.csv", b"a,b\n1,2\n", "text/csv"))
    fresh.run()
    assert any("junk.csv is not a sweep table" in e for e in errors(fresh))


def test_a_configuration_from_the_federated_bo_page_becomes_the_base(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(PAGE, default_timeout=60)
    # What the Federated BO page keeps of its last run: its controls' values.
    at.session_state[RUN_KEY] = LiveRun(status=RunStatus.DONE, labels=[], results=[], values=dict(
        algorithms=["ts", "fts-de", "dp-fts-de"], dataset="synthetic", agents=40, iterations=25, q=0.3, z=1.2,
        budget_mode="none", budget=8.0, runs=3, seed=0))
    at.run()
    button = next(b for b in at.button if b.label == "Use the Federated BO settings")
    assert not button.disabled
    button.click().run()
    base = at.text_area(key="sw_base").value
    assert "algorithm = dp-fts-de" in base and "agents = 40" in base and "q = 0.3" in base and "z = 1.2" in base
    assert "budget" not in base
    assert at.multiselect(key="sw_refs").value == ["ts", "fts-de"]


def test_a_link_from_the_federated_bo_page_carries_its_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"from": "fbo", "algorithms": "ts,dp-fts", "q": "0.4", "agents": "30"})
    at.run()
    base = at.text_area(key="sw_base").value
    assert "algorithm = dp-fts" in base and "q = 0.4" in base and "agents = 30" in base
    assert at.multiselect(key="sw_refs").value == ["ts"]
    assert not errors(at)


def test_a_dp_hype_data_sweep_can_be_read_by_its_test_accuracy(tmp_path, monkeypatch):
    """A data-mode DP-HYPE table records the chosen candidate's test accuracy; the page offers it as the metric
    (each metric's analysis kept apart, also for an uploaded file read from the cache by its hash)."""
    from engine.sweep import SweepSpec, run_sweep

    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    base = dict(mode="data", dataset="digits", clients=10, runs=1, repetitions=30)
    table = run_sweep(SweepSpec("hype", base=base, axes=(("epsilon", (0.25, 3.0)),), runs=3, seed=2),
                      tmp_path / "hype.parquet", executor="local").table
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.file_uploader(key="sw_upload").upload("hype.csv", table.to_csv(index=False).encode(), "text/csv")
    at.run()
    assert not at.exception and not errors(at)
    metric = at.radio(key="sw_metric")
    assert list(metric.options) == ["success rate", "test accuracy of the chosen candidate"]
    means = {name: table.groupby("setting", sort=False)[name].mean().to_numpy() for name in ("utility",
                                                                                              "test_accuracy")}
    assert at.dataframe[0].value["utility"].to_numpy() == pytest.approx(means["utility"])
    metric.set_value("test_accuracy").run()
    assert not at.exception
    assert at.dataframe[0].value["utility"].to_numpy() == pytest.approx(means["test_accuracy"])
    at.radio(key="sw_metric").set_value("utility").run()
    assert at.dataframe[0].value["utility"].to_numpy() == pytest.approx(means["utility"])


def test_a_sweep_stopped_at_its_time_limit_draws_the_cells_that_finished(app, monkeypatch):
    # The third cell meets the time limit (its checkpoint raises what the run's token raises past its deadline): a
    # stop at the same point on any machine. The two finished cells are drawn, and the page says what is missing.
    import engine.sweep.executors as executors
    from engine.cancel import TIME_LIMIT, Cancelled

    calls = []
    real = executors.run_cell

    def third_meets_the_limit(tool, params, runs):
        calls.append(params)
        if len(calls) >= 3:
            raise Cancelled(TIME_LIMIT)
        return real(tool, params, runs)

    monkeypatch.setattr(executors, "run_cell", third_meets_the_limit)
    run_tiny(app, runs=1)
    assert len(calls) == 3
    assert any("time limit" in w.value and "drawn below" in w.value for w in app.warning), app.warning
    assert len(app.get("plotly_chart")) == 1               # the frontier of the finished cells (no full grid)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["settings"] == "2" and metrics["rows (cell x run)"] == "2"
    [note] = [i.value for i in app.info if "was stopped" in i.value]
    assert note.startswith("The sweep was stopped: 2 of its 7 cells finished")
