"""Whatever a link carries, every page answers with sentences: no exception and no traceback (issue 12, finding 5).

First the probe's own links, one by one; then Hypothesis throws random and extreme values at every query
parameter of every page through Streamlit's AppTest. The examples are derandomised (the same ones on every
run, so CI is stable) and few per page, so the whole file stays within about a minute.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.audit import controls as audit_controls
from ui.fbo import controls as fbo_controls
from ui.fbo import teaching_controls
from ui.hype import controls as hype_controls
from ui.pogpucb import controls as pogpucb_controls
from ui.privacy import controls as accountant_controls
from ui.reproduction import controls as reproduction_controls
from ui.sweep import controls as sweep_controls

ROOT = Path(__file__).resolve().parents[1]
PAGES = {
    "1_Federated_BO.py": sorted(fbo_controls.FBO_PARAMS) + ["preset"],
    "2_Teaching_view.py": sorted(teaching_controls.PARAMS),
    "3_Privacy_accountant.py": sorted(accountant_controls.PARAMS) + ["preset"],
    "4_DP_HYPE.py": sorted(hype_controls.PARAMS) + ["preset"],
    "5_PO_GP_UCB.py": sorted(pogpucb_controls.PARAMS) + ["preset"],
    "6_Tradeoff_explorer.py": sorted(sweep_controls.PARAMS) + ["from", "scheduler", "data_dir"],
}
EXTREMES = ["1e999", "-1e999", "inf", "nan", "-inf", "1e308", "1e-300", "-1e-300", "0", "-1", "1e-200", "1e300",
            "9" * 40, "2.5", "100000", "1000000", "none", "", "true", "ts,dp-fts-de", "=cmd|' /C calc'!A0",
            "../../etc/passwd", "tcp://127.0.0.1:1", "x" * 3000, "0.15, 0.25, 0.5", "q=0.1\ncache_dir=/tmp/x"]
VALUES = st.one_of(st.sampled_from(EXTREMES), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.integers(min_value=-10**30, max_value=10**30).map(str), st.text(max_size=40))
TIMEOUT = 120


def run_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def assert_sentences_only(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    texts = [e.value for e in list(at.error) + list(at.warning) + list(at.info) + list(at.markdown)]
    assert not [t for t in texts if "Traceback" in str(t) or 'File "' in str(t)]


# The probe's links (and DPBO_MAX_SECONDS=inf, the successor of DPBO_MAX_WORK=inf), with what the page says.
PROBE = [
    ("1_Federated_BO.py", {"agents": "1e999"}, {},
     "Ignored agents=1e999 from the link: agents is a whole number from 2 to 100,000."),
    ("2_Teaching_view.py", {"agents": "1e999"}, {},
     "Ignored agents=1e999 from the link: agents is a whole number from 2 to 100,000."),
    ("2_Teaching_view.py", {"agents": "100000"}, {}, "This round needs about"),
    ("3_Privacy_accountant.py", {"z": "1e-200"}, {},
     "Ignored z=1e-200 from the link: z is a number from 0.001 to 10,000."),
    ("3_Privacy_accountant.py", {"q": "1e-300", "z": "1e300"}, {},
     "Ignored q=1e-300 from the link: q is a number from 1e-09 to 1. Ignored z=1e300 from the link: z is a number "
     "from 0.001 to 10,000."),
    ("3_Privacy_accountant.py", {"z": "0.01", "steps": "40"}, {}, "The PLD accountant needs z of at least 0.2"),
    ("4_DP_HYPE.py", {"noise": "sigma", "sigma": "1e308"}, {},
     "Ignored sigma=1e308 from the link: sigma is a number from 0 to 1,000,000."),
    ("4_DP_HYPE.py", {"epsilon": "1e-300"}, {}, "Ignored epsilon=1e-300 from the link: epsilon is a number from"),
    ("1_Federated_BO.py", {}, {"DPBO_MAX_SECONDS": "inf", "DPBO_MAX_MEMORY_MB": "-1", "DPBO_MAX_WORK": "inf"},
     "Size limit of this server: about 120 s"),
]


def page_text(at: AppTest) -> str:
    return " ".join(str(e.value) for e in list(at.error) + list(at.warning) + list(at.info) + list(at.caption))


@pytest.mark.parametrize("page, query, env, says", PROBE,
                         ids=[f"{p[2:-3]}-{'&'.join(q) or 'env'}" for p, q, _, _ in PROBE])
def test_the_probes_links_get_sentences(page, query, env, says, monkeypatch, tmp_path):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    at = run_page(page, query)
    assert_sentences_only(at)
    assert says in page_text(at)


def test_a_sigma_at_its_limit_runs_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    at = run_page("4_DP_HYPE.py", {"noise": "sigma", "sigma": "1000000", "repetitions": "200"})
    at.button(key="hype_run").click().run()
    assert_sentences_only(at)
    assert at.session_state["hype_run_state"].status.value == "done"


@pytest.mark.parametrize("page", list(PAGES))
def test_random_and_extreme_link_values_never_crash_a_page(page, tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("links"))

    @settings(max_examples=4, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.dictionaries(st.sampled_from(PAGES[page]), VALUES, min_size=1, max_size=len(PAGES[page])))
    def check(query):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("DPBO_CACHE_DIR", cache)
            assert_sentences_only(run_page(page, query))

    check()


# Every page's controls module and one numeric setting of it: the same opening reads every page's link.
CONTROLS = {
    "1_Federated_BO.py": (fbo_controls.FBO_PARAMS, "agents"),
    "2_Teaching_view.py": (teaching_controls.PARAMS, "agents"),
    "3_Privacy_accountant.py": (accountant_controls.PARAMS, "steps"),
    "4_DP_HYPE.py": (hype_controls.PARAMS, "clients"),
    "5_PO_GP_UCB.py": (pogpucb_controls.PARAMS, "seed"),
    "6_Tradeoff_explorer.py": (sweep_controls.PARAMS, "workers"),
    "7_Privacy_audit.py": (audit_controls.PARAMS, "trials"),
    "8_Paper_reproduction.py": (reproduction_controls.PARAMS, "runs"),
}


@pytest.mark.parametrize("page", list(CONTROLS))
def test_every_page_names_an_ignored_link_value_with_its_allowed_range(page, monkeypatch, tmp_path):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    params, name = CONTROLS[page]
    too_large = f"{int(params[name].high) + 1}"      # parses, but is above the control's limit
    at = run_page(page, {name: too_large})
    assert_sentences_only(at)
    sentence = f"Ignored {name}={too_large} from the link: {params[name].allowed(name)}."
    assert [w.value for w in at.warning] == [sentence]
    assert "whole number from" in sentence and "did not parse" not in page_text(at)


def test_an_out_of_range_count_of_clients_is_reported_with_its_range(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    at = run_page("4_DP_HYPE.py", {"clients": "99999999"})
    high = f"{int(hype_controls.PARAMS['clients'].high):,}"
    assert [w.value for w in at.warning] == [
        f"Ignored clients=99999999 from the link: clients is a whole number from 1 to {high}."]


def test_the_allowed_range_reads_as_a_sentence():
    from ui.kit.state import MAX_TEXT, Param

    assert Param(50, int, low=2, high=100_000).allowed("agents") == "agents is a whole number from 2 to 100,000"
    assert Param(0.25, float, low=1e-9, high=1.0).allowed("q") == "q is a number from 1e-09 to 1"
    assert Param(1.0, float, low=0.5).allowed("S") == "S is a number of at least 0.5"
    assert Param("a", str, ("a", "b")).allowed("mode") == "mode is one of a, b"
    assert Param(["a"], list, ("a", "b")).allowed("algorithms") == "algorithms is a comma-separated list of a, b"
    assert Param(None, float, optional=True, high=2.0).allowed("alpha") == "alpha is a number of at most 2 or empty"
    assert Param(True, bool).allowed("local") == "local is true or false"
    assert Param("", str).allowed("values") == f"values is text of at most {MAX_TEXT:,} characters"

