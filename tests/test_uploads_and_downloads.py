"""Uploads are bounded and need only the loader's required columns; every CSV download neutralises formulas
(issue 12, findings 4, 5 and 6)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.sweep.store import MAX_SETTINGS, REQUIRED_COLUMNS, read_table
from engine.validation import ConfigError
from ui.kit.downloads import csv_bytes, neutralise

ROOT = Path(__file__).resolve().parents[1]


def csv_file(rows: int, columns: str = "setting,utility,privacy_loss", settings: int = 5) -> io.BytesIO:
    body = "".join(f"q={i % settings},0.{i % 89:02d},{1 + i % 7}\n" for i in range(rows))
    data = io.BytesIO(f"{columns}\n{body}".encode())
    data.name = "table.csv"
    return data


def test_a_table_with_only_the_required_columns_reads_with_defaults():
    table = read_table(csv_file(12), "table.csv")
    assert list(table.columns[:3]) == list(REQUIRED_COLUMNS)
    assert set(table["role"]) == {"setting"} and table["error"].isna().all()
    assert table.groupby("setting")["run"].apply(lambda r: list(r) == list(range(len(r)))).all()


def test_uploads_are_bounded_in_bytes_rows_and_settings():
    with pytest.raises(ConfigError, match="MB; this server reads tables of at most"):
        read_table(csv_file(50_000), "table.csv", max_bytes=100_000)
    with pytest.raises(ConfigError, match="more than 1,000 rows") as err:
        read_table(csv_file(5_000), "table.csv", max_rows=1_000)
    assert err.value.field == "rows"
    frame = pd.DataFrame({"setting": [f"s{i}" for i in range(3000)], "utility": 0.5, "privacy_loss": 1.0})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    with pytest.raises(ConfigError, match="more than 1,000 rows"):
        read_table(io.BytesIO(buffer.getvalue()), "t.parquet", max_rows=1_000)
    with pytest.raises(ConfigError, match=f"at most {MAX_SETTINGS:,}"):
        read_table(io.BytesIO(buffer.getvalue()), "t.parquet")
    with pytest.raises(ConfigError, match="not a sweep table"):
        read_table(csv_file(3, columns="setting,utility,epsilon"), "table.csv")
    with pytest.raises(ConfigError, match="Could not read"):
        read_table(io.BytesIO(b"\x00\x01garbage"), "t.parquet")


def test_the_explorer_shows_a_table_that_has_only_the_required_columns(monkeypatch, tmp_path):
    # The probe's upload with only the loader's columns made the page fail with KeyError 'role'.
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    table = read_table(csv_file(30), "table.csv")
    at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=60)
    at.session_state["sw_result"] = dict(table=table, label="Uploaded table table.csv", source="upload",
                                         failures=[])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("settings" == m.label for m in at.metric)


@pytest.mark.parametrize("cell", ["=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1"])
def test_formula_cells_come_back_as_text(cell):
    frame = pd.DataFrame({"setting": [cell, "q=0.25"], "utility": [-0.5, 0.25], cell: ["a", "b"]})
    text = csv_bytes(frame).decode()
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert back["setting"][0] == "'" + cell and back["setting"][1] == "q=0.25"
    assert list(back["utility"]) == [-0.5, 0.25]                 # numbers stay numbers
    assert back.columns[2] == "'" + cell                         # and column names are neutralised too
    assert neutralise(3.5) == 3.5 and neutralise("0.25") == "0.25"


def test_every_csv_download_goes_through_the_one_helper():
    # The dashboard writes CSV only in ui/kit/downloads.py; pages and other modules call csv_bytes.
    offenders = []
    for path in list((ROOT / "pages").glob("*.py")) + list((ROOT / "ui").glob("*.py")):
        if path.name == "downloads.py":
            continue
        if re.search(r"\.to_csv\(", path.read_text()):
            offenders.append(path.name)
    assert not offenders


def test_a_pages_configuration_download_runs_again_from_the_command_line(tmp_path):
    import json
    import shlex

    from engine.cli import build_parser
    from engine.cli import hype as hype_cli
    from engine.hype import HypeConfig
    from ui.kit.downloads import config_json

    config = HypeConfig(mode="data", clients=30, k=2, epsilon=0.5, repetitions=20, alpha=0.5)
    data = config_json([("DP-HYPE", config)], hype_cli.command_line)
    path = tmp_path / "hype_config.json"
    path.write_bytes(data)
    parser = build_parser()
    assert hype_cli.config_from_args(parser.parse_args(["hype", "--config", str(path)])) == config
    line = json.loads(data)["lines"][0]["command_line"]
    assert hype_cli.config_from_args(parser.parse_args(shlex.split(line)[3:])) == config
