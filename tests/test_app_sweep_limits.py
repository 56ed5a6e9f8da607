"""The trade-off explorer keeps working on tables that are all failures or too large to style in full."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "6_Tradeoff_explorer.py")


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _upload(at, name: str, frame: pd.DataFrame) -> None:
    at.file_uploader(key="sw_upload").upload(name, frame.to_csv(index=False).encode(), "text/csv")
    at.run()


def test_a_table_where_every_setting_failed_says_so_and_the_page_keeps_working(app):
    failed = pd.DataFrame({"setting": ["q=0.1", "q=0.1", "q=0.2", "q=0.2"], "q": [0.1, 0.1, 0.2, 0.2],
                           "utility": np.nan, "privacy_loss": np.nan,
                           "error": "This setting failed during the computation; lower the runs."})
    _upload(app, "failed.csv", failed)
    assert not app.exception, app.exception
    assert any("No setting finished" in i.value for i in app.info)
    app.run()                       # a rerun (any widget) must not break either
    assert not app.exception, app.exception


def test_a_table_past_the_styler_cell_limit_shows_a_bounded_part_and_says_so(app):
    rows = 30_000                    # x 14 columns after the defaults: past pandas' 262,144 styled cells
    rng = np.random.default_rng(0)
    big = pd.DataFrame({"setting": np.repeat(["q=0.1", "q=0.2", "q=0.4"], rows // 3),
                        "q": np.repeat([0.1, 0.2, 0.4], rows // 3), "utility": rng.normal(size=rows),
                        "privacy_loss": np.repeat([3.0, 2.0, 1.0], rows // 3), "seed": 0,
                        "extra_a": 1.0, "extra_b": 2.0, "extra_c": "c"})
    _upload(app, "big.csv", big)
    assert not app.exception, app.exception
    shown = app.dataframe[-1].value
    assert len(shown) < rows and len(shown) * len(shown.columns) <= 262_144
    assert any(f"of the {rows:,} rows" in c.value for c in app.caption)


def test_an_uploaded_table_is_read_and_analysed_once_not_on_every_rerun(app, monkeypatch):
    import ui.sweep.analysis as analysis
    import ui.sweep.analysis as upload_module      # the page reads an upload through ui.sweep.analysis.open_upload

    calls = {"summarise": 0, "pairs": 0}
    summarise, pairs = analysis.summarise, analysis.pair_differences

    def counted_summarise(table):
        calls["summarise"] += 1
        return summarise(table)

    def counted_pairs(table, *args, **kwargs):
        calls["pairs"] += 1
        return pairs(table, *args, **kwargs)

    monkeypatch.setattr(analysis, "summarise", counted_summarise)
    monkeypatch.setattr(analysis, "pair_differences", counted_pairs)
    table = pd.DataFrame({"setting": [f"q={q}" for q in (0.1, 0.1, 0.2, 0.2)], "q": [0.1, 0.1, 0.2, 0.2],
                          "utility": [0.3, 0.31, 0.2, 0.22], "privacy_loss": [1.0, 1.0, 2.0, 2.0],
                          "run": [0, 1, 0, 1]})
    _upload(app, "small.csv", table)
    assert not app.exception, app.exception
    assert calls == {"summarise": 1, "pairs": 1}
    read = upload_module.read_upload
    monkeypatch.setattr(upload_module, "read_upload", lambda *a, **k: pytest.fail("read again on a rerun"))
    for _ in range(3):        # a toggle, a click: reruns of the same page with the same file
        app.run()
        assert not app.exception, app.exception
    assert calls == {"summarise": 1, "pairs": 1}
    monkeypatch.setattr(upload_module, "read_upload", read)
