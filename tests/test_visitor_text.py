"""Visitor text is text: Markdown links, images and HTML sent through every link parameter of every page are shown
literally (escaped by ui.kit.text.plain), never rendered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.kit.text import plain

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = "[Sign in](https://evil.example/x) ![p](https://evil.example/p.png) <img src=https://evil.example/i> **b**"
RAW = re.compile(r"(?<!\\)<img|(?<!\\)\]\(|(?<!\\)://|(?<!\\)\*\*b")   # an unescaped link, image, HTML, emphasis


def page_params():
    from ui.audit.controls import PARAMS as AUDIT
    from ui.fbo.controls import FBO_PARAMS
    from ui.fbo.teaching_controls import PARAMS as TEACHING
    from ui.hype.controls import PARAMS as HYPE
    from ui.pogpucb.controls import PARAMS as POGPUCB
    from ui.privacy.controls import PARAMS as PRIVACY
    from ui.reproduction.controls import PARAMS as REPRODUCTION
    from ui.sweep.controls import PARAMS as SWEEP

    return {"1_Federated_BO.py": FBO_PARAMS, "2_Teaching_view.py": TEACHING, "3_Privacy_accountant.py": PRIVACY,
            "4_DP_HYPE.py": HYPE, "5_PO_GP_UCB.py": POGPUCB, "6_Tradeoff_explorer.py": SWEEP,
            "7_Privacy_audit.py": AUDIT, "8_Paper_reproduction.py": REPRODUCTION}


def rendered(at: AppTest) -> list[str]:
    """Every text that Streamlit renders as Markdown (markdown, captions, alerts)."""
    kinds = (at.markdown, at.caption, at.error, at.warning, at.info, at.success, at.title, at.header, at.subheader)
    return [str(element.value) for kind in kinds for element in kind]


def test_plain_escapes_every_markdown_and_html_start():
    text = plain(PAYLOAD + " :red[x] $x$ www.evil.example\n# h\n- item")
    assert not RAW.search(text)
    assert "\\:red[x]" in text and "\\$x\\$" in text and "www\\.evil" in text
    assert "  \n\\# h  \n\\- item" in text
    for sentence in ("the data set is missing (see P = 3).", "trials must be in [100, 1e+08], got 50.", "k >= 1"):
        assert plain(sentence) == sentence                  # ordinary sentences read the same


@pytest.mark.parametrize("page", sorted(page_params()))
def test_link_values_are_shown_literally(page):
    params = page_params()[page]
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=90)
    for name in params:
        at.query_params[name] = PAYLOAD
    if page == "6_Tradeoff_explorer.py":      # the probe's link: the payload as a setting's name in the base
        at.query_params["base"] = f"algorithm=dp-fts-de;{PAYLOAD}=1"
    at.run()
    assert not at.exception, at.exception
    texts = rendered(at)
    leaks = [text for text in texts if RAW.search(text)]
    assert not leaks, leaks
    assert any("evil.example" in text for text in texts)      # the visitor sees what the link said
