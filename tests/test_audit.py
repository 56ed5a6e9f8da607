"""Empirical privacy audit: the statistics, both games against the engine's own mechanisms, and the CLI."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from engine.audit import AuditCancelled, ServerAudit, VoteAudit, estimate, max_tpr, run_audit
from engine.audit import stats
from engine.cli import main
from engine.audit.fbo_server import ServerGame
from engine.fbo import server
from engine.fbo.config import FboConfig
from engine.fbo.plan import make_plan
from engine.hype import HypeConfig, voting
from engine.privacy import epsilon, gaussian_epsilon
from engine.validation import ConfigError

DELTA = 1e-5


# ---------------------------------------------------------------- statistics


def test_clopper_pearson_bounds_are_exact_at_the_edges():
    # With no successes in n trials, P[0 successes] = (1 - p)^n = alpha solves the upper bound exactly.
    n, alpha = 200, 0.05
    assert stats.clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-9)
    assert stats.clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-9)
    assert stats.clopper_pearson_lower(0, n, alpha) == 0.0 and stats.clopper_pearson_upper(n, n, alpha) == 1.0
    lo, hi = stats.clopper_pearson_lower(30, n, alpha), stats.clopper_pearson_upper(30, n, alpha)
    assert lo < 30 / n < hi


def test_epsilon_from_rates_uses_both_tails_and_never_goes_negative():
    assert stats.epsilon_from_rates(0.3, 0.3, DELTA) == 0.0
    assert stats.epsilon_from_rates(0.1, 0.2, DELTA) == 0.0
    assert stats.epsilon_from_rates(0.2, 0.02, 0.0) == pytest.approx(math.log(10))
    # The second inequality: 1 - FPR <= e^eps (1 - TPR) + delta.
    assert stats.epsilon_from_rates(0.99, 0.9, 0.0) == pytest.approx(math.log(0.1 / 0.01))


def test_max_tpr_is_the_boundary_the_two_inequalities_draw():
    eps, delta = 1.0, 1e-3
    fpr = np.array([0.0, 0.01, 0.2, 0.9])
    tpr = max_tpr(eps, delta, fpr)
    assert tpr[0] == pytest.approx(delta)
    assert np.all(stats.epsilon_from_rates(tpr, fpr, delta) <= eps + 1e-9)
    assert stats.epsilon_from_rates(tpr[1:3] + 1e-4, fpr[1:3], delta).min() > eps


def test_gdp_epsilon_matches_the_accountant_for_one_gaussian_vote():
    # One Gaussian release of sensitivity sqrt(10) and noise 12.8 is mu-GDP with mu = sqrt(10) / 12.8;
    # the PLD accountant is pessimistic by at most its grid (1e-3), the GDP conversion is exact.
    sigma = 12.8
    assert stats.gdp_epsilon(math.sqrt(10) / sigma, DELTA) == pytest.approx(
        gaussian_epsilon(sigma, DELTA, math.sqrt(10), "pld"), abs=2e-3)


# ---------------------------------------------------------------- the server game


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_server_is_audited_below_its_claim_and_above_half_of_it(seed):
    # q = 0.25, z = 1, one release, P = 1: here the PLD claim is the mechanism's exact epsilon (2.707),
    # so a valid 95 % lower bound stays below it. At 10^6 trials (all of them counted on a 400-threshold
    # grid, every threshold at once) the expected bound of the exact likelihood-ratio attack is about 1.6
    # (engine.audit.bands); seeds 0-7 gave 1.54 to 1.70, all above half the claim (1.35).
    result = run_audit(ServerAudit(q=0.25, z=1.0, steps=1, trials=1_000_000, delta=DELTA, seed=seed))
    assert result.epsilon_claimed == pytest.approx(epsilon(0.25, 1.0, 1, DELTA, "pld"))
    assert result.epsilon_claimed / 2 <= result.epsilon_lower <= result.epsilon_claimed
    assert not result.violation
    assert result.epsilon_canary == pytest.approx(result.epsilon_claimed, rel=1e-6)


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [0, 1])
def test_halving_the_server_noise_is_caught(seed):
    # Half the noise is z = 0.5 against a claim for z = 1: the true epsilon (7.95) is far above
    # the claim (2.71); 400,000 trials bound it at 4.29 and 3.66 for seeds 0 and 1.
    result = run_audit(ServerAudit(q=0.25, z=1.0, trials=400_000, delta=DELTA, seed=seed, noise_scale=0.5))
    assert result.violation and result.epsilon_lower > result.epsilon_claimed
    assert "VIOLATION" in result.verdict and "negative control" in result.verdict


@pytest.mark.statistical
@pytest.mark.parametrize("control, settings, caught_above", [
    # Every agent in every round while the claim counts on q = 0.1 (1.68): one Gaussian release of mu = 1
    # (4.38); 400,000 trials prove 2.74-2.83 over seeds 0-3.
    ("no-subsampling", dict(q=0.1, trials=400_000), 2.2),
    # Release t adds release 1's noise: consecutive releases differ only where the canary's selection changed,
    # which the "reuse" statistic reads (claim 3.81 for 3 releases; 100,000 trials prove 7.89 on seeds 0-2).
    ("reused-noise", dict(steps=3, trials=100_000), 6.0),
    # Every run draws the same subsample and noise from the public seed, a deterministic mechanism: seed 0's
    # subsample selects the canary in one of its 4 releases, so the worlds differ in every trial (8.48 against
    # the claim 4.21). A seed whose subsample never selects the canary shows nothing (seed 2: 0.0): the one-run
    # audit, whose canaries all face the same subsample, is the one that catches this control whatever the seed.
    ("public-seed", dict(steps=4, trials=100_000), 7.0),
])
def test_the_many_trial_audit_catches_the_broken_servers(control, settings, caught_above):
    result = run_audit(ServerAudit(seed=0, control=control, **settings))
    assert result.violation and result.epsilon_lower > caught_above > result.epsilon_claimed
    assert result.control == control and f"negative control: {control}" in result.verdict
    if control == "reused-noise":
        assert result.statistic_used == "reuse"


@pytest.mark.statistical
def test_one_gaussian_release_is_audited_by_its_whole_trade_off_curve():
    # At q = 1 one release is the Gaussian mechanism, exactly 1-GDP (epsilon 4.38 at 1e-5): the lower bound on mu
    # reads the ROC where it is dense, and at 200,000 trials gives epsilon 4.24-4.28 over seeds 0-2, while the
    # (epsilon, delta) bound, which needs the far tail, gives about 2.5.
    honest = run_audit(ServerAudit(q=1.0, trials=200_000, seed=0))
    assert honest.mu_claimed == 1.0 and honest.mu_lower <= 1.0 and not honest.fdp_violation
    assert 0.95 * honest.epsilon_claimed <= honest.epsilon_gdp <= honest.epsilon_claimed
    assert honest.epsilon_lower < 0.7 * honest.epsilon_claimed
    # Half the noise (mu = 2) breaks the Gaussian-DP claim at 20,000 trials (mu_lower 1.91 on seeds 0-2).
    broken = run_audit(ServerAudit(q=1.0, trials=20_000, seed=0, noise_scale=0.5))
    assert broken.fdp_violation and broken.mu_lower > 1.5


def _noiseless(mechanism):
    def broken(*args, **kwargs):
        step = mechanism(*args, **kwargs)
        return dataclasses.replace(step, noise=np.zeros_like(step.noise), broadcast=step.signal.copy())
    return broken


def test_the_audit_runs_the_servers_own_code(monkeypatch):
    # A server that forgets its noise, patched into engine.fbo.server, must be caught at once.
    monkeypatch.setattr(server, "aggregate_batch", _noiseless(server.aggregate_batch))
    result = run_audit(ServerAudit(trials=20_000, seed=0))
    assert result.violation and result.epsilon_lower > 2 * result.epsilon_claimed


def test_a_huge_canary_is_clipped_to_the_bound():
    # The clip maps a canary 1000 times too long onto the one at the bound: identical scores.
    at_bound = run_audit(ServerAudit(trials=2_000, seed=3))
    huge = run_audit(ServerAudit(trials=2_000, seed=3, canary_norm=1000.0))
    assert huge.grids == at_bound.grids
    np.testing.assert_array_equal(huge.counts["llr"][0], at_bound.counts["llr"][0])
    assert not huge.violation


def test_sub_regions_make_the_claim_loose_for_every_canary():
    # At t = 1 the adaptive weights put (almost) all of an agent's weight on its own sub-region,
    # while the claim charges phi_max in all P of them: the canary's shift is 1 / (sqrt(P) z).
    game = run_audit(ServerAudit(P=2, trials=200, seed=0))
    assert game.epsilon_canary == pytest.approx(epsilon(0.25, math.sqrt(2), 1, DELTA, "pld"), abs=2e-3)
    assert game.epsilon_canary < game.epsilon_claimed


@pytest.mark.statistical
def test_ten_releases_compose_with_the_real_weight_schedule():
    # P = 2, adaptive weights: rounds 1-5 are loose (previous test), rounds 10+ uniform and tight.
    result = run_audit(ServerAudit(P=2, steps=10, trials=100_000, seed=0))
    assert result.epsilon_lower <= result.epsilon_canary < result.epsilon_claimed
    # 100,000 trials prove at least a third of what this canary can show (seed 0: 1.70 of 3.87;
    # the claim is 5.97).
    assert result.epsilon_lower > result.epsilon_canary / 3


def test_fixed_size_sampling_is_audited_under_replace_one():
    result = run_audit(ServerAudit(sampling="fixed", accountant="rdp", agents=10, trials=100_000, seed=0))
    assert result.neighbours.startswith("replace-one")
    assert result.epsilon_claimed == pytest.approx(
        epsilon(0.25, 1.0, 1, DELTA, "rdp", sampling="fixed", n_agents=10))
    assert 0 < result.epsilon_lower <= result.epsilon_claimed


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fixed_size_sampling_is_charged_for_replace_one_sensitivity(seed):
    # At q = 1 nothing hides the canary: replacing c by -c moves the sum by twice one agent's bound.
    # Reading z against one bound claimed 4.73; 400,000 trials prove 5.39-5.60 over seeds 0-2,
    # above that old claim by more than 0.6, and below the corrected claim (10.73) by more than 5.
    result = run_audit(ServerAudit(q=1.0, sampling="fixed", accountant="rdp", agents=10, trials=400_000, seed=seed))
    old_claim = epsilon(1.0, 2.0, 1, DELTA, "rdp", sampling="fixed", n_agents=10)  # z read as 2z / 2
    assert old_claim == pytest.approx(4.7285, abs=1e-3)
    assert old_claim < result.epsilon_lower <= result.epsilon_claimed


# ---------------------------------------------------------------- the vote game


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_vote_is_audited_below_its_claim_and_above_half_of_it(seed):
    # epsilon = 1, k = 5 calibrates sigma = 12.79 (RDP, as the DP-HYPE run does); the exact
    # (PLD) epsilon of that Gaussian is 0.915, the claim here. Noise on candidates outside the
    # canary's 2k is independent of the statistic, so p = 10 tests the same game faster.
    # At 10^6 trials seeds 0-3 gave 0.57 to 0.65 (half the claim: 0.46).
    result = run_audit(VoteAudit(epsilon=1.0, k=5, candidates=10, trials=1_000_000, delta=DELTA, seed=seed))
    assert result.epsilon_claimed == pytest.approx(0.915, abs=2e-3)
    assert result.epsilon_claimed / 2 <= result.epsilon_lower <= result.epsilon_claimed
    assert result.mu_claimed == pytest.approx(math.sqrt(10) / 12.79, rel=1e-3)
    # The Gaussian-DP bound is a valid bound for one Gaussian vote: below the claim, and far tighter than the
    # (epsilon, delta) bound, because it reads the whole ROC (seeds 0-3: mu 0.233-0.238 of 0.247, epsilon 0.86-0.88).
    assert result.mu_lower <= result.mu_claimed and result.epsilon_gdp <= result.epsilon_claimed
    assert result.epsilon_gdp >= 0.9 * result.epsilon_claimed and not result.fdp_violation


@pytest.mark.statistical
def test_halving_the_vote_noise_is_caught():
    # Half the noise doubles mu: true epsilon 1.97 against the claim 0.915; seed 0 bounds it at 1.25.
    result = run_audit(VoteAudit(epsilon=1.0, k=5, candidates=10, trials=1_000_000, seed=0, noise_scale=0.5))
    assert result.violation


def test_the_audit_runs_the_votes_own_code(monkeypatch):
    monkeypatch.setattr(voting, "summed_noise", lambda shape, std, rng, dtype=np.float64: np.zeros(shape, dtype))
    result = run_audit(VoteAudit(candidates=10, trials=20_000, seed=0))
    assert result.violation and result.epsilon_lower > 5 * result.epsilon_claimed


def test_the_secure_summation_path_is_audited_client_by_client(monkeypatch):
    honest = run_audit(VoteAudit(candidates=10, clients=5, aggregation="secure-sum", trials=4_000, seed=0))
    assert not honest.violation
    # Each client's noise is added inside client_step; without it the secure sum is exact.
    monkeypatch.setattr(voting, "client_step", lambda votes, std, rng: votes.astype(float))
    broken = run_audit(VoteAudit(candidates=10, clients=5, aggregation="secure-sum", trials=4_000, seed=0))
    assert broken.violation


def test_a_lone_client_is_its_own_canary():
    result = run_audit(VoteAudit(clients=1, candidates=10, trials=2_000, seed=0))
    assert result.trials == 2_000 and not result.violation


def test_from_hype_audits_the_runs_own_claim():
    audit = VoteAudit.from_hype(HypeConfig(epsilon=0.5, k=3, candidates=20, clients=40), trials=200)
    assert (audit.k, audit.candidates, audit.clients, audit.accountant) == (3, 20, 40, "rdp")
    assert run_audit(audit).epsilon_claimed == pytest.approx(0.5, rel=1e-3)


def test_from_plan_audits_what_the_run_releases_and_claims_the_same_epsilon():
    # The run's own settings, its calibrated z and its releases, with no simulation built.
    config = FboConfig(algorithm="dp-fts-de", agents=50, iterations=30, q=0.25, S=11.0, P=3, accountant="ma",
                       budget=6.0, calibrate_z=True)
    plan = make_plan(config)
    audit = ServerAudit.from_plan(plan, trials=200)
    assert (audit.q, audit.z, audit.S, audit.P, audit.steps) == (0.25, plan.z, 11.0, 3, 30)
    assert (audit.delta, audit.accountant, audit.sampling) == (plan.delta, "ma", "poisson")
    assert audit.agents == 3 and plan.z != config.z        # the fewest agents P = 3 sub-regions need
    assert ServerGame(audit).epsilon_claimed() == pytest.approx(plan.final_epsilon, rel=1e-6)


def test_from_plan_follows_a_budget_stop_and_fixed_size_sampling():
    stopped = make_plan(FboConfig(algorithm="dp-fts", agents=40, iterations=30, q=0.25, z=1.5, budget=8.0,
                                  accountant="rdp", sampling="fixed"))
    assert 1 <= stopped.releases < 30
    audit = ServerAudit.from_plan(stopped)
    # Fixed-size sampling charges round(N q) of N agents: the audit keeps the run's N for the same claim.
    assert (audit.steps, audit.agents, audit.P) == (stopped.releases, 40, 1)
    assert ServerGame(audit).epsilon_claimed() == pytest.approx(stopped.final_epsilon, rel=1e-6)


@pytest.mark.parametrize("fields, field", [(dict(algorithm="fts-de"), "algorithm"),
                                           (dict(algorithm="dp-fts-de", z=0.3, budget=0.1), "budget")])
def test_from_plan_refuses_a_run_with_nothing_private_to_audit(fields, field):
    with pytest.raises(ConfigError) as err:
        ServerAudit.from_plan(make_plan(FboConfig(agents=20, iterations=10, **fields)))
    assert err.value.field == field


# ---------------------------------------------------------------- running, reproducing, pricing


def test_same_seed_same_scores_and_progress_reaches_the_total():
    calls = []
    config = ServerAudit(trials=300_000, seed=5)
    first = run_audit(config, progress=lambda done, total: calls.append((done, total)))
    again = run_audit(config)
    assert first.grids == again.grids and first.epsilon_lower == again.epsilon_lower
    for mine, theirs in zip(first.counts["llr"], again.counts["llr"]):
        np.testing.assert_array_equal(mine, theirs)
    assert len(calls) > 1 and calls[-1] == (300_000, 300_000)
    assert all(a[0] < b[0] for a, b in zip(calls, calls[1:]))
    assert first.roc_fpr.shape == first.roc_tpr.shape and np.all(np.diff(first.roc_fpr) >= 0)
    histogram = first.histogram()
    assert histogram["counts_in"].sum() == histogram["counts_out"].sum() == 150_000
    assert histogram["edges"][0] < first.threshold < histogram["edges"][-1]
    # The curve: the bound after each chunk, 10,000 trials per world first, doubling, the last one the result's.
    assert [n for n, _ in first.curve[:3]] == [20_000, 60_000, 140_000]
    assert first.curve[-1] == (300_000, first.epsilon_lower)


def test_cancel_stops_between_chunks():
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 1

    with pytest.raises(AuditCancelled):
        run_audit(VoteAudit(candidates=10, trials=2_000_000), cancel=cancel)
    assert len(asked) == 2


def test_estimate_prices_the_array_work_before_running():
    # The trials and the pilot that places the grids (at least 200 trials per world).
    cost = estimate(ServerAudit(agents=20, features=8, steps=40, trials=1_000))
    assert cost.work == (1_000 + 2 * 500) * 40 * 20 * 8
    assert estimate(VoteAudit(candidates=50, clients=7, aggregation="secure-sum", trials=100)).work == (
        (100 + 2 * 200) * 50 * 7)
    assert estimate(ServerAudit(trials=10_000_000)).work == (10_000_000 + 2 * 20_000) * 2 * 2
    assert estimate(ServerAudit(trials=1_000_000)).peak_bytes < 2 ** 30


@pytest.mark.parametrize("make, sentence", [
    (lambda: ServerAudit(q=1.5), "q must be in (0, 1], got 1.5."),
    (lambda: ServerAudit(P=3, agents=2), "P must be at most the number of agents (2), got 3."),
    (lambda: ServerAudit(features=1), "number of random features M must be in [2, 1000], got 1."),
    (lambda: ServerAudit(sampling="fixed"),
     "The PLD accountant does not support fixed-size sampling; choose rdp or ma."),
    (lambda: ServerAudit(noise_scale=0), "noise scale must be in (0, 100], got 0."),
    (lambda: VoteAudit(k=6, candidates=10), "The canary moves its k votes to k other candidates, so k must be at "
                                            "most half the number of candidates (5), got 6."),
    (lambda: VoteAudit(epsilon=1.0, sigma=3.0), "Give either epsilon or sigma, not both."),
    (lambda: VoteAudit(epsilon=None), "Give the noise as epsilon or as sigma."),
])
def test_bad_settings_get_one_sentence(make, sentence):
    with pytest.raises(ConfigError) as err:
        make()
    assert str(err.value) == sentence


# ---------------------------------------------------------------- command line


def run_cli(capsys, *argv):
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else None), captured.err


@pytest.mark.parametrize("argv", [
    ["--mechanism", "fbo-server", "--q", "0.25", "--z", "1", "--S", "11", "--P", "1", "--agents", "10", "--steps", "2"],
    ["--mechanism", "hype-votes", "--epsilon", "1", "--k", "5", "--candidates", "20"],
])
def test_cli_prints_the_documented_keys(capsys, argv):
    code, out, err = run_cli(capsys, *argv, "--trials", "20000", "--delta", "1e-5", "--seed", "0")
    assert code == 0 and err == ""
    for key in ("epsilon_claimed", "epsilon_lower", "confidence", "trials", "tpr", "fpr", "threshold",
                "wall_seconds", "violation", "verdict", "histogram", "roc", "config"):
        assert key in out
    assert out["trials"] == 20_000 and out["confidence"] == 0.95
    assert 0 <= out["epsilon_lower"] <= out["epsilon_claimed"] and out["violation"] is False


def test_cli_says_so_when_the_mechanism_fails(capsys, monkeypatch):
    monkeypatch.setattr(server, "aggregate_batch", _noiseless(server.aggregate_batch))
    code, out, err = run_cli(capsys, "--trials", "20000")
    assert code == 0 and out["violation"] is True
    assert err.startswith("warning: VIOLATION: audited lower bound")


def test_cli_one_run_prints_the_claim_the_bound_and_the_bound_against_the_canaries(capsys):
    code, out, err = run_cli(capsys, "--one-run", "--mechanism", "fbo-server", "--q", "0.25", "--z", "1",
                             "--canaries", "1000", "--steps", "10", "--seed", "0")
    assert code == 0 and err == ""
    assert out["audit"] == "one-run" and out["canaries"] == 1000 and out["violation"] is False
    assert out["epsilon_claimed"] == pytest.approx(epsilon(0.25, 1.0, 10, DELTA, "pld"))
    assert 0 < out["epsilon_lower"] < out["epsilon_claimed"]
    assert [row["canaries"] for row in out["by_canaries"]] == [100, 300, 1000]
    assert out["by_canaries"][-1]["epsilon_lower"] == out["epsilon_lower"]
    assert out["guesses"]["correct"] <= out["guesses"]["guess_in"] + out["guesses"]["guess_out"]


@pytest.mark.parametrize("argv, sentence", [
    (["--one-run", "--trials", "1000"], "--trials does not apply to the one-run audit."),
    (["--canaries", "100"], "--canaries applies to the one-run audit only (--one-run)."),
    (["--one-run", "--canaries", "5"], "number of canaries m must be in [10, 100000], got 5."),
    (["--one-run", "--mechanism", "hype-votes"], "--one-run audits the fbo-server or a flower strategy; a DP-HYPE "
                                                 "vote is one release, audited by its many-trial game."),
    (["--trials", "5"], "number of trials must be in [100, 1000000000], got 5."),
    (["--mechanism", "dp-sgd"], "mechanism must be one of fbo-server, hype-votes, got 'dp-sgd'."),
    (["--mechanism", "hype-votes", "--q", "0.3"], "--q does not apply to the hype-votes mechanism."),
    (["--k", "3"], "--k does not apply to the fbo-server mechanism."),
    (["--delta", "0"], "delta must be in (0, 1), got 0."),
    (["--q", "nan"], "q must be a number, got nan."),
    (["--accountant", "exact"], "accountant must be one of ma, rdp, pld, got 'exact'."),
    (["--mechanism", "hype-votes", "--accountant", "exact"], "accountant must be one of rdp, ma, pld, got 'exact'."),
    (["--steps", "x"], "Argument --steps: invalid int value: 'x'."),
])
def test_cli_bad_input_is_one_sentence_and_exit_2(capsys, argv, sentence):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out is None
    assert err == f"error: {sentence}\n"
