"""The privacy audit's figures, called directly (no browser): what each draws is the audit's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audit import ServerAudit, VoteAudit, max_tpr, run_audit
from ui.audit.figures import (
    CANARY_COLOR,
    CONSISTENT_COLOR,
    VIOLATION_COLOR,
    epsilon_figure,
    roc_figure,
    scores_figure,
    trials_figure,
)


@pytest.fixture(scope="module")
def honest():
    return run_audit(ServerAudit(trials=20_000, seed=0))


@pytest.fixture(scope="module")
def broken():
    # Half the noise at 100,000 trials: caught (seed 0; the engine's tests check detection over seeds).
    result = run_audit(ServerAudit(trials=100_000, noise_scale=0.5, seed=0))
    assert result.violation
    return result


def test_score_histograms_draw_both_worlds_and_the_threshold(honest):
    fig = scores_figure(honest)
    out, inside = fig.data
    assert (out.name, inside.name) == ("canary out (D′)", "canary in (D)")
    # The bins hold the central 99.9 % of the scores (and the threshold), on grid thresholds; nothing else is drawn.
    histogram = honest.histogram(pile=False)
    for trace, counts in ((out, histogram["counts_out"]), (inside, histogram["counts_in"])):
        drawn = np.nan_to_num(np.asarray(trace.y, dtype=float))[:-1]
        assert drawn.sum() == counts.sum() and 0.99 * honest.trials // 2 <= drawn.sum() <= honest.trials // 2
    assert set(np.round(out.x, 9)) <= set(np.round(honest.grids[honest.statistic_used].thresholds, 9))
    assert fig.layout.yaxis.type == "log"
    assert [shape.x0 for shape in fig.layout.shapes if shape.type == "line"] == [honest.threshold]
    assert "threshold" in fig.layout.annotations[0].text
    linear = scores_figure(honest, log_y=False)
    assert linear.layout.yaxis.type != "log" and np.nansum(linear.data[1].y[:-1]) == pytest.approx(drawn.sum())


def test_roc_sits_under_the_claims_curve_for_a_correct_mechanism(honest):
    fig = roc_figure(honest)
    guess, claim, attack, chosen = fig.data
    np.testing.assert_allclose(claim.y, max_tpr(honest.epsilon_claimed, honest.delta, np.asarray(claim.x)))
    assert np.all(np.asarray(attack.x) > 0) and np.all(np.asarray(attack.y) > 0)   # drawable on log axes
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert (chosen.x[0], chosen.y[0]) == (honest.fpr, honest.tpr)
    assert chosen.error_x.array[0] == pytest.approx(honest.fpr_upper - honest.fpr)
    assert chosen.error_y.arrayminus[0] == pytest.approx(honest.tpr - honest.tpr_lower)
    assert attack.line.color == CONSISTENT_COLOR


def test_a_broken_mechanisms_roc_crosses_the_claims_curve(broken):
    fig = roc_figure(broken)
    attack = fig.data[2]
    x, y = np.asarray(attack.x), np.asarray(attack.y)
    # Where at least 100 false positives back a point (no small-count noise), the attack beats the claim.
    backed = x >= 100 / broken.evaluation_trials
    assert np.max(y[backed] - max_tpr(broken.epsilon_claimed, broken.delta, x[backed])) > 0
    assert attack.line.color == VIOLATION_COLOR


def bars(fig) -> dict:
    return {trace.y[0].split("<br>")[0]: trace for trace in fig.data}


def test_epsilon_bars_put_the_claim_beside_the_audited_bound_with_its_whisker(honest, broken):
    fig = epsilon_figure(honest)
    by_name = bars(fig)
    assert list(by_name) == ["audited (95%)", "claimed ε"]   # P = 1: the canary reaches the claim
    assert by_name["claimed ε"].x[0] == honest.epsilon_claimed
    audited = by_name["audited (95%)"]
    assert audited.x[0] == honest.epsilon_lower and audited.marker.color == CONSISTENT_COLOR
    assert audited.error_x.array[0] == pytest.approx(honest.epsilon_point - honest.epsilon_lower)
    assert [shape.x0 for shape in fig.layout.shapes] == [honest.epsilon_claimed]
    assert bars(epsilon_figure(broken))["audited (95%)"].marker.color == VIOLATION_COLOR


def test_with_sub_regions_the_bars_show_the_most_the_game_can_prove():
    result = run_audit(ServerAudit(P=2, steps=3, trials=2_000, seed=0))
    assert result.epsilon_canary < result.epsilon_claimed
    fig = epsilon_figure(result, title="Audited: a small server", height=230)
    canary = bars(fig)["most provable"]
    assert canary.x[0] == result.epsilon_canary and canary.marker.color == CANARY_COLOR
    assert fig.layout.title.text == "Audited: a small server"


def test_the_vote_audit_draws_the_same_four_figures():
    result = run_audit(VoteAudit(trials=2_000, seed=0))
    for fig in (scores_figure(result), roc_figure(result), epsilon_figure(result), trials_figure(result)):
        assert fig.data and fig.layout.title.text


def test_the_bound_against_the_trials_is_the_results_curve_beside_the_claim(honest):
    fig = trials_figure(honest)
    (line,) = fig.data
    assert list(line.x) == [n for n, _ in honest.curve] and list(line.y) == [e for _, e in honest.curve]
    assert line.y[-1] == honest.epsilon_lower and fig.layout.xaxis.type == "log"
    assert [shape.y0 for shape in fig.layout.shapes] == [honest.epsilon_claimed]
