"""``python -m engine fbo``: the headless JSON contract and one-sentence errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.privacy import default_delta, epsilon

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--dataset", "synthetic", "--agents", "10", "--iterations", "4", "--features", "16", "--runs", "2",
         "--n-init", "3"]
KEYS = {"algorithm", "config", "curve", "curve_stderr", "epsilon", "delta", "clipped_fraction", "budget_reached_at",
        "wall_seconds"}


def _run(capsys, *argv):
    code = main(["fbo", *argv])
    captured = capsys.readouterr()
    return code, captured


def test_dp_run_prints_the_contract(capsys):
    code, captured = _run(capsys, "--algorithm", "dp-fts-de", *SMALL, "--q", "0.5", "--z", "1.2", "--S", "9",
                          "--P", "2", "--seed", "3", "--accountant", "ma")
    assert code == 0 and captured.err == ""
    out = json.loads(captured.out)
    assert KEYS <= set(out)
    assert out["algorithm"] == "dp-fts-de"
    assert len(out["curve"]) == len(out["curve_stderr"]) == len(out["epsilon"]) == 5
    assert out["delta"] == pytest.approx(default_delta(10))
    assert out["epsilon"][0] == 0.0
    assert out["epsilon"][-1] == pytest.approx(epsilon(0.5, 1.2, 4, default_delta(10), "ma"))
    assert out["budget_reached_at"] is None and out["wall_seconds"] > 0
    config = out["config"]
    assert config["agents"] == 10 and config["q"] == 0.5 and config["S"] == 9.0 and config["seed"] == 3
    assert config["z"] == 1.2 and config["delta"] == out["delta"]
    # Same command, same numbers.
    code, again = _run(capsys, "--algorithm", "dp-fts-de", *SMALL, "--q", "0.5", "--z", "1.2", "--S", "9",
                       "--P", "2", "--seed", "3", "--accountant", "ma")
    assert json.loads(again.out)["curve"] == out["curve"]


def test_every_config_option_reaches_the_config(capsys):
    code, captured = _run(capsys, "--algorithm", "fts-de", *SMALL, "--P", "3", "--sampling", "fixed",
                          "--pt-schedule", "constant", "--pt-constant", "0.3", "--weights", "fixed", "--weight-a", "9",
                          "--weight-schedule", "real", "--no-local-exploration", "--fts-variant", "concurrent",
                          "--alpha", "0.5", "--lengthscale", "0.05", "--noise-var", "0.02", "--objective-seed", "4",
                          "--domain", "continuous", "--delta", "0.01", "--own-sampler", "pathwise",
                          "--own-features", "40", "--refit-every", "3")
    assert code == 0, captured.err
    config = json.loads(captured.out)["config"]
    expected = dict(algorithm="fts-de", P=3, sampling="fixed", pt_schedule="constant", pt_constant=0.3,
                    weights="fixed", weight_a=9.0, weight_schedule="real", local_exploration=False,
                    fts_variant="concurrent", alpha=0.5, lengthscale=0.05, noise_var=0.02, objective_seed=4,
                    domain="continuous", delta=0.01, n_init=3, own_sampler="pathwise", own_features=40,
                    refit_every=3)
    assert {k: config[k] for k in expected} == expected
    assert json.loads(captured.out)["epsilon"] is None


def test_budget_stops_the_server_and_is_reported(capsys):
    code, captured = _run(capsys, "--algorithm", "dp-fts", *SMALL, "--P", "1", "--q", "0.5", "--budget", "2.5")
    out = json.loads(captured.out)
    assert code == 0
    k = out["budget_reached_at"]
    assert k is not None and 0 <= k < 4
    assert max(out["epsilon"]) <= 2.5
    code, captured = _run(capsys, "--algorithm", "dp-fts", *SMALL, "--P", "1", "--q", "0.5", "--budget", "2.5",
                          "--calibrate-z")
    out = json.loads(captured.out)
    assert out["epsilon"][-1] == pytest.approx(2.5, rel=0.01) and out["config"]["z"] > 1.0


def test_agents_default_is_the_tasks_own(capsys):
    code, captured = _run(capsys, "--algorithm", "ts", "--iterations", "1", "--features", "8", "--runs", "1",
                          "--n-init", "2")
    assert code == 0
    assert json.loads(captured.out)["config"]["agents"] == 200


@pytest.mark.parametrize("bad", [
    ["--q", "0"], ["--q", "1.01"], ["--q", "nan"], ["--z", "0"], ["--z", "-2"], ["--S", "0"], ["--S", "nan"],
    ["--P", "0"], ["--delta", "0"], ["--delta", "1"], ["--algorithm", "fedavg"], ["--dataset", "mnist"],
    ["--accountant", "gdp"], ["--sampling", "none"], ["--agents", "1"], ["--runs", "0"], ["--iterations", "x"],
    ["--calibrate-z"], ["--P", "11"], ["--budget", "-1"],
])
def test_bad_values_are_one_sentence_and_exit_2(capsys, bad):
    argv = ["--algorithm", "dp-fts-de", *SMALL, *bad]
    code, captured = _run(capsys, *argv)
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith(".")
    assert "Traceback" not in captured.err


def test_real_entry_point_exits_2_with_one_sentence():
    # One real process (start-up imports cost seconds on a busy machine); the JSON path is
    # the same main() exercised in-process above.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    bad = subprocess.run([sys.executable, "-m", "engine", "fbo", "--q", "2"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == "error: q must be in (0, 1], got 2."


def test_config_file_from_the_page_export_and_options_override_it(tmp_path, capsys):
    from engine.cli import build_parser
    from engine.cli.fbo import config_from_args
    from engine.fbo import FboConfig

    line = FboConfig(algorithm="dp-fts", agents=12, iterations=3, features=16, runs=2, n_init=3, q=0.5, P=1,
                     delta=1e-3, seed=4)
    export = {"link_query": {"agents": "12"}, "lines": [{"label": "DP-FTS", "config": line.to_dict()}]}
    path = tmp_path / "fbo_config.json"
    path.write_text(json.dumps(export))
    parser = build_parser()
    assert config_from_args(parser.parse_args(["fbo", "--config", str(path)])) == line
    assert config_from_args(parser.parse_args(["fbo", "--config", str(path), "--seed", "9"])) == line.replace(seed=9)
    code, captured = _run(capsys, "--config", str(path), "--iterations", "2")
    assert code == 0, captured.err
    config = json.loads(captured.out)["config"]
    assert config["algorithm"] == "dp-fts" and config["seed"] == 4 and config["iterations"] == 2


def test_the_pages_default_export_of_two_lines_runs_on_the_command_line_as_it_is(tmp_path, capsys):
    # The Federated BO page's default comparison has two lines; --config refused its export ("holds 2 lines; the
    # command line runs one"). Every line now runs, priced together, each under its label.
    from engine.cli import build_parser, per_line
    from engine.cli.fbo import command_line, config_from_args
    from engine.fbo.variants import COMPARISON_DEFAULTS, build_variants
    from ui.kit.downloads import config_json

    lines = build_variants(COMPARISON_DEFAULTS)
    assert len(lines) == 2
    path = tmp_path / "fbo_config.json"
    path.write_bytes(config_json(lines, command_line, link_query={"vary": "none"}))
    each = per_line(build_parser().parse_args(["fbo", "--config", str(path)]))
    assert [(label, config_from_args(args)) for label, args in each] == lines
    code, captured = _run(capsys, "--config", str(path), "--iterations", "2", "--runs", "1", "--features", "16")
    assert code == 0, captured.err
    out = json.loads(captured.out)["lines"]
    assert [line["label"] for line in out] == [label for label, _ in lines]
    assert [line["algorithm"] for line in out] == [config.algorithm for _, config in lines]
    assert all(len(line["curve"]) == 3 for line in out)


def test_the_lines_of_an_export_are_priced_together(tmp_path, capsys, monkeypatch):
    from engine.fbo import FboConfig
    from ui.kit.downloads import config_json
    from engine.cli.fbo import command_line

    line = FboConfig(algorithm="fts", agents=10, iterations=4, features=16, runs=2, n_init=3)
    path = tmp_path / "fbo_config.json"
    path.write_bytes(config_json([("a", line), ("b", line.replace(seed=1))], command_line))
    import engine.cli
    seen = []
    real = engine.cli.check
    monkeypatch.setattr(engine.cli, "check", lambda cost, limits, **kw: seen.append((cost, kw)) or real(cost, limits,
                                                                                                       **kw))
    code, captured = _run(capsys, "--config", str(path))
    assert code == 0, captured.err
    from engine.fbo.plan import plan_cost
    assert seen[0][0].seconds == pytest.approx(2 * plan_cost(line).seconds)
    assert seen[0][1] == {"what": "These 2 lines", "fewer": "lines"}


@pytest.mark.parametrize("content, words", [
    (None, "does not exist"),
    ("{not json", "is not JSON"),
    (json.dumps({"agents": 12, "colour": "red"}), "Unknown setting(s) in"),
    (json.dumps({"q": 2}), "q must be in (0, 1], got 2."),
    (json.dumps([1, 2]), "must hold a JSON object of settings"),
    (json.dumps({"lines": [{"config": {}}, {"config": {"q": 2}}]}), "q must be in (0, 1], got 2."),
])
def test_a_bad_config_file_is_one_sentence(tmp_path, capsys, content, words):
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content)
    code, captured = _run(capsys, "--config", str(path))
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].endswith(".")


def test_the_synopsis_in_docs_cli_lists_every_algorithm_and_data_set_of_help():
    # docs/cli.md listed 5 algorithms and 4 data sets where --help lists 7 and 6.
    import argparse
    import re
    from pathlib import Path

    from engine.cli import _load

    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    synopsis = text.split("python -m engine fbo --algorithm ", 1)[1].split("```", 1)[0]
    listed = {name: re.search(rf"--{name} (\S+)", "--algorithm " + synopsis).group(1).split("|")
              for name in ("algorithm", "dataset")}
    fbo = argparse.ArgumentParser()
    _load("fbo").add_arguments(fbo)
    shown = fbo.format_help()                                # what --help lists
    choices = {name: re.search(rf"--{name} {{([^}}]*)}}", shown).group(1).split(",")
               for name in ("algorithm", "dataset")}
    assert listed == choices, (listed, choices)
