"""The ablation switches of engine.reproduce.ablations: each default path unchanged, each switch changing only what it
names; and the stored tables consistent with the verdict rule."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.fbo import FboConfig, run_fbo
from engine.objectives import synthetic
from engine.privacy import default_delta, epsilon
from engine.reproduce import ablation_own, ablations
from engine.reproduce.dp_fts_de import PART_SPECS
from engine.reproduce.stored import STORED_DIR


def test_shift_switch_removes_exactly_the_shifts_and_nothing_else():
    default = synthetic.build(50, 0.7, 3).values
    assert np.array_equal(default, synthetic.build(50, 0.7, 3, shifts=True).values)
    plain = synthetic.build(50, 0.7, 3, shifts=False).values
    difference = default - plain
    # The GP draws and the mixing are the same draws; only the +-0.02 shifts are gone.
    assert np.allclose(np.abs(difference), synthetic.SHIFT, rtol=0, atol=1e-12)
    assert 0.4 < np.mean(difference > 0) < 0.6


def test_scale_one_is_the_engine_bit_for_bit_and_a_scale_multiplies_only_the_sent_vectors():
    config = FboConfig(dataset="synthetic", algorithm="dp-fts-de", agents=12, iterations=3, runs=2, seed=5, P=2)
    plain = run_fbo(config)
    sim = ablations.scaled_simulation(config)
    records = list(sim)
    assert np.array_equal(sim.result().run_curves, plain.run_curves)
    scaled = ablations.scaled_simulation(config, scale=0.5)
    steps = [r.server_step for r in scaled if r.server_step is not None]
    # The same posterior draws, halved: the vectors of the first round are exactly half the unscaled ones.
    first = next(r.server_step for r in records if r.server_step is not None)
    assert np.array_equal(steps[0].vectors, first.vectors * 0.5)
    # An algorithm that sends nothing is not touched.
    ts = config.replace(algorithm="ts")
    sim_ts = ablations.scaled_simulation(ts, scale=0.5)
    list(sim_ts)
    assert np.array_equal(sim_ts.result().run_curves, run_fbo(ts).run_curves)


def test_neighbour_switch_changes_only_the_fixed_sample_relation():
    delta = default_delta(29, "paper")     # Fig. 11 at the paper's delta
    ours = ablation_own.fixed_sample_epsilon(0.35, 1.0, 60, delta, 29)
    assert ours == epsilon(0.35, 1.0, 60, delta, "rdp", sampling="fixed", n_agents=29)
    theirs = ablation_own.fixed_sample_epsilon(0.35, 1.0, 60, delta, 29, "add-remove")
    assert theirs == epsilon(0.35, 1.0, 60, delta, "rdp", sampling="poisson")
    # The values Fig. 11's investigation quotes (engine.privacy.paper.FIG11_MAIN).
    assert round(ours, 2) == 160.59 and round(theirs, 2) == 13.50
    with pytest.raises(Exception, match="neighbouring relation"):
        ablation_own.fixed_sample_epsilon(0.35, 1.0, 60, delta, 29, "swap")


def test_fig11_table_matches_the_stored_verdicts_on_our_side():
    from engine.reproduce.ablation_rule import decide_ablations

    table = decide_ablations({"ablations": {"fig11-neighbours": ablation_own.fig11_ablation()}})["ablations"][
        "fig11-neighbours"]
    stored = json.loads((STORED_DIR / "dp-fts-de-landmine-renyi.json").read_text())["parts"]["landmine-renyi"]
    by_claim = {c["claim"]: c for c in stored["claims"]}
    assert len(table["rows"]) == len(PART_SPECS["landmine-renyi"].claims)
    for row in table["rows"]:
        claim = by_claim[row["claim"]]
        assert row["with"]["verdict"] == claim["verdict"]
        assert math.isclose(row["with"]["better_mean"], claim["numbers"]["better_mean"], rel_tol=1e-9)
        assert row["without"]["verdict"] == "holds"


@pytest.mark.filterwarnings("ignore:The `probability` parameter was deprecated:FutureWarning")
def test_metric_switch_is_the_authors_predict_proba_and_the_default_unchanged(data_dir):
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import SVC

    from engine.objectives.landmine import make_task

    default, proba = make_task(), make_task(metric="auc-proba")
    assert default.definition() == make_task(metric="auc").definition()
    assert default.definition() != proba.definition()              # a table of its own
    points = np.array([[0.3, 0.4], [0.02, 0.9]])
    field = default.agents[4]
    hp = default.hyperparameters(points)
    decision, probability = [], []
    for c, gamma in zip(hp["C"], hp["gamma"]):
        clf = SVC(kernel="rbf", C=c, gamma=gamma).fit(field.x_train, field.y_train)
        decision.append(roc_auc_score(field.y_valid, clf.decision_function(field.x_valid)))
        clf = SVC(kernel="rbf", C=c, gamma=gamma, probability=True, random_state=0).fit(field.x_train, field.y_train)
        probability.append(roc_auc_score(field.y_valid, clf.predict_proba(field.x_valid)[:, 1]))
    assert np.allclose(default.score(4, points), decision, rtol=0, atol=1e-9)
    assert np.allclose(proba.score(4, points), probability, rtol=0, atol=1e-9)
    with pytest.raises(Exception, match="landmine metric"):
        make_task(metric="accuracy")


def test_stored_tables_follow_the_verdict_rule_and_cover_their_claims():
    import copy

    from engine.reproduce.ablation_rule import decide_ablations

    path = STORED_DIR / "ablations.json"
    if not path.is_file():
        pytest.skip("data/reproduction/ablations.json not generated")
    stored = json.loads(path.read_text())
    assert stored["provenance"]["command"].startswith("python -m engine reproduce ablations")
    # Every side's verdict is the one rule's over the whole family, from the stored numbers.
    again = decide_ablations(copy.deepcopy({"ablations": stored["ablations"]}))
    for name, table in stored["ablations"].items():
        spec = ablations.ABLATIONS[name]
        if spec["part"] in PART_SPECS:
            expected = ablations.matching_claims(PART_SPECS[spec["part"]], spec["claims"])
            assert [row["claim"] for row in table["rows"]] == [c.text for c in expected]
        for row, fresh in zip(table["rows"], again["ablations"][name]["rows"]):
            for side in ("with", "without"):
                assert row[side]["verdict"] == fresh[side]["verdict"], (name, row["claim"], side)
            assert row["conclusion"] == ablations.conclusion_of(row["deviation"], row["with"], row["without"])
        if spec.get("stored_with"):
            # Our side is the stored reproduction itself: its numbers and its verdict, not a run of its own.
            from engine.reproduce.stored_papers import stored_payload

            claims = {c["claim"]: c for p in stored_payload("dp-fts-de")["parts"].values() for c in p["claims"]}
            for row in table["rows"]:
                mine = claims[row["claim"]]
                assert row["with"]["verdict"] == mine["verdict"], row["claim"]
                assert row["with"]["difference"] == mine["numbers"]["difference"], row["claim"]
        if spec["switch"] in ("omega-scale", "clip-bound"):
            # The clip factor was fitted on a seed set of its own, never on the runs it judges.
            assert table["fitted_on"]["seed"] not in (table["seed"], table["seed"] + 100_000)


def test_cli_runs_an_ablation_and_refuses_an_unknown_one_in_a_sentence(capsys):
    from engine.cli import main

    assert main(["reproduce", "ablations", "--parts", "fig11-neighbours", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows = payload["ablations"]["fig11-neighbours"]["rows"]
    assert [(r["with"]["verdict"], r["without"]["verdict"]) for r in rows] == [("reversed", "holds")] * 9
    assert main(["reproduce", "ablations", "--parts", "fig7a"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ablation must be one of" in err[0]


def test_cli_prices_an_ablation_as_twice_its_settings_blocks():
    from engine.cli import build_parser
    from engine.cli.reproduce import cost

    args = build_parser().parse_args(["reproduce", "ablations", "--parts", "fig7a-shifts", "--runs", "4"])
    two = cost(args)
    args = build_parser().parse_args(["reproduce", "ablations", "--parts", "fig7a-shifts,fig11-neighbours",
                                      "--runs", "8"])
    assert cost(args).seconds > two.seconds > 0


def test_extent_switch_changes_only_the_synthetic_draw_and_only_when_asked():
    from engine.pogpucb import PoConfig, build_task
    from engine.pogpucb.tasks import SYNTHETIC_EXTENT
    from engine.validation import ConfigError

    ours, same = build_task("synthetic", 0), build_task("synthetic", 0, SYNTHETIC_EXTENT)
    assert np.array_equal(ours.f, same.f) and np.array_equal(ours.X, same.X)
    wider = build_task("synthetic", 0, 15.0)
    # The inputs are normalised to a maximal norm of 25 whatever the extent: only the function changes.
    assert np.array_equal(wider.X, ours.X) and not np.allclose(wider.f, ours.f)
    assert PoConfig().extent is None
    with pytest.raises(ConfigError, match="synthetic task only"):
        PoConfig(dataset="branin", extent=15.0)
