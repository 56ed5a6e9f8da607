"""AppTest of the Privacy audit page and of the audited-ε panels of the Federated BO and DP-HYPE pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import ui.kit.cached
from engine.audit import OneRunAudit, ServerAudit, VoteAudit, run_audit, run_one_run
from engine.fbo.config import FboConfig
from engine.fbo.plan import make_plan
from engine.privacy import DEFAULT_ACCOUNTANT, default_delta
from ui.audit.panel import EMBEDDED_TRIALS, embedded_trials, server_audit
from ui.kit.state import Param

ROOT = Path(__file__).resolve().parents[1]
AUDIT = str(ROOT / "pages" / "7_Privacy_audit.py")
FBO = str(ROOT / "pages" / "1_Federated_BO.py")
HYPE = str(ROOT / "pages" / "4_DP_HYPE.py")
TIMEOUT = 120  # seconds; generous for a busy 2-core machine
SMALL_TRIALS = 20_000


def audit_page(**query) -> AppTest:
    at = AppTest.from_file(AUDIT, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def metric(at, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r}"
    return values[0]


def chart_with(at, text: str) -> str:
    specs = [chart.proto.spec for chart in at.get("plotly_chart") if text in chart.proto.spec]
    assert len(specs) == 1, f"{len(specs)} charts with {text!r}"
    return specs[0]


def run(at) -> AppTest:
    at.button(key="audit_run").click().run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(autouse=True)
def fresh_audit_cache():
    ui.kit.cached.cached_audit.clear()


# ---------------------------------------------------------------- the page


def test_defaults_price_the_audit_and_wait_for_run():
    at = audit_page()
    assert not at.exception and not at.error
    assert not at.button(key="audit_run").disabled
    assert any("200,000 trials, about" in c.value for c in at.caption)
    assert not at.get("plotly_chart") and "Press **Run**" in at.info[0].value


def test_an_audit_shows_the_engines_numbers_and_four_charts():
    at = audit_page(trials=str(SMALL_TRIALS))
    run(at)
    expected = run_audit(ServerAudit(trials=SMALL_TRIALS))
    assert [s.value for s in at.success] == [expected.verdict]
    assert metric(at, "claimed ε") == f"{expected.epsilon_claimed:.3g}"
    assert metric(at, "audited lower bound") == f"{expected.epsilon_lower:.3g}"
    assert metric(at, "trials") == f"{SMALL_TRIALS:,}"
    # Parsed, not searched as text: how the JSON writer escapes ε depends on which JSON library is installed.
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert len(titles) == 4
    for title in ("The attack's score in both worlds", "ROC of the attack", "Claimed ε against what the attack",
                  "The lower bound against the number of trials"):
        assert sum(title in text for text in titles) == 1, (title, titles)
    # A plot option redraws the stored audit without running it again.
    at.toggle(key="audit_opt_log").set_value(False).run()
    assert metric(at, "audited lower bound") == f"{expected.epsilon_lower:.3g}" and not at.info


def test_the_negative_control_is_caught():
    at = audit_page(trials="100000")
    at.selectbox(key="audit_control").set_value("half-noise").run()
    run(at)
    assert len(at.error) == 1 and at.error[0].value.startswith("VIOLATION: audited lower bound")
    assert "negative control: noise scaled by 0.5" in at.error[0].value
    assert float(metric(at, "audited lower bound")) > float(metric(at, "claimed ε"))
    assert at.query_params["control"] == "half-noise"


def test_a_one_run_audit_of_the_server_shows_its_bound_and_catches_reused_noise():
    # One run of 2 releases at z = 2 (claim 1.05) with 1,000 canaries: the server as it is stays below its claim;
    # with its noise reused the releases' differences give the canaries away (the engine's tests: 2.5).
    at = audit_page(mode="one-run", canaries="1000", steps="2", z="2")
    run(at)
    expected = run_one_run(OneRunAudit(canaries=1000, steps=2, z=2.0))
    assert [s.value for s in at.success] == [expected.verdict]
    assert metric(at, "one-run lower bound") == f"{expected.epsilon_lower:.3g}"
    assert metric(at, "canaries") == "1,000"
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert titles == ["The canaries' scores (llr)", "The one-run bound against the number of canaries"] or \
        len(titles) == 2 and "against the number of canaries" in titles[1]
    at.selectbox(key="audit_control").set_value("reused-noise").run()
    run(at)
    assert len(at.error) == 1 and at.error[0].value.startswith("VIOLATION: one-run lower bound")
    assert float(metric(at, "one-run lower bound")) > float(metric(at, "claimed ε"))
    right, guessed = (int(n.replace(",", "")) for n in metric(at, "guesses right").split("/"))
    assert 0.9 * guessed <= right <= guessed


def test_a_one_run_link_audits_the_papers_40_releases_and_the_mode_switch_follows():
    at = audit_page(mode="one-run")
    assert at.number_input(key="audit_steps").value == 40
    assert any("One run of the DP-FTS-DE server: 40 release(s), 1,000 canaries" in c.value for c in at.caption)
    at.radio(key="audit_mode").set_value("trials").run()
    assert at.number_input(key="audit_steps").value == 1 and not at.exception


def test_a_dp_hype_vote_has_no_one_run_audit():
    at = audit_page(mechanism="hype-votes", mode="one-run")
    assert not at.exception and at.button(key="audit_run").disabled
    assert [e.value for e in at.sidebar.error][0].startswith("A DP-HYPE vote is one release")


def test_the_vote_mechanism_audits_dp_hype():
    at = audit_page(mechanism="hype-votes", trials=str(SMALL_TRIALS))
    run(at)
    expected = run_audit(VoteAudit(trials=SMALL_TRIALS))
    assert [s.value for s in at.success] == [expected.verdict]
    assert metric(at, "Gaussian DP μ (audited)") == f"{expected.mu_lower:.3g}"
    assert len(at.get("plotly_chart")) == 4


@pytest.mark.parametrize("mechanism, control, value, sentence", [
    ("fbo-server", "audit_q", 0.0, "q must be in (0, 1], got 0."),
    ("fbo-server", "audit_P", 20, "P must be at most the number of agents (2), got 20."),
    ("fbo-server", "audit_trials", 50, "number of trials must be in [100, 1000000000], got 50."),
    ("hype-votes", "audit_k", 60, "The canary moves its k votes to k other candidates, so k must be at most half "
                                  "the number of candidates (50), got 60."),
    ("hype-votes", "audit_epsilon", 0.0, "epsilon must be in (0, 20], got 0."),
])
def test_bad_input_shows_one_sentence_under_its_control(mechanism, control, value, sentence):
    at = audit_page(mechanism=mechanism)
    at.number_input(key=control).set_value(value).run()
    assert not at.exception
    assert [e.value for e in at.sidebar.error] == [sentence] and not at.main.error
    assert at.button(key="audit_run").disabled


def test_with_run_off_the_page_says_why_instead_of_press_run():
    at = audit_page()
    at.number_input(key="audit_trials").set_value(5).run()
    assert at.button(key="audit_run").disabled
    infos = [i.value for i in at.main.info]
    assert not any("Press **Run**" in text for text in infos), infos
    reason = "Run is off: number of trials must be in [100, 1000000000], got 5."
    assert len(infos) == 1 and infos[0].startswith(reason), infos


def test_an_audit_above_the_host_limit_is_refused_under_the_knob_to_lower():
    at = audit_page()
    at.number_input(key="audit_steps").set_value(1000).run()   # about 6 min of attack
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and errors[0].startswith("This audit needs about") and "Lower the releases T" in errors[0]
    assert at.button(key="audit_run").disabled


def test_link_parameters_are_parsed_with_limits():
    at = audit_page(q="5", trials="1e999", P="two", steps="3", z="1.5")
    assert not at.exception
    assert at.warning[0].value == (
        "Ignored q=5 from the link: q is a number from 0 to 1. Ignored P=two from the link: P is a whole number from 1 "
        "to 10,000. Ignored trials=1e999 from the link: trials is a whole number from 100 to 1,000,000,000.")
    assert at.number_input(key="audit_q").value == 0.25 and at.number_input(key="audit_trials").value == 200_000
    assert at.number_input(key="audit_steps").value == 3 and at.number_input(key="audit_z").value == 1.5


@pytest.mark.parametrize("text", ["1e999", "inf", "nan", "0", "11", "2.5", "x"])
def test_a_bounded_number_from_a_link_must_be_finite_and_in_range(text):
    # int(float("1e999")) would raise OverflowError, which no page catches: it must be a plain refusal.
    with pytest.raises(ValueError):
        Param(5, int, low=1, high=10).decode(text)
    assert Param(5, int, low=1, high=10).decode("10") == 10 and Param(0.5, float, low=0, high=1).decode("0") == 0.0


def test_the_federated_bo_and_dp_hype_settings_fill_the_controls():
    at = audit_page()
    at.button(key="audit_take_fbo").click().run()
    # The Federated BO page's defaults: its DP-FTS-DE line, N = 50, T = 30, P = 2, the product's accountant.
    assert at.number_input(key="audit_steps").value == 30 and at.number_input(key="audit_P").value == 2
    assert at.number_input(key="audit_delta").value == pytest.approx(default_delta(50))
    assert at.selectbox(key="audit_accountant").value == DEFAULT_ACCOUNTANT == "rdp"
    assert any("DP-FTS-DE line's server (50 agents" in c.value for c in at.sidebar.caption)
    at.radio(key="audit_mechanism").set_value("hype-votes").run()
    at.button(key="audit_take_hype").click().run()
    assert at.number_input(key="audit_epsilon").value == 0.25 and at.selectbox(key="audit_accountant").value == "rdp"
    assert not at.exception and not at.error


# ---------------------------------------------------------------- the panels beside a run's claimed ε


def test_embedded_audit_sizes():
    assert embedded_trials(1) == EMBEDDED_TRIALS and embedded_trials(30) == 66_666 and embedded_trials(10**4) == 20_000
    plan = make_plan(FboConfig(algorithm="dp-fts-de", agents=50, iterations=30, P=3))
    config = server_audit(plan)
    assert (config.agents, config.features, config.P, config.steps, config.trials) == (3, 2, 3, 30, 66_666)


def test_the_federated_bo_run_is_audited_only_on_demand_and_once_per_configuration(monkeypatch):
    calls = []
    monkeypatch.setattr(ui.kit.cached, "run_audit",
                        lambda config, **kw: calls.append(config) or run_audit(config, **kw))

    def run_fbo() -> AppTest:
        at = AppTest.from_file(FBO, default_timeout=TIMEOUT).run()
        for key, value in {"fbo_agents": 10, "fbo_iterations": 4, "fbo_runs": 1}.items():
            at.number_input(key=key).set_value(value)
        at.run().button(key="fbo_run").click().run()
        assert not at.exception
        return at

    at = run_fbo()
    assert calls == [] and "fbo_audit" not in at.session_state   # never on every run
    at.button(key="fbo_audit_button").click().run()
    assert not at.exception and len(calls) == 1
    audited = calls[0]
    assert (audited.steps, audited.trials, audited.q, audited.z) == (4, EMBEDDED_TRIALS, 0.25, 1.0)
    assert "200,000 trials" in chart_with(at, "Audited: DP-FTS-DE's server, 4 release(s)")
    assert any(c.value.startswith("Consistent: audited lower bound") for c in at.caption)
    # Another session with the same configuration gets the cached audit.
    again = run_fbo()
    again.button(key="fbo_audit_button").click().run()
    assert len(calls) == 1 and chart_with(again, "Audited: DP-FTS-DE")


def test_the_dp_hype_run_shows_its_audited_epsilon(cache_dir, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    at = AppTest.from_file(HYPE, default_timeout=TIMEOUT).run()
    at.number_input(key="hype_repetitions").set_value(200).run()
    at.button(key="hype_run").click().run()
    at.button(key="hype_audit_button").click().run()
    assert not at.exception and not at.error
    expected = run_audit(VoteAudit(epsilon=0.25, trials=EMBEDDED_TRIALS, accountant="rdp"))
    assert any(c.value.startswith(expected.verdict) for c in at.caption)
    assert chart_with(at, "Audited: one DP-HYPE vote, k = 5, p = 100, n = 250")


# ---------------------------------------------------------------- a built-in Flower strategy

FLOWER_TRIALS = 2_000


def test_a_built_in_flower_strategy_is_audited_and_the_broken_one_caught():
    pytest.importorskip("flwr")
    from engine.flower.audit import audit_strategy
    from engine.flower.audit_config import StrategyAudit, game_agents

    at = audit_page(mechanism="flower", trials=str(FLOWER_TRIALS), z="2")
    assert not at.exception and not at.error
    assert at.selectbox(key="audit_strategy").value == "dp-fts-de"
    assert any("Claim: the run plan's accountant" in c.value for c in at.sidebar.caption)
    assert not any("Negative control" in t.label for t in at.toggle)     # the broken strategy is the control
    assert any(f"{FLOWER_TRIALS:,} trials, about" in c.value for c in at.caption)
    run(at)
    expected = audit_strategy(StrategyAudit(strategy="dp-fts-de", trials=FLOWER_TRIALS, z=2.0, features=2,
                                            agents=game_agents("dp-fts-de", 0.25), accountant="pld"))
    assert [s.value for s in at.success] == [expected.verdict] and not expected.violation
    assert metric(at, "claimed ε") == f"{expected.epsilon_claimed:.3g}"
    assert metric(at, "audited lower bound") == f"{expected.epsilon_lower:.3g}"
    assert not [m for m in at.metric if m.label == "most this game can prove"]   # only the claim is known
    assert len(at.get("plotly_chart")) == 4

    at.selectbox(key="audit_strategy").set_value("broken-clip-after-mean").run()
    assert at.query_params["strategy"] == "broken-clip-after-mean"
    run(at)
    assert len(at.error) == 1 and at.error[0].value.startswith("VIOLATION: audited lower bound")
    assert float(metric(at, "audited lower bound")) > float(metric(at, "claimed ε"))


def test_a_link_cannot_name_a_module_as_the_strategy():
    at = audit_page(mechanism="flower", strategy="os:getcwd")
    assert not at.exception
    assert "Ignored strategy=os:getcwd from the link" in at.warning[0].value
    assert at.selectbox(key="audit_strategy").value == "dp-fts-de"


def test_without_flower_the_choice_says_so_and_the_page_still_works(monkeypatch):
    import ui.audit.flower

    monkeypatch.setattr(ui.audit.flower, "flower_installed", lambda: False)
    at = audit_page(mechanism="flower")
    assert not at.exception
    # One sentence, under the strategy choice; Run is off and says why.
    assert [e.value for e in at.sidebar.error] == [ui.audit.flower.NOT_INSTALLED] and not at.main.error
    assert at.button(key="audit_run").disabled
    assert at.main.info[0].value.startswith("Run is off: Flower is not installed")
    at.radio(key="audit_mechanism").set_value("fbo-server").run()
    assert not at.exception and not at.button(key="audit_run").disabled
