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

from tests.test_hosting import page_param_names
from ui.fbo import controls as fbo_controls
from ui.hype import controls as hype_controls
from ui.pogpucb import controls as pogpucb_controls
from ui.sweep import controls as sweep_controls

ROOT = Path(__file__).resolve().parents[1]
PAGES = {
    "1_Federated_BO.py": sorted(fbo_controls.FBO_PARAMS) + ["preset"],
    "2_Teaching_view.py": sorted(page_param_names("2_Teaching_view.py")),
    "3_Privacy_accountant.py": sorted(page_param_names("3_Privacy_accountant.py")) + ["preset"],
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
    ("1_Federated_BO.py", {"agents": "1e999"}, {}, "Ignored link parameter(s) that did not fit: agents"),
    ("2_Teaching_view.py", {"agents": "1e999"}, {}, "Ignored link parameter(s) that did not fit: agents"),
    ("2_Teaching_view.py", {"agents": "100000"}, {}, "This round needs about"),
    ("3_Privacy_accountant.py", {"z": "1e-200"}, {}, "did not parse: z"),
    ("3_Privacy_accountant.py", {"q": "1e-300", "z": "1e300"}, {}, "did not parse: q, z"),
    ("3_Privacy_accountant.py", {"z": "0.01", "steps": "40"}, {}, "The PLD accountant needs z of at least 0.2"),
    ("4_DP_HYPE.py", {"noise": "sigma", "sigma": "1e308"}, {}, "did not parse: sigma"),
    ("4_DP_HYPE.py", {"epsilon": "1e-300"}, {}, "did not parse: epsilon"),
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
