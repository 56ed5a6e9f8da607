"""The DP-HYPE and PO-GP-UCB reproductions: stand-ins, baselines, claims for every figure, verdicts from numbers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.cli import main
from engine.limits import Cost
from engine.reproduce import PAPERS
from engine.reproduce.claims import DATA_KINDS, decide_payload, redecided
from engine.reproduce.dp_hype import communication, data, data_cell, noise, simulation
from engine.reproduce.dp_hype_labels import labels, label_skew, size_spread
from engine.reproduce.papers import summary_rows


def _fake_table(dataset, clients, alpha, seed):
    """A score table where every client ranks candidate 7 first; test accuracies drawn from the seed."""
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.1, 0.9, 100)
    local = rng.uniform(0, 0.5, (clients, 100))
    local[:, 7] = 1.0
    return {"local_accuracy": local, "local_loss": 1 - local, "test_accuracy": accuracy}


def _figures(payload):
    return {c["figure"] for part in payload["parts"].values() for c in part["claims"]}


def _check_verdicts(payload):
    claims = [c for part in payload["parts"].values() for c in part["claims"]]
    assert [c["verdict"] for c in claims] == redecided(claims)
    for claim in claims:
        assert claim["holds"] == (claim["verdict"] == "holds")
        assert claim["data_kind"] in DATA_KINDS and isinstance(claim["by_construction"], bool)


@pytest.mark.parametrize("name, rows, columns, classes", [("mnist-like", 75_000, 64, 10),
                                                          ("cifar-like", 75_000, 64, 10),
                                                          ("adult-like", 50_000, 74, 2)])
def test_standins_have_the_papers_scale(name, rows, columns, classes):
    from engine.hype.datasets import load_dataset, train_size
    from engine.hype.standins import attribute_count

    features, labels = load_dataset(name)
    assert features.shape == (rows, columns) and len(np.unique(labels)) == classes
    assert train_size(name) == int(rows * 0.8)          # 60,000 training points for the images (Table II)
    if name == "adult-like":
        assert attribute_count(name) == 14
        assert np.isin(features[:, 6:], (0.0, 1.0)).all()              # one-hot categories
        assert (features[:, 6:].sum(axis=1) == 8).all()                 # one level of each of 8 attributes
        assert labels.mean() == pytest.approx(0.24, abs=0.01)


def test_opt_is_the_best_candidate_randguess_the_mean_and_infinite_epsilon_no_noise():
    cell = data_cell("digits", 20, None, runs=3, seed=4, votes=10, load_table=_fake_table)
    for run in range(3):
        table = _fake_table("digits", 20, None, 4 + run)["test_accuracy"]
        assert cell["opt"][run] == pytest.approx(table.max())
        assert cell["randguess"][run] == pytest.approx(table.mean())
        # Without noise every vote elects the candidate all clients rank first.
        assert cell["accuracy"]["inf"][run] == pytest.approx(table[7])
    # With the paper's smallest epsilon the noise (sigma ~ 107 against 20 votes) picks other candidates.
    assert cell["accuracy"]["0.1"] != pytest.approx(cell["accuracy"]["inf"])
    rows = noise()["table"]
    assert rows[-1]["epsilon"] is None and rows[-1]["sigma"] == 0.0


def test_dp_hype_lists_a_claim_for_every_figure_and_every_verdict_follows_from_its_numbers():
    parts = {"simulation": simulation(200, 0), "communication": communication(), "noise": noise(),
             "data": data(2, 0, datasets=("digits",), votes=5, load_table=_fake_table),
             "labels": labels(2, 0, datasets=("cifar-like", "adult-like"))}
    payload = decide_payload({"paper": "dp-hype", "parts": parts})     # as reproduce() decides them together
    assert _figures(payload) == {"Fig. 2a", "Fig. 2b", "Fig. 3", "Noise table", "Fig. 4", "Fig. 5", "Fig. 6",
                                 "Fig. 7", "Fig. 8", "Fig. 9", "Fig. 10", "Fig. 11", "Thm V.1", "App. A"}
    # Theorem V.1 and the dropout tolerance: identities apart, the measured claims generated as the paper's.
    theory = [c for c in parts["simulation"]["claims"] if c["figure"] in ("Thm V.1", "App. A")]
    assert len(theory) == 6 and sum(c["by_construction"] for c in theory) == 2
    assert all(c["data_kind"] == ("identity" if c["by_construction"] else "generated") for c in theory)
    assert all(c["data_kind"] == "identity" for name in ("communication", "noise") for c in parts[name]["claims"])
    _check_verdicts(payload)
    assert len(parts["simulation"]["fig2b_success"]) == 6          # |H_good| = 2 ... 64 (128 > p)
    json.dumps(payload)


def test_figs_7_8_measure_the_engines_own_split():
    from engine.hype.datasets import client_data, client_label_counts

    counts = client_label_counts("digits", 20, 0.5, 3)
    data = client_data("digits", 20, 0.5, 3)
    assert counts.shape == (20, 10)
    assert (counts.sum(axis=1) == data.m_train.sum(axis=1) + data.m_val.sum(axis=1)).all()
    train = np.bincount(data.y_train[data.m_train], minlength=10) + np.bincount(data.y_val[data.m_val], minlength=10)
    assert (counts.sum(axis=0) == train).all()
    # Every client holding the pool's mix is no skew; disjoint labels of equal size are the most.
    assert label_skew(np.full((4, 3), 5)) == 0.0 and size_spread(np.full((4, 3), 5)) == 0.0
    assert label_skew(np.eye(2) * 10) == pytest.approx(0.5)
    assert label_skew(counts) > label_skew(client_label_counts("digits", 20, None, 3))


def test_the_stand_ins_train_as_asked_and_say_so():
    from engine.hype.scores import schedule, score_description, training_label

    assert schedule("cifar-like", "paper") == (5, 5) and schedule("cifar-like", "short") == (2, 1)
    assert schedule("digits", "short") == (5, 5)                  # the bundled sets always train as the paper
    assert "not" not in training_label("digits") and "the paper: 5 x 5" in training_label("mnist-like")
    paper, short = (score_description("adult-like", 50, None, 0, t) for t in ("paper", "short"))
    assert (paper["rounds"], paper["epochs"], short["rounds"], short["epochs"]) == (5, 5, 2, 1)   # cached apart
    cell = data_cell("adult-like", 50, None, runs=2, seed=0, votes=5, load_table=_fake_table, training="short")
    assert (cell["rounds"], cell["epochs"]) == (2, 1)
    part = data(2, 0, datasets=("digits",), clients=(50,), alphas=(None,), votes=5, load_table=_fake_table)
    assert part["training"] == "paper" and "5 rounds of 5" in part["training_label"]
    assert "reduced" in data(2, 0, datasets=("digits",), clients=(50,), alphas=(None,), votes=5,
                             load_table=_fake_table, training="short")["title"]


def test_the_price_of_dp_hype_follows_its_training_and_its_workers():
    from engine.reproduce.dp_hype import MEMORY_MB, SECONDS_PER_RUN, TRAINING_FACTOR, WORKER_MEMORY_MB
    from engine.reproduce.papers import paper_cost

    paper, short = (paper_cost("dp-hype", ("data",), 20, training=t).seconds for t in ("paper", "short"))
    assert short == pytest.approx(TRAINING_FACTOR["short"] * paper)
    assert paper_cost("dp-hype", ("data",), 20).seconds == paper
    assert paper == pytest.approx(0.98 * 20 * SECONDS_PER_RUN)
    # The score tables are shared among the workers; the parts without tables are not.
    two = paper_cost("dp-hype", ("data", "labels"), 20, workers=2)
    assert two.seconds == pytest.approx(20 * SECONDS_PER_RUN * (0.98 / 2 + 0.02))
    assert two.memory_mb == MEMORY_MB + 2 * WORKER_MEMORY_MB
    assert paper_cost("dp-hype", ("labels",), 20, workers=2).memory_mb == MEMORY_MB
    assert paper_cost("dp-hype", ("noise", "communication"), 20).seconds == 0


def test_reproduce_cli_dp_hype_light_parts(capsys):
    assert main(["reproduce", "dp-hype", "--runs", "2", "--parts", "communication,noise", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert _figures(payload) == {"Fig. 3", "Noise table"}
    assert main(["reproduce", "dp-hype", "--parts", "figures"]) == 2
    assert "reproduction part" in capsys.readouterr().err


def test_po_gp_ucb_lists_a_claim_for_every_figure_and_table(capsys):
    assert main(["reproduce", "po-gp-ucb", "--runs", "2", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert _figures(payload) == {"Fig. 2a", "Fig. 2b", "Fig. 2c", "App. A"} | {f"Table {i}" for i in range(1, 10)}
    _check_verdicts(payload)
    # The branch claims hold exactly: the largest epsilon keeps distances, the others lift.
    branch = [c for c in payload["parts"]["loan"]["claims"] if "keeps distances" in c["claim"]]
    assert branch and branch[0]["verdict"] == "holds"
    rows = summary_rows({"po-gp-ucb": payload})
    assert sum(r["claims"] for r in rows) == sum(len(p["claims"]) for p in payload["parts"].values())


@pytest.mark.parametrize("dataset, delta, keeps, lifts", [("loan-like", 1e-5, 2.9, (2.0, 1.0)),
                                                          ("property-like", 1e-4, 2.8, (1.0, 0.5))])
def test_loan_and_property_standins_reach_both_branches(dataset, delta, keeps, lifts):
    from engine.pogpucb.config import PoConfig
    from engine.pogpucb.runner import curator_summary
    from engine.pogpucb.tasks import build_task

    task = build_task(dataset)
    assert (task.n, task.d) == {"loan-like": (36_000, 3), "property-like": (2_004, 2)}[dataset]
    assert np.linalg.norm(task.X, axis=1).max() == pytest.approx(25.0)
    assert curator_summary(PoConfig(dataset=dataset, epsilon=math.exp(keeps), delta=delta, r=15)).preserves
    for e in lifts:
        assert not curator_summary(PoConfig(dataset=dataset, epsilon=math.exp(e), delta=delta, r=15)).preserves


def test_every_paper_is_registered_once():
    assert {"dp-fts-de", "dp-hype", "po-gp-ucb"} <= set(PAPERS)
    assert all(value.startswith("engine.reproduce.") for value in PAPERS.values())


def test_reproduce_all_runs_every_registered_paper_and_sums_up_their_claims(capsys, monkeypatch):
    import engine.cli.reproduce as cli

    ran = []

    def fake_paper(paper, parts, runs=None, seed=0, progress=None, **options):
        ran.append((paper, runs))
        claim = {"claim": "x", "source": "Sec. 1, Fig. 1", "figure": "Fig. 1", "holds": True, "verdict": "holds",
                 "numbers": {"difference": 1.0, "stderr": 0.1}}
        return {"paper": paper, "parts": {"p": {"title": "t", "runs": runs, "claims": [claim]}}}

    monkeypatch.setattr(cli, "run_paper", fake_paper)
    monkeypatch.setattr(cli, "_fbo_paper", lambda args, paper, parts, workers: {"paper": paper, "parts": {}})
    monkeypatch.setattr(cli, "cost", lambda args: Cost.free("the fake papers compute nothing"))
    assert main(["reproduce", "all", "--runs", "3", "--quiet", "--no-replication"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload["papers"]) == set(PAPERS)
    # --runs is a scale: at most each paper's own count.
    assert sorted(ran) == sorted((p, 3) for p in PAPERS if p not in cli.FBO_PAPERS)
    assert [r["paper"] for r in payload["summary"]] == [p for p in PAPERS if p not in cli.FBO_PAPERS]


def test_the_stored_data_figures_are_the_stored_cells():
    """Figs. 5/6/10/11 draw a stored cell's means and intervals over its runs; Figs. 4/9 the candidates' accuracies,
    every run's 100 candidates counted once per histogram (App. D's alpha = 2 stands for 0.5 on Adult at n = 250)."""
    from engine.reproduce.dp_hype_figures import candidate_histograms, cell_curve, find_cell
    from engine.reproduce.stored_papers import stored_payload

    part = stored_payload("dp-hype")["parts"]["data"]
    cell = find_cell(part, "mnist-like", 100, None)
    curve = cell_curve(cell)
    assert curve["runs"] == len(cell["opt"]) and curve["epsilons"][-1] == math.inf
    assert curve["hype"][-1, 0] == pytest.approx(np.mean(cell["accuracy"]["inf"]))
    assert curve["hype"][0, 1] < curve["hype"][0, 0] < curve["hype"][0, 2]
    assert curve["opt"] == pytest.approx(np.mean(cell["opt"])) and curve["opt_ci"][0] < curve["opt"]
    assert find_cell(part, "adult-like", 250, 0.5)["alpha"] == 2.0
    four = candidate_histograms(part, "Fig. 4")
    assert {h["name"] for h in four} == {"mnist-like", "cifar-like", "adult-like", "digits"}
    assert all(h["counts"].sum() == pytest.approx(100) for h in four)
    nine = candidate_histograms(part, "Fig. 9", "cifar-like")
    assert [h["name"] for h in nine] == ["iid", "α = 30", "α = 5", "α = 0.5"]
