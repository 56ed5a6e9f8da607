"""No input crashes a page: every page's controls and link values fuzzed in hosting mode, and nothing shows a server
folder.

In hosting mode with the limits of issue 42's security test (``DPBO_MAX_SECONDS=30``, ``DPBO_MAX_MEMORY_MB=2048``)
and the landmine data absent, every page (the landing page and the eight tools) is opened and then:

- every text control alone gets 5,000 digits (a link is capped at 2,000 characters; Python refuses integers of
  over 4,300 digits) and must keep at most 2,000; then every control at once: the text controls a mix of NaN,
  infinities, hexadecimal, a path and markup, and
- every number control gets a huge value (1e308, or 2^62 for a whole number), then NaN where it holds a real number
  or minus 2^62 (NaN into a whole-number control never reaches a page: Streamlit refuses it while it reads the
  browser's message; ``tests/test_hosted_visitors.py`` sends it through a hosted server);
- the two pages whose links the Hypothesis test (tests/test_property_links.py) does not throw values at, the
  Privacy audit and the Paper reproduction, get every part and mechanism with the smallest, the largest and
  malformed numbers.

Each run must end without an exception box or a traceback, and no element may show the server's data folder,
cache folder or project folder. Before issue 42's fixes the Paper reproduction crashed on
``?part=har-standin&runs=2``, 5,000 digits in the Trade-off explorer's "its values" crashed it, and the
reproduction's landmine part showed the data folder. About 60-90 s on the loaded 2-core machine (one AppTest run
per page and attack, each a second or two).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.audit import controls as audit_controls
from ui.reproduction import controls as reproduction_controls

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["app.py"] + sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("[0-9]_*.py"))
TIMEOUT = 180
LONG_DIGITS = "5" * 5000
MIXED = "nan, -1e999, 0x10, ../../etc/passwd, <b>x</b>, [a](https://example.com)"
HUGE_INT = 2**62


@pytest.fixture(autouse=True)
def hosted(monkeypatch, tmp_path_factory):
    folders = {"DPBO_DATA_DIR": str(tmp_path_factory.mktemp("fuzz-data-folder")),
               "DPBO_CACHE_DIR": str(tmp_path_factory.mktemp("fuzz-cache-folder"))}
    for name, value in dict(folders, DPBO_HOSTED="1", DPBO_RUN_WORKERS="0", DPBO_MAX_SECONDS="30",
                            DPBO_MAX_MEMORY_MB="2048").items():
        monkeypatch.setenv(name, value)
    return folders


def texts(at: AppTest) -> list[str]:
    """Every text a visitor reads on the page (boxes, captions, markdown, labels, help, options)."""
    out = []
    for kind in ("error", "warning", "info", "success", "markdown", "caption", "exception", "title", "header",
                 "subheader"):
        out += [str(e.value) for e in getattr(at, kind)]
    for kind in ("text_input", "text_area", "number_input", "selectbox", "radio", "multiselect", "slider",
                 "checkbox", "toggle", "button"):
        for widget in getattr(at, kind):
            proto = widget.proto
            out += [str(getattr(proto, name, "")) for name in ("label", "help", "placeholder")]
            out += [str(o) for o in getattr(proto, "options", [])]
    return out


def problems(at: AppTest, hosted: dict, what: str) -> list:
    """What a visitor should never see after ``what``: an exception box, a traceback, a server folder."""
    found = [(what, "exception", e.value) for e in at.exception]
    shown = texts(at)
    found += [(what, "traceback", t[:200]) for t in shown if "Traceback" in t or 'File "' in t]
    for folder in (hosted["DPBO_DATA_DIR"], hosted["DPBO_CACHE_DIR"], str(ROOT)):
        found += [(what, "folder", t[:200]) for t in shown if folder in t]
    return found


def opened(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.run()


def number_value(widget, attack: int):
    is_int = float(widget.step).is_integer() and (widget.value is None or float(widget.value).is_integer())
    if attack == 0:
        return HUGE_INT if is_int else 1e308
    return -HUGE_INT if is_int else math.nan


@pytest.mark.parametrize("page", PAGES, ids=[Path(p).stem for p in PAGES])
def test_every_control_of_every_page_takes_any_value_with_sentences_only(page, hosted):
    at = opened(page)
    found = problems(at, hosted, "opened")
    names = [w.key for w in list(at.text_input) + list(at.text_area) if not w.disabled]
    for name in names:                           # each text control alone, the others as a visitor left them
        at = opened(page)
        widget = next(w for w in list(at.text_input) + list(at.text_area) if w.key == name)
        widget.set_value(LONG_DIGITS)
        at.run()
        found += problems(at, hosted, f"{name} = 5,000 digits")
        typed = next(w for w in list(at.text_input) + list(at.text_area) if w.key == name).value
        if typed is not None and len(typed) > 2000:
            found.append((name, "max_chars", len(typed)))
    for attack in (0, 1):                        # then every control at once
        for widget in list(at.text_input) + list(at.text_area):
            if not widget.disabled:
                widget.set_value(MIXED)
        for widget in at.number_input:
            if not widget.disabled:
                widget.set_value(number_value(widget, attack))
        at.run()
        found += problems(at, hosted, f"every control, attack {attack}")
    assert not found, found


REPRODUCTION_LINKS = [{"part": part, "runs": "2"} for part in reproduction_controls.PARAMS["part"].choices]
REPRODUCTION_LINKS += [{"runs": str(reproduction_controls.PARAMS["runs"].high)}]
REPRODUCTION_LINKS += [{"paper": paper, "part": "har-standin", "runs": "1e999", "seed": "9" * 40}
                       for paper in reproduction_controls.PARAMS["paper"].choices]
AUDIT_LINKS = [{"mechanism": mechanism, "trials": trials, "epsilon": epsilon}
               for mechanism in audit_controls.PARAMS["mechanism"].choices
               for trials, epsilon in (("1", "1e-300"), (str(int(audit_controls.PARAMS["trials"].high)), "nan"))]


@pytest.mark.parametrize("page, links", [("pages/8_Paper_reproduction.py", REPRODUCTION_LINKS),
                                         ("pages/7_Privacy_audit.py", AUDIT_LINKS)], ids=["reproduction", "audit"])
def test_every_part_and_mechanism_with_extreme_numbers_in_the_link(page, links, hosted):
    found = [problem for query in links for problem in problems(opened(page, query), hosted, f"{query}")]
    assert not found, found
