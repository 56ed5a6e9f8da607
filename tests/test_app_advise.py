"""The "Plan a deployment" page under Streamlit's AppTest: a small search's recommendation, tied settings,
references, sensitivity table and deployment (the engine's own command line); bad input under its control; DP-HYPE.

About 20 s: one small search in the page's process (6 agents, 4 iterations) and a DP-HYPE advice."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.cli import build_parser
from engine.cli.fbo import config_from_args
from engine.fbo.plan import make_plan

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "9_Plan_a_deployment.py")


def small(at: AppTest) -> AppTest:
    at.sidebar.number_input(key="adv_agents").set_value(6)
    at.sidebar.number_input(key="adv_iterations").set_value(4)
    at.sidebar.radio(key="adv_executor").set_value("local")
    return at.run()


@pytest.fixture(scope="module")
def ran():
    at = small(AppTest.from_file(PAGE, default_timeout=300).run())
    assert not at.exception and any("Estimated" in c.value for c in at.caption)
    return at.button(key="adv_run").click().run()


def test_a_search_shows_its_recommendation_with_the_tied_settings_and_the_sensitivity_table(ran):
    assert not ran.exception and not [e.value for e in ran.error]
    metrics = {m.label: m.value for m in ran.metric}
    assert float(metrics["ε spent"]) == pytest.approx(4.0, rel=1e-3)
    assert {"q (sampling)", "z (noise)", "S (clipping)", "P (sub-regions)", "1 - p_t"} <= set(metrics)
    assert any(label.startswith("The budget's cost") for label in metrics)
    assert any(label.startswith("The federation's value") for label in metrics)
    tables = [frame.value for frame in ran.dataframe]
    assert any("minus the pick" in table.columns for table in tables)           # the tied settings
    sensitivity = next(table for table in tables if "if the task is" in table.columns)
    assert list(sensitivity["if the task is"].str.split(" ").str[0]) == ["smoother", "rougher", "agents"]
    assert ran.get("plotly_chart")


def test_the_pages_command_line_runs_what_the_page_shows(ran):
    (code,) = [c.value for c in ran.code]
    config = config_from_args(build_parser().parse_args(shlex.split(code)[3:]))
    metrics = {m.label: m.value for m in ran.metric}
    assert f"{config.q:g}" == metrics["q (sampling)"] and f"{config.S:g}" == metrics["S (clipping)"]
    assert f"{make_plan(config).z:.4g}" == metrics["z (noise)"] and config.agents == 6


def test_bad_input_is_one_sentence_under_its_control_and_nothing_runs():
    at = small(AppTest.from_file(PAGE, default_timeout=120).run())
    at.sidebar.number_input(key="adv_delta").set_value(0.5).run()
    assert not at.exception
    assert any("delta = 0.5 is more than 1/N" in e.value for e in at.sidebar.error)
    assert at.button(key="adv_run").disabled


def test_dp_hype_advice_gives_k_and_the_noise():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.sidebar.radio(key="adv_algorithm").set_value("dp-hype").run()
    at.sidebar.number_input(key="adv_agents").set_value(30)
    at.sidebar.number_input(key="adv_candidates").set_value(20).run()
    at.button(key="adv_run").click().run()
    assert not at.exception and not [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["votes per client k"]) in (1, 2, 3, 5, 10, 20)
    assert [c.value for c in at.code][0].startswith("python -m engine hype")
