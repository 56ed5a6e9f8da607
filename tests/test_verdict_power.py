"""The verdict design's statistics on constructed data: the unit of replication (runs sharing a function are not
independent), margins that can judge their claim, the power of the whole rule against a simulation, the
ablation family under the same rule, and the server's ablation switches (the paper's server by default)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.reproduce.claims import decide
from engine.reproduce.power import bh_cutoff, bh_cutoffs, rule_detectable, rule_power, simulate_rule
from engine.reproduce.report import Setting, SettingResult, by_draw, compare


def _result(key, curves, draws=None):
    return SettingResult(Setting(key, key, {}), np.asarray(curves, float), None, None, 0.0, draws=draws)


def test_runs_sharing_a_function_are_tested_over_functions_not_as_independent_runs():
    rng = np.random.default_rng(4)
    functions, per = 5, 5
    # Each function moves the difference a lot (between-function spread), the runs within it little.
    shift = np.repeat(rng.normal(0.0, 1.0, functions), per) + 0.6
    worse = rng.normal(0.0, 0.1, (functions * per, 3))
    better = worse - (shift + rng.normal(0.0, 0.1, functions * per))[:, None]
    draws = np.repeat(np.arange(functions), per)
    clustered = compare(_result("b", better, draws), _result("w", worse, draws), "curve")
    naive = compare(_result("b", better), _result("w", worse), "curve")
    assert clustered["units"] == functions and clustered["unit"] == "objective draw"
    assert naive["units"] == functions * per and naive["unit"] == "run"
    assert clustered["difference"] == pytest.approx(naive["difference"])      # equal sizes: the same mean
    # Five functions, not 25 runs: the standard error is about sqrt(per) larger and the test has 4 df.
    assert clustered["stderr"] > 2.0 * naive["stderr"]
    [c_claim, n_claim] = decide([{"claim": "c", "source": "", "numbers": clustered},
                                 {"claim": "n", "source": "", "numbers": dict(naive)}])
    assert n_claim["discovery"]["decisive"] and not c_claim["discovery"]["decisive"]
    # One run per function: every run is its own unit.
    diff, unit = by_draw(np.arange(4.0), [7, 8, 9, 10])
    assert list(diff) == [0, 1, 2, 3] and unit == "objective draw"


def test_every_seed_set_draws_new_functions_and_every_setting_shares_them():
    from engine.reproduce.runs import block_plan

    first, again = block_plan(0, 6, "run"), block_plan(100_000, 6, "run")
    assert [size for _, size, _ in first] == [1] * 6
    drawn = {objective for _, _, objective in first}
    assert len(drawn) == 6 and not drawn & {objective for _, _, objective in again}
    assert block_plan(0, 6, "run") == first                   # the same for every setting: paired
    assert all(objective is None for _, _, objective in block_plan(0, 30, "fixed"))
    assert {objective for _, _, objective in block_plan(100_000, 30, "seed-set")} == {100_000}
    assert [size for _, size, _ in block_plan(0, 10, "run", per_draw=5)] == [5, 5]


def test_the_margin_check_rejects_both_of_todays_fts_margins_and_passes_the_registered_one():
    from engine.reproduce.margins import FTS_FIG2A_LARGEST, MARGINS, margin_problem

    # "Consistent in the simple and the general setting": 0.0486 is wider than Fig. 2a's largest difference.
    assert "larger than a difference the paper reports" in margin_problem(0.0486, (FTS_FIG2A_LARGEST,), 0.0028)
    # Fig. 1a "M barely matters": 0.0047 is below the runs' standard error of 0.0061.
    assert "below the runs' standard error" in margin_problem(0.0047, (), 0.0061)
    for text, margin in MARGINS.items():
        assert margin.source and margin.recorded and margin.paper_differences, text
        assert margin_problem(margin.value, margin.paper_differences, 0.0028) is None, text


def test_the_rules_power_is_its_simulation_and_below_one_tests():
    # A family: nine other claims, three of them decisive, and one claim at a known effect over 20 runs.
    others = [1e-6, 1e-4, 0.004, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9]
    sd, units = 1.0, 20
    se = sd / np.sqrt(units)
    cutoff = bh_cutoffs([0.01] + others)[0]
    assert cutoff == pytest.approx(0.05 * 4 / 10)                  # the fourth place of ten
    effect = 0.8
    analytic = rule_power(effect, se, units, cutoff)
    simulated = simulate_rule(effect, sd, units, others, reps=3000, seed=1)
    assert simulated == pytest.approx(analytic, abs=3 * np.sqrt(analytic * (1 - analytic) / 3000) + 0.01)
    # At the difference one uncorrected test detects with 80 % power the whole rule says "holds" about half the
    # time (BH cut-offs 0.012-0.019 and a one-sided replication: 0.47-0.58 at 20 runs), not 80 %.
    from scipy.stats import t

    single = (t.isf(0.025, units - 1) + t.isf(0.2, units - 1)) * se
    for realised in (0.012, 0.019):
        assert 0.35 < rule_power(single, se, units, realised) < 0.65
    # No effect: the rule almost never says "holds".
    assert rule_power(0.0, se, units, cutoff) < 0.002
    detectable = rule_detectable(se, units, cutoff)
    assert rule_power(detectable, se, units, cutoff) == pytest.approx(0.8, abs=1e-4) and detectable > single
    assert bh_cutoff([0.5, 0.7]) == pytest.approx(0.025)            # none decisive: what the first would need


def test_an_equivalence_claims_power_is_its_chance_of_holding_when_the_settings_are_alike():
    se = 0.003
    assert rule_power(0.0, se, 25, 0.05, margin=0.0175) > 0.9          # the margin is several s.e. wide
    assert rule_power(0.0, 0.0061, 25, 0.05, margin=0.0047) == 0.0     # below the s.e.: it can never hold


def test_ablations_are_judged_by_the_same_rule_over_their_family():
    from engine.reproduce.ablation_rule import decide_ablations

    def side(difference, stderr, runs=20):
        return {"difference": difference, "stderr": stderr, "runs": runs}

    # z = 1.97 over 20 runs: decisive under a normal z > 1.96, not under Student's t with BH over the family.
    row = {"claim": "S = 11 beats S = 30", "source": "", "deviation": "ours", "authors": "theirs",
           "with": side(0.0061, 0.0020), "without": side(0.0047, 0.0047 / 1.97)}
    strong = {"claim": "strong", "source": "", "deviation": "ours", "authors": "theirs",
              "with": side(0.01, 0.001), "without": side(0.01, 0.001),
              "replication": {"with": side(0.01, 0.001), "without": side(-0.00001, 0.001)}}
    out = decide_ablations({"ablations": {"a": {"rows": [row, strong]}}})
    [judged, confirmed] = out["ablations"]["a"]["rows"]
    assert judged["without"]["verdict"] == "not significant" and judged["with"]["why"].startswith("discovery only")
    assert confirmed["with"]["verdict"] == "holds" and confirmed["with"]["why"] == "replicated"
    assert confirmed["without"]["verdict"] == "not significant" and "not replicated" in confirmed["without"]["why"]
    assert "does not decide" not in confirmed["conclusion"] and "holds with ours" in confirmed["conclusion"].lower()


def test_the_server_keeps_the_papers_global_phi_max_and_the_authors_is_a_switch():
    from engine.fbo.server import aggregate_batch
    from engine.fbo.weights import region_weights

    rng = np.random.default_rng(3)
    vectors = rng.normal(0.0, 4.0, (2, 12, 5))
    assignment = np.arange(12) % 3
    weights = region_weights(assignment, 3, 2)
    kwargs = dict(q=0.5, z=1.0, S=11.0, private=True)
    plain = aggregate_batch(vectors, weights, rng=np.random.default_rng(7), **kwargs)
    again = aggregate_batch(vectors, weights, rng=np.random.default_rng(7), phi_max="global", clip_factor=1.0,
                            **kwargs)
    assert np.array_equal(plain.broadcast, again.broadcast)                # the default is the paper's, bit for bit
    theirs = aggregate_batch(vectors, weights, rng=np.random.default_rng(7), phi_max="per-region", **kwargs)
    dense = np.asarray(weights)
    expected = dense.max(axis=1) / dense.max()                            # each sub-region's noise, relative
    assert np.allclose(theirs.noise / plain.noise, expected[None, :, None])
    assert np.array_equal(theirs.signal, plain.signal)
    wider = aggregate_batch(vectors, weights, rng=np.random.default_rng(7), clip_factor=2.0, **kwargs)
    assert wider.clipped.sum() < plain.clipped.sum() and np.array_equal(wider.noise, plain.noise)
    with pytest.raises(Exception, match="phi_max"):
        aggregate_batch(vectors, weights, rng=rng, phi_max="mine", **kwargs)


def test_a_reused_part_of_unchanged_design_keeps_its_stored_replication():
    from engine.reproduce.replication import attach, decisive

    def claim(text, replicated):
        c = {"claim": text, "source": "", "numbers": {"better": "a", "worse": "b", "difference": 5.0, "stderr": 1.0,
                                                     "runs": 100}}
        if replicated:
            c["replication"] = {"difference": 4.0, "stderr": 1.0, "runs": 100}
        return c

    payload = {"parts": {"landmine": {"claims": [claim("kept", True), claim("new", False)]},
                         "synthetic": {"claims": [claim("fresh", True)]}}}
    decide([c for part in payload["parts"].values() for c in part["claims"]])
    # The kept part's replicated claim is not run again; its newly decisive one and every other part's are.
    assert decisive(payload, keep={"landmine"}) == {"landmine": {"new": ("a", "b")}, "synthetic": {"fresh": ("a", "b")}}
    again = {"parts": {"landmine": {"claims": [claim("new", False)]}, "synthetic": {"claims": [claim("fresh", False)]}}}
    attach(payload, again, 100_000, keep={"landmine"})
    kept, new = payload["parts"]["landmine"]["claims"]
    assert kept["replication"]["difference"] == 4.0 and kept["verdict"] == "holds"
    assert new["replication"]["difference"] == 5.0 and new["replication"]["seed"] == 100_000
    assert payload["parts"]["synthetic"]["claims"][0]["replication"]["difference"] == 5.0


def test_a_replication_without_spread_does_not_break_the_power():
    # A replication whose runs were identical (s.e. 0): the power plans it as the discovery's, never NaN.
    assert rule_power(0.5, 0.2, 20, 0.05, rep_se=0.0) == pytest.approx(rule_power(0.5, 0.2, 20, 0.05))
    assert rule_detectable(0.2, 20, 0.05, rep_se=0.0) == pytest.approx(rule_detectable(0.2, 20, 0.05))
    [claim] = decide([{"claim": "c", "source": "", "numbers": {"difference": 5.0, "stderr": 1.0, "runs": 20},
                       "replication": {"difference": 0.0, "stderr": 0.0, "runs": 20}}])
    assert claim["verdict"] == "not significant" and claim["power"]["detectable"] > 0


def test_one_instance_per_seed_set_is_tested_over_runs():
    from engine.reproduce.report import plan_draws
    from engine.reproduce.runs import block_plan

    # A stand-in instance per seed set: every run shares it, so the runs are the units (not one draw).
    assert plan_draws(block_plan(100_000, 10, "seed-set")) is None
    assert plan_draws(block_plan(0, 30, "fixed")) is None
    assert len(set(plan_draws(block_plan(0, 6, "run")))) == 6
