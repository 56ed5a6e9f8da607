"""The dashboard's figure functions (no browser, no streamlit)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from engine.fbo import FboConfig, run_fbo
from engine.fbo.weights import subregion_weights
from engine.privacy import ACCOUNTANTS, default_delta, epsilon_curve
from ui.fbo.figures import (
    agent_heatmap,
    agent_metric,
    clipped_lines,
    convergence_figure,
    convergence_lines,
    epsilon_lines,
    own_weight_share,
    privacy_figure,
    selected_lines,
    weight_history,
    weights_figure,
)
from ui.fbo.teaching_figures import functions_figure, norms_figure, signal_noise_figure
from ui.kit.figure_style import BASELINE_COLOR, Line
from ui.privacy.figures import epsilon_vs_steps_figure


@pytest.fixture(scope="module")
def tiny_results():
    """TS and DP-FTS-DE, 6 agents, 3 iterations, 2 runs: real engine output, in well under a second."""
    common = dict(dataset="synthetic", agents=6, iterations=3, runs=2, P=2, seed=1)
    return [("TS", run_fbo(FboConfig(algorithm="ts", **common))),
            ("DP-FTS-DE", run_fbo(FboConfig(algorithm="dp-fts-de", **common)))]


def test_convergence_band_is_mean_plus_minus_stderr():
    x = np.arange(4)
    y = np.array([0.4, 0.3, 0.2, 0.1])
    err = np.array([0.05, 0.04, 0.03, 0.02])
    fig = convergence_figure([Line("TS", x, y, err, baseline=True), Line("DP", x, y / 2, err / 2)])
    assert isinstance(fig, go.Figure)
    bands = [t for t in fig.data if t.fill == "toself"]
    lines = [t for t in fig.data if t.fill != "toself"]
    assert [t.name for t in lines] == ["TS", "DP"]
    np.testing.assert_allclose(bands[0].y, np.concatenate([y + err, (y - err)[::-1]]))
    assert lines[0].line.dash == "dash" and lines[0].line.color == BASELINE_COLOR
    assert lines[1].line.color != BASELINE_COLOR


def test_convergence_log_scale_and_no_band():
    x = np.arange(3)
    fig = convergence_figure([Line("a", x, np.array([1.0, 0.5, 0.1]), np.array([2.0, 0.1, 0.1]))], log_y=True,
                             band=False, total_iterations=10)
    assert fig.layout.yaxis.type == "log"
    assert all(t.fill != "toself" for t in fig.data)
    assert tuple(fig.layout.xaxis.range) == (0, 10)


def test_a_single_run_draws_no_band():
    # One run: the standard error over runs is undefined (NaN), so no band rather than a misleading one.
    result = run_fbo(FboConfig(algorithm="ts", dataset="synthetic", agents=6, iterations=3, runs=1, seed=1))
    [line] = convergence_lines([("TS", result)])
    assert np.isnan(line.err).all()
    fig = convergence_figure([line])
    assert [t.fill for t in fig.data] == [None] and "over runs" in fig.layout.title.text


def test_empty_figures_explain_themselves():
    assert "Press Run" in convergence_figure([], empty_text="Press Run").layout.annotations[0].text
    assert "spend no privacy" in privacy_figure([]).layout.annotations[0].text


def test_privacy_figure_marks_budget_and_stop():
    x = np.arange(6)
    eps = np.array([0.0, 1.0, 2.0, 3.0, 3.0, 3.0])
    fig = privacy_figure([Line("DP", x, eps)], budget=3.5, stops=[("DP", 3)])
    assert any(shape.y0 == 3.5 for shape in fig.layout.shapes)
    marker = [t for t in fig.data if t.mode == "markers"][0]
    assert list(marker.x) == [3] and list(marker.y) == [3.0]


def test_result_lines_follow_the_records(tiny_results):
    conv = convergence_lines(tiny_results)
    assert [line.label for line in conv] == ["TS", "DP-FTS-DE"]
    assert conv[0].baseline and not conv[1].baseline
    for line, (_, result) in zip(conv, tiny_results):
        np.testing.assert_allclose(line.y, result.curve)
        np.testing.assert_allclose(line.err, result.curve_stderr)
        np.testing.assert_array_equal(line.x, np.arange(4))
    eps = epsilon_lines(tiny_results)
    assert [line.label for line in eps] == ["DP-FTS-DE"]  # TS spends no privacy
    np.testing.assert_allclose(eps[0].y, tiny_results[1][1].epsilon)
    sel = selected_lines(tiny_results)
    assert [line.label for line in sel] == ["DP-FTS-DE"]
    assert np.all((sel[0].y >= 0) & (sel[0].y <= 6))
    clip = clipped_lines(tiny_results)
    assert all(np.all((line.y >= 0) & (line.y <= 1)) for line in clip)


def test_agent_metric_and_heatmap(tiny_results):
    result = tiny_results[1][1]
    iterations, metric = agent_metric(result)
    assert metric.shape == (6, 4)
    np.testing.assert_allclose(metric.mean(axis=0), result.curve)  # mean over agents of the run means
    fig = agent_heatmap(metric, iterations, assignment=np.arange(6) % 2, log_color=False)
    heat = fig.data[0]
    # Grouped by sub-region: agents 0, 2, 4 first.
    assert list(heat.y[:3]) == ["agent 0", "agent 2", "agent 4"]
    np.testing.assert_allclose(np.asarray(heat.z)[0], metric[0])
    assert list(fig.layout.yaxis.ticktext) == list(heat.y)     # every agent named
    many = agent_heatmap(np.ones((200, 4)), iterations)
    assert 20 <= len(many.layout.yaxis.ticktext) <= 30 and many.layout.yaxis.ticktext[0] == "agent 0"


def test_weight_share_goes_from_own_explorers_to_uniform():
    assignment = np.arange(10) % 2
    weights = np.stack([subregion_weights(assignment, 2, t) for t in (1, 5, 12)])
    share = own_weight_share(weights, assignment)
    assert share.shape == (3, 2)
    assert np.all(share[0] > 0.99)          # a = 15: almost all weight on the sub-region's explorers
    np.testing.assert_allclose(share[2], 0.5)  # the synthetic schedule is uniform after t = 10
    fig = weights_figure(np.array([1, 5, 12]), weights, assignment)
    assert len(fig.data) == 2


def test_weight_history_of_a_de_run(tiny_results):
    iterations, weights = weight_history(tiny_results[1][1])
    assert weights.shape == (len(iterations), 2, 6)
    np.testing.assert_allclose(weights.sum(axis=2), 1.0)
    assert weight_history(tiny_results[0][1]) is None  # TS has no server


def test_norms_figure_draws_threshold_and_clipping():
    norms = np.array([1.0, 5.0, 2.0, 9.0])
    selected = np.array([True, True, False, True])
    clipped = np.minimum(norms, 4.0)
    fig = norms_figure(norms, threshold=4.0, selected=selected, clipped_norms=clipped)
    names = [t.name for t in fig.data]
    assert names == ["before clipping", "after clipping", "not picked"]
    np.testing.assert_allclose(fig.data[1].y, [1.0, 4.0, 4.0])
    assert any(shape.y0 == 4.0 for shape in fig.layout.shapes)


def test_signal_noise_figure_adds_noise_points():
    signal = np.ones((2, 5))
    noise = np.full((2, 5), 0.5)
    fig = signal_noise_figure(signal, noise)
    noisy = [t for t in fig.data if t.mode == "markers"]
    assert len(noisy) == 2
    np.testing.assert_allclose(noisy[0].y, 1.5)


def test_functions_figure_star_is_the_argmax_of_the_piecewise_function():
    x = np.linspace(0, 1, 101)
    noisy = np.stack([np.sin(6 * x), np.cos(6 * x)])
    fig = functions_figure(x, noisy * 0.5, noisy, [(0.0, 0.5), (0.5, 1.0)])
    piecewise = np.where(x < 0.5, noisy[0], noisy[1])
    star = [t for t in fig.data if t.name == "next query (argmax)"][0]
    assert star.x[0] == pytest.approx(x[np.argmax(piecewise)])


def test_accountant_figure_one_line_per_accountant():
    delta = default_delta(200)
    curves = {acc: epsilon_curve(0.25, 1.0, 5, delta, acc) for acc in ("ma", "rdp")}
    fig = epsilon_vs_steps_figure(curves, delta=delta, target=3.0, marks={"ma": float(curves["ma"][-1])})
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].y, curves["ma"])
    assert list(lines[0].x) == [1, 2, 3, 4, 5]
    assert any(shape.y0 == 3.0 for shape in fig.layout.shapes)
    assert set(curves) <= set(ACCOUNTANTS)
