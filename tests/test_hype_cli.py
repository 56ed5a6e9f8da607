"""DP-HYPE's configuration and command line: JSON out, one sentence and exit 2 for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.hype import HypeConfig, iter_hype, run_hype
from engine.validation import ConfigError


def run_cli(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(["hype", *argv])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else None), captured.err


def test_simulation_prints_the_documented_fields(capsys):
    code, out, _ = run_cli(capsys, "--mode", "simulation", "--clients", "250", "--candidates", "100", "--good",
                           "5", "--sigma-loss", "0.2", "--k", "5", "--epsilon", "1", "--delta", "1e-5",
                           "--repetitions", "300", "--seed", "0")
    assert code == 0
    for name in ("sigma", "epsilon", "success_rate", "bound", "clean_votes", "noisy_votes", "winner_counts"):
        assert name in out
    assert out["sigma"] == pytest.approx(12.5, rel=0.05)
    assert len(out["clean_votes"]) == len(out["noisy_votes"]) == len(out["winner_counts"]) == 100
    assert sum(out["winner_counts"]) == 300
    assert sum(out["clean_votes"]) == 250 * 5          # every client casts k votes
    assert 0.0 <= out["bound"] <= out["success_rate"] <= 1.0
    assert len(out["good"]) == 5


def test_calibrate_prints_sigma(capsys):
    code, out, _ = run_cli(capsys, "--calibrate", "--k", "5", "--epsilon", "1", "--delta", "1e-5")
    assert code == 0
    assert out["sigma"] == pytest.approx(12.5, rel=0.05)
    code, back, _ = run_cli(capsys, "--calibrate", "--k", "5", "--sigma", str(out["sigma"]), "--delta", "1e-5")
    assert back["epsilon"] == pytest.approx(1.0, rel=1e-4)


def test_fig2a_grid_from_the_command_line(capsys):
    code, out, _ = run_cli(capsys, "--fig2a", "--clients", "40", "--candidates", "30", "--repetitions", "50")
    assert code == 0
    rates = np.asarray(out["success_rate"])
    assert rates.shape == (len(out["sigma_losses"]), len(out["ks"]), 2)
    assert np.all((0 <= rates) & (rates <= 1))


@pytest.mark.parametrize("argv, sentence", [
    (["--k", "101"], "k must be at most the number of candidates p (100), got 101."),
    (["--k", "0"], "k must be >= 1, got 0."),
    (["--epsilon", "0"], "epsilon must be in [0.01, 10000], got 0."),
    (["--epsilon", "-2", "--calibrate"], "epsilon must be > 0, got -2."),
    (["--delta", "1"], "delta must be in (0, 1), got 1."),
    (["--delta", "0"], "delta must be in (0, 1), got 0."),
    (["--xi", "1"], "dropout tolerance xi must be in [0, 1), got 1."),
    (["--xi", "-0.1"], "dropout tolerance xi must be in [0, 1), got -0.1."),
    (["--good", "120"], "The number of good candidates must be at most the number of candidates (100), got 120."),
    (["--epsilon", "1", "--sigma", "3"], "Give either epsilon or sigma, not both."),
    (["--mode", "data", "--dataset", "wine", "--clients", "100"],
     "The wine data set can serve at most 71 clients (each needs 2 training examples), got 100."),
])
def test_bad_input_is_one_sentence_and_exit_2(capsys, argv, sentence):
    code, _, err = run_cli(capsys, *argv, "--repetitions", "5")
    assert code == 2
    assert err.strip() == f"error: {sentence}"
    assert "Traceback" not in err


def test_same_seed_same_result_and_chunking_does_not_matter():
    config = HypeConfig(clients=80, candidates=40, good=4, sigma_loss=0.6, epsilon=0.5, repetitions=900, seed=3)
    whole = run_hype(config)
    again = run_hype(config)
    np.testing.assert_array_equal(whole.winner_counts, again.winner_counts)
    partial = [(r.repetitions, r.complete) for r in iter_hype(config, every=60)]
    assert partial[-1] == (900, True) and all(not done for _, done in partial[:-1])
    assert len(partial) >= 4  # blocks of 200 repetitions: 200, 400, 600, 800, 900
    chunked = None
    for chunked in iter_hype(config, every=60):
        pass
    np.testing.assert_array_equal(chunked.winner_counts, whole.winner_counts)
    np.testing.assert_array_equal(chunked.noisy_votes, whole.noisy_votes)
    other = run_hype(config.replace(seed=4))
    assert not np.array_equal(other.winner_counts, whole.winner_counts)


def test_secure_summation_path_gives_the_same_law():
    base = HypeConfig(clients=60, candidates=20, good=2, sigma_loss=0.8, epsilon=0.3, repetitions=1500, seed=1)
    exact = run_hype(base)
    secure = run_hype(base.replace(aggregation="secure-sum"))
    # Same losses, independently drawn noise: both success rates estimate one probability
    # (each has sd <= 0.013; a difference above 0.07 is > 3.8 sd of the difference).
    assert abs(exact.success_rate - secure.success_rate) < 0.07
    np.testing.assert_array_equal(exact.mean_clean_votes, secure.mean_clean_votes)


def test_config_defaults_and_validation():
    assert HypeConfig().epsilon == 1.0
    assert HypeConfig(sigma=2.0).epsilon is None
    assert HypeConfig(dropout=0.3, clients=10).dropped == 3
    with pytest.raises(ConfigError, match="leaves no client"):
        HypeConfig(clients=2, dropout=0.9)
    with pytest.raises(ConfigError, match="mode must be one of"):
        HypeConfig(mode="magic")
    assert HypeConfig(mode="data", k=100).p == 100
    with pytest.raises(ConfigError) as err:
        HypeConfig(mode="data", k=101)
    assert err.value.field == "k"


def test_config_file_and_command_line(tmp_path):
    from engine.cli import build_parser
    from engine.cli.hype import command_line, config_from_args

    config = HypeConfig(mode="data", clients=40, k=3, sigma=2.0, repetitions=10, seed=2)
    path = tmp_path / "hype_config.json"
    path.write_text(json.dumps({"config": config.to_dict(), "command_line": command_line(config)}))
    parser = build_parser()
    assert config_from_args(parser.parse_args(["hype", "--config", str(path)])) == config
    assert config_from_args(parser.parse_args(["hype", "--config", str(path), "--k", "4"])) == config.replace(k=4)
    # Without a file, the number of clients still follows the mode (250 simulated, 100 on data).
    assert config_from_args(parser.parse_args(["hype"])).clients == 250
    assert config_from_args(parser.parse_args(["hype", "--mode", "data"])).clients == 100
    assert command_line(config) == ("python -m engine hype --mode data --clients 40 --k 3 --sigma 2 "
                                    "--repetitions 10 --seed 2")
