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


# ---------------------------------------------------------------- chart text (Plotly renders HTML in it)
LINK, IMAGE = '<a href="http://evil.example">x</a>', "<img src=x>"
CHART_RAW = re.compile(r"<a |<img|</a>")         # an unescaped link or image in a figure's JSON


def _html_table(runs: int = 2):
    import numpy as np
    import pandas as pd

    rows = []
    for k, kind in enumerate((LINK, IMAGE)):
        for q in (0.1, 0.2):
            for run in range(runs):
                rows.append(dict(tool="fbo", cell=2 * k + int(q * 10), role="setting", setting=f"q={q}, kind={kind}",
                                 replicate=0, run=run, q=q, kind=kind, utility=q + k + 0.01 * run,
                                 privacy_loss=1 / q, privacy_delta=1e-5, metric=f"{LINK} metric",
                                 lower_is_better=False, error=None))
    rows.append(dict(tool="fbo", cell=9, role="reference", setting=f"algorithm={IMAGE}", replicate=0, run=0,
                     q=np.nan, kind=None, utility=0.5, privacy_loss=np.nan, privacy_delta=np.nan,
                     metric=f"{LINK} metric", lower_is_better=False, error=None))
    return pd.DataFrame(rows)


def _assert_escaped(figure_json: str) -> None:
    assert not CHART_RAW.search(figure_json), CHART_RAW.findall(figure_json)
    assert "&lt;a href=\\\"http:" in figure_json or "&lt;a href=\"http:" in figure_json   # shown, as text
    assert "&lt;img src=x&gt;" in figure_json


def test_sweep_settings_reach_the_charts_only_as_escaped_text():
    from engine.sweep import summarise, varied_parameters
    from ui.sweep.figures import frontier_figure, heatmap_figure

    table = _html_table()
    summary, varied = summarise(table), varied_parameters(table)
    assert set(varied) == {"q", "kind"}
    frontier = frontier_figure(summary, varied, metric_label=str(table["metric"].iloc[0]))
    heatmap = heatmap_figure(summary, "q", "kind", metric_label=str(table["metric"].iloc[0]))
    for figure in (frontier, heatmap):
        _assert_escaped(figure.to_json())
    legend = [trace.name for trace in frontier.data if trace.name]
    assert any("&lt;img src=x&gt;" in name for name in legend)       # legend names, hover text, annotations
    assert any("&lt;a href" in text for trace in frontier.data for text in (trace.hovertext or ()))
    assert any("&lt;img" in annotation.text for annotation in frontier.layout.annotations)
    assert "&lt;a href" in frontier.layout.yaxis.title.text and "&lt;a href" in heatmap.layout.title.text


def test_an_uploaded_tables_settings_reach_the_pages_charts_escaped(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=120)
    at.run()
    at.file_uploader(key="sw_upload").upload("html.csv", _html_table().to_csv(index=False).encode(), "text/csv")
    at.run()
    assert not at.exception, at.exception
    charts = at.get("plotly_chart")
    assert charts, "the uploaded table drew no chart"
    for chart in charts:
        _assert_escaped(chart.proto.spec)


NAME_RAW = re.compile(r"(?<!\\)<img|in(?<!\\)\]\(https|(?<!\\)\*\*b")   # the name's link, image or emphasis


def test_an_uploaded_files_name_is_shown_literally(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    name = "[Sign in](https:evil.example) <img src=x> **b**.csv"
    at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=120)
    at.run()
    at.file_uploader(key="sw_upload").upload(name, _html_table().to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception, at.exception
    texts = rendered(at)
    assert any("Sign in" in text for text in texts)                        # the table's name, as the visitor wrote it
    leaks = [text for text in texts if NAME_RAW.search(text)]
    assert not leaks, leaks
    at.file_uploader(key="sw_upload").upload(name, b"not,a\nsweep,table\n", "text/csv").run()
    assert not at.exception, at.exception
    leaks = [text for text in rendered(at) if NAME_RAW.search(text)]
    assert not leaks, leaks
