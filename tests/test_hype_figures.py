"""The DP-HYPE page's figures, called directly (no browser)."""

from __future__ import annotations

import numpy as np

from ui.hype.figures import (
    BAD_COLOR,
    GOOD_COLOR,
    WINNER_COLOR,
    accuracy_figure,
    clean_votes_figure,
    fig2a_figure,
    noisy_votes_figure,
    success_curve_figure,
    winners_figure,
)

GOOD = np.array([False, True, False, True, False])


def test_vote_histograms_colour_good_and_bad_apart_and_mark_the_winner():
    fig = clean_votes_figure(np.array([1, 9, 0, 7, 2]), GOOD)
    good, bad = fig.data
    assert list(good.x) == [1, 3] and list(good.y) == [9, 7] and good.marker.color == GOOD_COLOR
    assert list(bad.x) == [0, 2, 4] and bad.marker.color == BAD_COLOR
    noisy = noisy_votes_figure(np.array([1.5, 8.0, -2.0, 9.5, 0.3]), GOOD, 3, noise_std=2.0)
    star = [trace for trace in noisy.data if trace.type == "scatter"][0]
    assert list(star.x) == [3] and star.marker.color == WINNER_COLOR and "winner #3" in star.text[0]
    assert "σ = 2" in noisy.layout.title.text
    assert noisy.layout.yaxis.range[1] > 9.5  # room above the winner for its label


def test_winner_histogram_counts_and_titles_progress():
    fig = winners_figure(np.array([0, 40, 3, 55, 2]), GOOD, 100, total=400)
    assert sum(sum(trace.y) for trace in fig.data) == 100
    assert "100 of 400" in fig.layout.title.text


def test_empty_figures_say_what_will_appear():
    for fig in (clean_votes_figure(None, None), noisy_votes_figure(None, None, None), winners_figure(None, None)):
        assert not fig.data
        assert fig.layout.annotations and fig.layout.annotations[0].text


def test_success_curve_draws_the_bound_beside_the_empirical_rate():
    x = [0.1, 0.5, 1.0]
    fig = success_curve_figure(x, [0.4, 0.9, 1.0], np.array([[0.3, 0.5], [0.85, 0.95], [0.99, 1.0]]),
                               [0.0, 0.6, 1.0], x_label="ε", log_x=True, mark=0.5)
    empirical, bound = fig.data
    assert list(bound.y) == [0.0, 0.6, 1.0] and bound.line.dash == "dash"
    np.testing.assert_allclose(empirical.error_y.array, [0.1, 0.05, 0.0])
    np.testing.assert_allclose(empirical.error_y.arrayminus, [0.1, 0.05, 0.01])
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.ticktext) == ["0.1", "0.5", "1"]


def test_accuracy_and_fig2a_figures_have_every_series():
    acc = accuracy_figure([0.1, 1.0], np.array([[0.5, 0.4, 0.6], [0.9, 0.88, 0.92]]), 0.93, 0.39,
                          opt_ci=(0.92, 0.94))
    names = [trace.name for trace in acc.data if trace.showlegend is not False]
    assert names[0] == "DP-HYPE" and any(n.startswith("OPT") for n in names)
    assert any(n.startswith("RANDGUESS") for n in names)
    success = np.random.default_rng(0).random((3, 2, 2))
    fig = fig2a_figure([0.1, 0.5, 1.0], [1, 5], [0.25, 1.0], success, bound=success / 2)
    assert len(fig.data) == 2 * 2 * 2  # (line + bound) per k per epsilon panel
    assert [a.text for a in fig.layout.annotations] == ["ε = 0.25", "ε = 1"]
