"""``python -m engine sweep``: one JSON object on stdout, progress on stderr, one sentence and exit 2 on bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine.cli import main


def run_cli(capsys, *argv):
    code = main(["sweep", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_documented_command_writes_the_table_and_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "sweep.parquet"
    # The README's command, at a size a test can afford (20 agents, 5 iterations, M = 10).
    code, stdout, stderr = run_cli(capsys, "--tool", "fbo", "--dataset", "synthetic", "--grid", "q=0.15,0.25,0.5",
                                   "--grid", "z=1,1.5", "--runs", "2", "--set", "agents=20", "--set", "iterations=5",
                                   "--set", "features=10", "--out", str(out), "--executor", "local")
    assert code == 0, stderr
    summary = json.loads(stdout)                # stdout is exactly one JSON object
    assert summary["cells"] == 6 and summary["rows_written"] == 12 and summary["failed_cells"] == 0
    assert summary["varied"] == ["q", "z"] and summary["seconds"] > 0
    assert "sweep: 6/6 cells" in stderr         # progress goes to stderr
    table = pd.read_parquet(out)
    assert len(table) == 12
    assert sorted(set(zip(table["q"], table["z"]))) == [(q, z) for q in (0.15, 0.25, 0.5) for z in (1.0, 1.5)]
    assert (table["agents"] == 20).all() and table["privacy_loss"].gt(0).all()
    # A larger q at the same z spends more privacy (same accountant, same T).
    eps = table.groupby(["z", "q"])["privacy_loss"].first()
    assert eps[(1.0, 0.15)] < eps[(1.0, 0.25)] < eps[(1.0, 0.5)]


def test_presets_references_and_csv(tmp_path, capsys):
    out = tmp_path / "fig2c.csv"
    code, stdout, _ = run_cli(capsys, "--preset", "fig2c", "--set", "agents=10", "--set", "iterations=3",
                              "--set", "features=10", "--runs", "1", "--out", str(out), "--executor", "local",
                              "--quiet", "--reference", "algorithm=fts,fts_variant=concurrent")
    assert code == 0
    summary = json.loads(stdout)
    assert summary["cells"] == 3 + 1 and summary["varied"] == ["q"]
    table = pd.read_csv(out)
    assert table.loc[table["role"] == "reference", "algorithm"].tolist() == ["fts"]
    assert table.loc[table["role"] == "setting", "q"].tolist() == [0.15, 0.25, 0.5]


@pytest.mark.parametrize("argv, fragment", [
    (["--tool", "toy", "--out", "x.csv"], "Give at least one --grid"),
    (["--tool", "toy", "--grid", "x", "--out", "x.csv"], "Write 'x' as name=v1,v2"),
    (["--tool", "toy", "--grid", "x=-1", "--out", "x.csv"], "x must be > 0"),
    (["--tool", "toy", "--grid", "nope=1", "--out", "x.csv"], "no setting nope"),
    (["--tool", "toy", "--grid", "x=1", "--out", "x.txt"], ".parquet or .csv"),
    (["--tool", "toy", "--grid", "x=1", "--out", "x.csv", "--scheduler", "tcp://127.0.0.1:1"], "needs --executor dask"),
    (["--tool", "toy", "--grid", "x=1", "--out", "x.csv", "--runs", "0"], "number of runs"),
    (["--tool", "hype", "--preset", "fig3a", "--out", "x.csv"], "sweeps fbo, not hype"),
    (["--tool", "spark", "--grid", "x=1", "--out", "x.csv"], "Argument --tool"),
])
def test_bad_input_is_one_sentence_and_exit_2(tmp_path, capsys, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_cli(capsys, *argv)
    assert code == 2 and stdout == ""
    assert stderr.startswith("error: ") and fragment in stderr and "Traceback" not in stderr
    assert stderr.count("\n") == 1
