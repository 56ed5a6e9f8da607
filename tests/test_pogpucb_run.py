"""PO-GP-UCB runs end to end: configuration, seeding, the result contract, the CLI, the tasks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.cli import main, to_json
from engine.pogpucb import PoConfig, build_task, config_from_log_epsilon, curator_summary, iter_pogpucb, run_pogpucb
from engine.pogpucb.tasks import MAX_NORM
from engine.validation import ConfigError

SMALL = dict(iterations=8, runs=3, distortion_pairs=300)


@pytest.mark.parametrize("fields, field, words", [
    (dict(r=0), "r", "at least 1"),
    (dict(r=2.5), "r", "whole number"),
    (dict(epsilon=0.0), "epsilon", "must be in [1e-06, 1000000]"),
    (dict(epsilon=-1.0), "epsilon", "must be in [1e-06, 1000000]"),
    (dict(delta=0.0), "delta", "(0, 1)"),
    (dict(delta=1.0), "delta", "(0, 1)"),
    (dict(iterations=0), "iterations", "at least 1"),
    (dict(runs=0), "runs", "at least 1"),
    (dict(dataset="mnist"), "dataset", "one of"),
    (dict(hyperparameters="guess"), "hyperparameters", "one of"),
])
def test_bad_config_is_one_sentence_naming_the_field(fields, field, words):
    with pytest.raises(ConfigError) as err:
        PoConfig(**fields)
    assert err.value.field == field
    message = str(err.value)
    assert words in message and message.endswith(".") and "\n" not in message


def test_log_epsilon_helper():
    assert config_from_log_epsilon(1.1).epsilon == pytest.approx(math.exp(1.1))
    assert PoConfig(epsilon=math.exp(1.3)).log_epsilon == pytest.approx(1.3)
    assert PoConfig().delta_prime == pytest.approx(0.025)  # delta_ucb / 2 (Theorem 3)


def test_same_seed_same_result_and_generator_yields_every_run():
    config = PoConfig(**SMALL)
    partials = list(iter_pogpucb(config))
    assert [p.runs_done for p in partials] == [1, 2, 3]
    assert partials[-1].complete and not partials[0].complete
    again = run_pogpucb(config)
    np.testing.assert_array_equal(again.regrets, partials[-1].regrets)
    np.testing.assert_array_equal(again.baseline_regrets, partials[-1].baseline_regrets)
    other = run_pogpucb(config.replace(seed=1))
    assert not np.array_equal(other.regrets, again.regrets)


def test_runs_share_initial_rows_across_r():
    """Run k starts from the same rows whatever r: the baseline of both is then identical."""
    a = run_pogpucb(PoConfig(r=3, **SMALL))
    b = run_pogpucb(PoConfig(r=20, **SMALL))
    np.testing.assert_array_equal(a.baseline_regrets, b.baseline_regrets)


def test_result_json_contract():
    res = run_pogpucb(PoConfig(**SMALL))
    payload = json.loads(to_json(res.to_json()))
    for key in ("curve", "curve_stderr", "baseline_curve", "sigma_min", "omega", "branch", "max_admissible_r",
                "epsilon", "log_epsilon", "final_regrets", "distortion_quantiles"):
        assert key in payload
    assert len(payload["curve"]) == len(payload["baseline_curve"]) == 8
    assert len(payload["final_regrets"]) == 3
    assert payload["branch"] == "preserve" and payload["max_admissible_r"] == 11
    curve = np.array(payload["curve"])
    assert np.all(np.diff(curve) <= 1e-12) and np.all(curve >= 0)   # simple regret never increases
    assert np.all(np.array(payload["curve_stderr"]) >= 0)
    assert res.distortion.size > 250 and res.preview_z.shape[1] == 2


def test_curator_summary_matches_the_run():
    config = PoConfig(epsilon=1.0, **SMALL)
    summary = curator_summary(config)
    assert summary.branch == "lift" and summary.distortion_bound > 1
    assert run_pogpucb(config).summary == summary


def test_refit_mode_runs():
    res = run_pogpucb(PoConfig(hyperparameters="refit", refit_every=4, baseline=False, **SMALL))
    assert res.baseline_regrets is None and res.regrets.shape == (3, 8)


@pytest.mark.parametrize("name, shape", [("branin", (10_000, 2)), ("diabetes", (442, 10))])
def test_other_tasks_are_centred_scaled_and_standardised(name, shape):
    task = build_task(name)
    assert task.X.shape == shape
    assert np.abs(task.X.mean(0)).max() < 1e-9
    assert np.linalg.norm(task.X, axis=1).max() == pytest.approx(MAX_NORM)
    assert task.f.mean() == pytest.approx(0, abs=1e-9) and task.f.std() == pytest.approx(1)
    assert task.hyper.lengthscale > 0 and task.hyper.noise_var > 0


def test_cli_prints_json(capsys):
    code = main(["pogpucb", "--dataset", "synthetic", "--epsilon", "3.004", "--delta", "1e-5", "--r", "10",
                 "--iterations", "5", "--runs", "2", "--seed", "0"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["r"] == 10 and payload["runs_done"] == 2 and len(payload["curve"]) == 5
    assert payload["branch"] == "preserve"


@pytest.mark.parametrize("argv, words", [
    (["--r", "0"], "r (projection dimension) must be at least 1"),
    (["--epsilon", "0"], "epsilon must be in [1e-06, 1000000]"),
    (["--epsilon", "-2"], "epsilon must be in [1e-06, 1000000]"),
    (["--delta", "1.5"], "delta must be in (0, 1)"),
    (["--delta", "0"], "delta must be in (0, 1)"),
    (["--iterations", "0"], "iterations (number of GP-UCB iterations T) must be at least 1"),
])
def test_cli_bad_input_is_one_sentence_and_exit_2(capsys, argv, words):
    assert main(["pogpucb", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0]


def test_cli_config_file_and_command_line(tmp_path):
    from engine.cli import build_parser
    from engine.cli.pogpucb import command_line, config_from_args

    config = PoConfig(dataset="diabetes", epsilon=5.0, r=4, iterations=7, runs=3, baseline=False)
    path = tmp_path / "po_config.json"
    path.write_text(json.dumps({"config": config.to_dict(), "command_line": command_line(config)}))
    parser = build_parser()
    assert config_from_args(parser.parse_args(["pogpucb", "--config", str(path)])) == config
    over = config_from_args(parser.parse_args(["pogpucb", "--config", str(path), "--log-epsilon", "1.1"]))
    assert over == config.replace(epsilon=math.exp(1.1))
    # The data set's own r and delta when neither file nor option gives them.
    assert config_from_args(parser.parse_args(["pogpucb", "--dataset", "diabetes"])).r == 5
    # delta stays: the config keeps 1e-5 where diabetes would take its own 1e-3.
    assert command_line(config) == ("python -m engine pogpucb --dataset diabetes --epsilon 5 --delta 1e-05 --r 4 "
                                    "--iterations 7 --runs 3 --no-baseline")
