"""DP-HYPE's App. B, Figs. 7 and 8: how the Dirichlet split spreads labels and data over the clients.

The paper splits each data set among 50 clients with Dirichlet(alpha) label proportions, alpha in
{30, 5, 0.5}, and plots the label mix and size of 10 clients' local data sets (Fig. 7: MNIST and
Cifar-10; Fig. 8: Adult). Here the split is the engine's own (:func:`engine.hype.datasets.client_label_counts`,
the same indices the score tables train on), on the stand-ins. Per run (seed ``seed + r``, as the data
part's runs) two numbers measure what the figures show:

- label skew: the mean over clients of the total-variation distance between a client's label
  distribution and the training pool's (0: every client holds the global mix; 1: disjoint labels);
- size spread: the coefficient of variation (standard deviation over mean) of the clients' data sizes.

The iid split is measured too, as the floor the paper's "split more iid than non-iid" refers to.
"""

from __future__ import annotations

import numpy as np

from engine.hype.datasets import client_label_counts
from engine.reproduce.claims import beats, mark

CLIENTS = 50                     # App. B: "split among 50 clients"
SHOWN = 10                       # "only 10 clients are shown"
ALPHAS = (None, 30.0, 5.0, 0.5)
FIGURES = {"mnist-like": "Fig. 7", "cifar-like": "Fig. 7", "adult-like": "Fig. 8"}


def split_key(alpha) -> str:
    return "iid" if alpha is None else f"{alpha:g}"


def label_skew(counts: np.ndarray) -> float:
    """Mean over clients of the total-variation distance of their label mix from the pool's."""
    counts = np.asarray(counts, float)
    pool = counts.sum(axis=0) / counts.sum()
    mix = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    return float(0.5 * np.abs(mix - pool).sum(axis=1).mean())


def size_spread(counts: np.ndarray) -> float:
    """Coefficient of variation of the clients' local data sizes."""
    sizes = np.asarray(counts, float).sum(axis=1)
    return float(sizes.std() / sizes.mean())


def split_cell(dataset: str, alpha, runs: int, seed: int) -> dict:
    """Per-run skew and size spread of one (data set, alpha) at n = 50, and run 0's first 10 clients' counts."""
    skew, spread, shown = [], [], None
    for run in range(runs):
        counts = client_label_counts(dataset, CLIENTS, alpha, seed + run)
        skew.append(label_skew(counts))
        spread.append(size_spread(counts))
        if shown is None:
            shown = counts[:SHOWN].tolist()
    return {"dataset": dataset, "alpha": alpha, "clients": CLIENTS, "skew": skew, "size_cv": spread,
            "counts": shown}


def labels(runs: int, seed: int, datasets=tuple(FIGURES), progress=None) -> dict:
    """The label-distribution part: every (data set, split) of Figs. 7-8 and its claims."""
    datasets = [d for d in datasets if d in FIGURES]
    cells = []
    for i, d in enumerate(datasets):
        if progress:
            progress("labels", i, len(datasets))
        cells += [split_cell(d, a, runs, seed) for a in ALPHAS]
    if progress:
        progress("labels", len(datasets), len(datasets))
    claims = [c for d in datasets for c in label_claims({split_key(c["alpha"]): c for c in cells
                                                         if c["dataset"] == d}, d)]
    # Definitional: a smaller Dirichlet concentration skews the split by construction of the Dirichlet law.
    mark(claims, "stand-in", by_construction=True)
    return {"title": "Label distributions of the Dirichlet split (App. B, Figs. 7 and 8; stand-ins)",
            "metric": "mean total-variation distance of a client's labels from the pool's", "runs": runs,
            "clients": CLIENTS, "shown_clients": SHOWN, "cells": cells, "claims": claims}


def label_claims(split: dict, d: str) -> list[dict]:
    """App. B's sentences about data set ``d``'s splits (``split`` maps "iid", "30", "5", "0.5" to a cell)."""
    fig = FIGURES[d]
    src = f"App. B, {fig}"
    skew = {key: np.asarray(cell["skew"]) for key, cell in split.items()}
    cv = {key: np.asarray(cell["size_cv"]) for key, cell in split.items()}
    return [
        beats(f"{d}: smaller alpha, more skewed labels: alpha = 5 above alpha = 30 (mean total-variation distance "
              f"from the pool's label mix, n = {CLIENTS})", src + ": 'For smaller values of alpha however, the "
              "label distribution is quite skewed over the clients'", fig, skew["5"], skew["30"]),
        beats(f"{d}: smaller alpha, more skewed labels: alpha = 0.5 above alpha = 5 (n = {CLIENTS})", src, fig,
              skew["0.5"], skew["5"]),
        beats(f"{d}: alpha = 30 splits more iid than non-iid: its label skew is nearer the iid split's than "
              f"alpha = 0.5's (n = {CLIENTS})", src + ": 'When setting the parameter alpha of the Dirichlet "
              "distribution 30.0, the data set is split more iid than non-iid'", fig,
              skew["0.5"] - skew["30"], skew["30"] - skew["iid"]),
        beats(f"{d}: for smaller alpha the local data set sizes vary a lot: the coefficient of variation of "
              f"client sizes at alpha = 0.5 above alpha = 30 (n = {CLIENTS})", src + ": 'the size of their local "
              "data sets can vary a lot'", fig, cv["0.5"], cv["30"]),
    ]
