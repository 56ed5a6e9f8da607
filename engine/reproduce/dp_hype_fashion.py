"""DP-HYPE's Figs. 4-6 and 9-11 on real images: Fashion-MNIST, with the softmax regression and with an MLP.

The ``fashion-mnist`` part of ``python -m engine reproduce dp-hype`` (not among its default parts, nor run by
``reproduce all``: it needs the Debian package ``dataset-fashion-mnist``, :mod:`engine.hype.fashion`). Every
other data claim of the reproduction is judged on generated stand-ins with a convex model; this part asks
whether what did not hold there (Fig. 5's RANDGUESS level, Fig. 6's "more pronounced trade-off non-iid", OPT
falling with more clients) changes on a real image data set, and with a model whose clients can drift apart (the
MLP of :mod:`engine.hype.mlp`, one hidden layer of 32 ReLU units). Fashion-MNIST is not the paper's MNIST: every
claim here carries ``"data_kind": "other"`` (a real data set the paper did not use), is reported beside the
paper's tally and not in it, and opens with "Fashion-MNIST" and the model.

The settings are the paper's (k = 5, delta = 1e-5, epsilon in {0.1, 0.25, 0.5, 1, 3, inf}, the 100 candidates
of Table III, the Dirichlet splits), in the nine (n, alpha) cells the claims read (Fig. 5: n = 50, 100, 250
iid; Fig. 6: n = 100 at alpha = 30 and 0.5; Figs. 9 and 11: n = 50 at alpha = 30, 5 and 0.5; Fig. 10:
n = 250 at alpha = 5); the figures' three other cells carry no claim and are left out. On this 2-core
machine the training is reduced to 2 federated rounds of 2 local epochs (the paper: 5 x 5; two local epochs
so that a client's model moves away from the federation's before averaging) and the run count to ``RUNS``.
"""

from __future__ import annotations

import time

from engine.blas import blas_kernel
from engine.hype import fashion
from engine.hype.scores import TRAINING_LABELS, score_table
from engine.reproduce.dp_hype_data import VOTES_PER_RUN, _key, collect_tables, data_cell, data_claims

NAME = "fashion-mnist"
DATASET = fashion.NAME
MODELS = {"softmax": "softmax regression", "mlp": "MLP"}
TRAINING = "two-epochs"
RUNS = 8                    # at most, whatever --runs asks (the compute budget of the stored file)
CELLS = ((50, None), (100, None), (250, None), (100, 30.0), (100, 0.5), (50, 30.0), (50, 0.5), (50, 5.0),
         (250, 5.0))
DATA_KIND = "other"
# The price of a run (engine.reproduce.dp_hype.part_price): its 18 score tables (2 models x 9 cells) took 190 s of
# CPU a run on the 2-core development machine (968 s for the stored file's first 91 tables, two worker processes,
# no table cached; data/reproduction/provenance.json), priced at 1.5 times that. A worker peaked at 1.64 GB (the MLP at
# n = 250 holds every client's 663,000 weights); a whole run of the part needs DPBO_MAX_MEMORY_MB above the
# default 2,048 with two workers.
SECONDS_PER_RUN = 270.0
WORKER_MEMORY_MB = 1800.0


def require() -> None:
    """Raise ConfigError (one sentence) unless Fashion-MNIST's files are there, before any work starts."""
    if not fashion.available(fashion.fashion_dir()):
        fashion.load_fashion_mnist()          # raises the sentence


def claim_name(model: str) -> str:
    return f"Fashion-MNIST, {MODELS[model]}"


def table_keys(runs: int, seed: int) -> list[tuple]:
    """(model, n, alpha, table seed) of every score table, run by run (so that the first runs finish first)."""
    return [(model, n, alpha, seed + run) for run in range(runs) for model in MODELS for n, alpha in CELLS]


def _build(key, training):
    model, n, alpha, table_seed = key
    return key, score_table(DATASET, n, alpha, table_seed, training=training, model=model)


def build_tables(keys, jobs: int | None = None, progress=None) -> dict:
    """Every score table of ``keys`` on ``jobs`` worker processes (each lands in the disk cache too)."""
    return collect_tables(keys, TRAINING, _build, jobs, progress, "fashion-mnist score tables")


def fashion_part(runs: int, seed: int, votes: int = VOTES_PER_RUN, progress=None, jobs: int | None = None,
                 load_table=None) -> dict:
    """The part's cells and claims for both models; ``load_table(model, n, alpha, seed)`` replaces the score
    tables (tests), else they are built first on ``jobs`` workers."""
    runs = min(int(runs), RUNS)
    started = time.perf_counter()
    if load_table is None:
        tables = build_tables(table_keys(runs, seed), jobs, progress)

        def load_table(model, n, alpha, table_seed):
            return tables[(model, n, alpha, table_seed)]
    table_seconds = round(time.perf_counter() - started, 1)
    cells, claims = [], []
    for model in MODELS:
        own = {}
        for n, alpha in CELLS:
            cell = data_cell(DATASET, n, alpha, runs, seed, votes,
                             lambda _d, clients, a, s, model=model: load_table(model, clients, a, s), TRAINING)
            cell["model"] = model
            own[_key(DATASET, n, alpha)] = cell
            cells.append(cell)
        claims += data_claims(own, DATASET, name=claim_name(model))
    for claim in claims:
        claim.update(data_kind=DATA_KIND, by_construction=False)
    return {"title": "Fashion-MNIST (real images; the paper used MNIST): Figs. 4-6 and 9-11, softmax regression and "
                     "MLP, reduced training",
            "metric": "test accuracy of the chosen candidate", "runs": runs, "votes_per_run": votes,
            "dataset": fashion.LABEL, "data_kind": DATA_KIND, "models": MODELS,
            "model_labels": {"softmax": "softmax regression (a linear layer and softmax)",
                             "mlp": "MLP, one hidden layer of 32 ReLU units (engine.hype.mlp)"},
            "inputs": "2 x 2 average pooling: 14 x 14 = 196 features, standardised",
            "training": TRAINING, "training_label": TRAINING_LABELS[TRAINING], "blas_kernel": blas_kernel(),
            "table_seconds": table_seconds, "cells": cells, "claims": claims}
