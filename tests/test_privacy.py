"""Privacy accounting: the paper's numbers, agreement with dp_accounting, calibration, CLI input checks."""

from __future__ import annotations

import json

import dp_accounting as dpa
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from engine.cli import main
from engine.privacy import (
    calibrate_q,
    calibrate_steps,
    calibrate_z,
    default_delta,
    epsilon,
    epsilon_curve,
    releases_within_budget,
)
from engine.privacy.paper import FIG2_EPSILON, PAPER_AGENTS, PAPER_STEPS, paper_epsilons
from engine.validation import ConfigError

N = 200
T = 40
DELTA = N ** -1.1
# DP-FTS-DE paper, Fig. 2c-d: moments-accountant privacy loss after T = 40 iterations.
PAPER_TABLE = [  # (q, z, epsilon)
    (0.15, 1.0, 5.93),
    (0.25, 1.0, 9.91),
    (0.50, 1.0, 20.12),
    (0.25, 1.2, 7.39),
    (0.25, 1.5, 5.22),
]


def _direct(q, z, steps, delta, accountant):
    """epsilon from dp_accounting itself, with its own defaults."""
    acc = RdpAccountant() if accountant == "rdp" else PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), steps)
    return acc.get_epsilon(delta)


def test_the_engine_table_holds_the_papers_printed_values():
    assert [(row.q, row.z, row.epsilon) for row in FIG2_EPSILON] == PAPER_TABLE
    assert (PAPER_AGENTS, PAPER_STEPS) == (N, T)
    assert paper_epsilons() == "5.93, 9.91, 20.12, 7.39, 5.22"


def test_the_paper_delta_is_named_and_the_product_delta_is_far_below_one_over_n():
    assert default_delta(N, "paper") == pytest.approx(DELTA) == N ** -1.1
    for n in (1, 2, 5, 200, 1000, 10**6):
        assert default_delta(n) == min(1e-5, 0.01 / n) <= 0.01 / n
    assert default_delta(5) <= 1e-3      # a delta a reviewer accepts for a small federation
    for bad, rule in ((0, "product"), (1, "paper"), (2.5, "product"), (5, "nonsense")):
        with pytest.raises(ConfigError):
            default_delta(bad, rule)


@pytest.mark.parametrize("q,z,expected", PAPER_TABLE)
def test_moments_accountant_reproduces_paper_table(q, z, expected):
    assert round(epsilon(q, z, T, DELTA, "ma"), 2) == pytest.approx(expected, abs=1e-9)


# dp_accounting's RDP at its fractional default orders takes seconds per call: three rows suffice.
@pytest.mark.parametrize("q,z,expected", [PAPER_TABLE[0], PAPER_TABLE[1], PAPER_TABLE[4]])
def test_rdp_is_tighter_and_matches_dp_accounting(q, z, expected):
    ours = epsilon(q, z, T, DELTA, "rdp")
    assert ours < expected
    assert ours == pytest.approx(_direct(q, z, T, DELTA, "rdp"), rel=1e-9)


@pytest.mark.parametrize("q,z,expected", [PAPER_TABLE[1]])
def test_pld_is_tighter_and_matches_dp_accounting(q, z, expected):
    ours = epsilon(q, z, T, DELTA, "pld")
    assert ours < epsilon(q, z, T, DELTA, "rdp") < expected
    # Ours uses a 10x coarser (pessimistic) grid than dp_accounting's default:
    # never below the fine answer, and within 1e-3 of it.
    direct = _direct(q, z, T, DELTA, "pld")
    assert direct - 1e-9 <= ours <= direct + 1e-3


def test_epsilon_curve_matches_single_evaluations():
    curve = epsilon_curve(0.25, 1.0, T, DELTA, "ma")
    assert len(curve) == T
    assert curve[-1] == pytest.approx(epsilon(0.25, 1.0, T, DELTA, "ma"), rel=1e-12)
    assert curve[9] == pytest.approx(epsilon(0.25, 1.0, 10, DELTA, "ma"), rel=1e-12)
    assert all(a < b for a, b in zip(curve, curve[1:]))


def test_releases_within_budget_stops_before_exceeding():
    curve = epsilon_curve(0.25, 1.0, T, DELTA, "ma")
    k = releases_within_budget(curve, 5.0)
    assert 0 < k < T
    assert curve[k - 1] <= 5.0 < curve[k]


# Calibration is a bisection over dp_accounting; the moments accountant keeps it to a second
# (the rdp/pld paths run the same dp_accounting.calibrate_dp_mechanism, only slower).
@pytest.mark.parametrize("accountant", ["ma"])
def test_calibrate_z_round_trip(accountant):
    z = calibrate_z(8.0, 0.25, T, DELTA, accountant)
    assert epsilon(0.25, z, T, DELTA, accountant) <= 8.0
    # The smallest such z: a slightly smaller one overshoots the target.
    assert epsilon(0.25, z * 0.99, T, DELTA, accountant) > 8.0


def test_calibrate_z_recovers_paper_setting():
    # Asking the moments accountant for the paper's 9.91 gives back z close to 1.
    assert calibrate_z(9.91, 0.25, T, DELTA, "ma") == pytest.approx(1.0, abs=5e-3)


def test_calibrate_q_and_steps_round_trip():
    q = calibrate_q(6.0, 1.0, T, DELTA, "ma")
    assert epsilon(q, 1.0, T, DELTA, "ma") <= 6.0 < epsilon(min(1.0, q * 1.02), 1.0, T, DELTA, "ma")
    steps = calibrate_steps(6.0, 0.25, 1.0, DELTA, "ma")
    assert epsilon(0.25, 1.0, steps, DELTA, "ma") <= 6.0 < epsilon(0.25, 1.0, steps + 1, DELTA, "ma")


def test_fixed_size_sampling_needs_agents_and_rejects_pld():
    with pytest.raises(ConfigError):
        epsilon(0.25, 1.0, T, DELTA, "rdp", sampling="fixed")
    with pytest.raises(ConfigError):
        epsilon(0.25, 1.0, T, DELTA, "pld", sampling="fixed", n_agents=N)
    assert epsilon(0.25, 1.0, T, DELTA, "rdp", sampling="fixed", n_agents=N) > 0


# ---------------------------------------------------------------- CLI


def test_cli_privacy_epsilon_and_calibration(capsys):
    assert main(["privacy", "--q", "0.25", "--z", "1", "--steps", "40", "--delta", str(DELTA),
                 "--accountant", "ma"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["epsilon"], 2) == 9.91
    assert main(["privacy", "--q", "0.25", "--target-epsilon", "9.91", "--steps", "40", "--delta", str(DELTA),
                 "--accountant", "ma"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["z"] == pytest.approx(1.0, abs=5e-3)


@pytest.mark.parametrize("bad", [
    ["--q", "0", "--z", "1"],
    ["--q", "1.5", "--z", "1"],
    ["--q", "nan", "--z", "1"],
    ["--q", "0.25", "--z", "0"],
    ["--q", "0.25", "--z", "-1"],
    ["--q", "0.25", "--z", "1", "--delta", "1.5"],
    ["--q", "0.25", "--z", "1", "--delta", "0"],
    ["--q", "0.25", "--z", "1", "--accountant", "nope"],
    ["--q", "0.25"],                                  # neither z nor a target epsilon
    ["--q", "0.25", "--z", "1", "--target-epsilon", "3"],
])
def test_cli_privacy_bad_input_is_one_sentence(capsys, bad):
    argv = ["privacy", "--steps", "40"] + bad
    if "--delta" not in bad:
        argv += ["--delta", "0.001"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "Traceback" not in captured.err
