"""RBF-kernel SVM tuning shared by the landmine and digits tasks.

Each agent holds a train/validation split. A point of [0, 1]^2 maps to C and
gamma on the task's ``scale``: ``"log10"`` (``C = log_scale(x[0], *c_range)``) or
``"linear"`` (``C = low + x[0] (high - low)``, the landmine authors' map).
The squared distances between examples do not depend on the hyperparameters,
so they are computed once per call and every gamma reuses them through
``SVC(kernel="precomputed")`` (the kernel values are ``exp(-gamma * d^2)``,
exactly what ``kernel="rbf"`` computes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.cancel import checkpoint
from engine.objectives.datasets import SplitData
from engine.objectives.tasks import Task, linear_scale, log_scale
from engine.validation import check_choice


def auc_columns(labels: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Area under the ROC curve of every column of ``scores`` (n, K) for 0/1 ``labels`` (n,).

    Mann-Whitney form with average ranks for ties, equal to
    ``sklearn.metrics.roc_auc_score`` column by column.
    """
    from scipy.stats import rankdata

    labels = np.asarray(labels).astype(bool)
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    ranks = rankdata(scores, axis=0)
    return (ranks[labels].sum(axis=0) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


class _Svc:
    """One C-SVC fit on a precomputed kernel, with the two predictions the tasks need.

    Calls scikit-learn's bundled libsvm directly (the solver ``SVC`` runs, same
    defaults: tol 1e-3, shrinking, unit class weights): on scikit-learn 1.9
    ``SVC.fit`` spends ~8 ms per call checking its inputs against ~2 ms of
    solving, which would dominate a 2,500-point table. If that private module
    is missing or changes, the public ``SVC`` is used instead; tests check both
    give the same scores.
    """

    def __init__(self, kernel: np.ndarray, codes: np.ndarray, n_classes: int, c_value: float,
                 probability: bool = False):
        self.model = None
        _libsvm = _fast_libsvm()
        # SVC(probability=True, random_state=PROBABILITY_STATE) seeds libsvm's internal cross-validation with the
        # first draw of that state; both paths use it, so they give the same probabilities.
        seed = int(np.random.RandomState(PROBABILITY_STATE).randint(np.iinfo("i").max)) if probability else 0
        if _libsvm is not None:
            try:
                (self.support, self.vectors, self.n_support, self.coef, self.intercept, self.prob_a, self.prob_b,
                 _, _) = _libsvm.fit(kernel, codes, svm_type=0, kernel="precomputed", C=float(c_value),
                                     class_weight=np.ones(n_classes), sample_weight=np.empty(0),
                                     probability=int(probability), random_seed=seed)
                return
            except TypeError:  # the private signature changed: use the public estimator
                pass
        from sklearn.svm import SVC

        extra = dict(probability=True, random_state=PROBABILITY_STATE) if probability else {}
        self.model = SVC(kernel="precomputed", C=float(c_value), **extra).fit(kernel, codes)

    def probability(self, kernel: np.ndarray) -> np.ndarray:
        """Platt-scaled probability of class code 1 (``SVC.predict_proba(...)[:, 1]``; fitted with probability)."""
        if self.model is not None:
            return self.model.predict_proba(kernel)[:, 1]
        return _fast_libsvm().predict_proba(kernel, self.support, self.vectors, self.n_support, self.coef,
                                            self.intercept, self.prob_a, self.prob_b, svm_type=0,
                                            kernel="precomputed")[:, 1]

    def decision(self, kernel: np.ndarray) -> np.ndarray:
        """Binary decision values, positive favouring class code 1 (``SVC.decision_function``)."""
        if self.model is not None:
            return self.model.decision_function(kernel)
        # libsvm's raw values favour the first class; scikit-learn flips their sign for two classes.
        return -(kernel[:, self.support] @ self.coef[0] + self.intercept[0])

    def predict(self, kernel: np.ndarray) -> np.ndarray:
        """Predicted class codes."""
        if self.model is not None:
            return self.model.predict(kernel)
        return _fast_libsvm().predict(kernel, self.support, self.vectors, self.n_support, self.coef, self.intercept,
                               self.prob_a, self.prob_b, svm_type=0, kernel="precomputed")


# The landmine authors score with SVC(probability=True) and the AUC of predict_proba (landmine_dp_fts_de.py:37-40),
# with no random_state (libsvm's Platt scaling cross-validates on a random split); metric "auc-proba" fixes it.
PROBABILITY_STATE = 0
METRICS = ("auc", "accuracy", "auc-proba")

_LIBSVM = "unloaded"  # scikit-learn's private libsvm module, imported on first use; None when absent


def _fast_libsvm():
    global _LIBSVM
    if _LIBSVM == "unloaded":
        try:
            from sklearn.svm import _libsvm as module
        except ImportError:  # pragma: no cover - depends on the installed scikit-learn
            module = None
        _LIBSVM = module
    return _LIBSVM


def svm_scores(data: SplitData, c_values: np.ndarray, gammas: np.ndarray, metric: str) -> np.ndarray:
    """Validation score of an RBF SVM trained on ``data`` at each pair (C, gamma).

    ``metric`` is ``"auc"`` (binary labels; ranks the decision function), ``"auc-proba"`` (ranks
    the Platt-scaled probability of ``SVC(probability=True)``, as the landmine authors score) or
    ``"accuracy"``. The score of a pair does not depend on the other pairs.
    """
    check_choice("metric", metric, METRICS)
    c_values = np.asarray(c_values, dtype=float)
    gammas = np.asarray(gammas, dtype=float)
    from scipy.spatial.distance import cdist

    if _fast_libsvm() is not None:
        _fast_libsvm().set_verbosity_wrap(0)  # libsvm's verbosity is global; SVC resets it before each fit too
    classes, codes = np.unique(data.y_train, return_inverse=True)
    codes = codes.astype(float)
    d_train = cdist(data.x_train, data.x_train, "sqeuclidean")
    d_valid = cdist(data.x_valid, data.x_train, "sqeuclidean")
    out = np.empty(len(c_values))
    for gamma in np.unique(gammas):
        checkpoint()
        rows = np.flatnonzero(gammas == gamma)
        k_train = np.exp(-gamma * d_train)
        k_valid = np.exp(-gamma * d_valid)
        if metric == "auc":
            decisions = np.empty((len(data.y_valid), len(rows)))
            for j, row in enumerate(rows):
                decisions[:, j] = _Svc(k_train, codes, len(classes), c_values[row]).decision(k_valid)
            out[rows] = auc_columns(data.y_valid == classes[1], decisions)
        elif metric == "auc-proba":
            probabilities = np.empty((len(data.y_valid), len(rows)))
            for j, row in enumerate(rows):
                probabilities[:, j] = _Svc(k_train, codes, len(classes), c_values[row], True).probability(k_valid)
            out[rows] = auc_columns(data.y_valid == classes[1], probabilities)
        else:
            for row in rows:
                predicted = _Svc(k_train, codes, len(classes), c_values[row]).predict(k_valid)
                out[row] = np.mean(classes[predicted.astype(int)] == data.y_valid)
    return out


@dataclass(frozen=True, eq=False)
class RbfSvmTask(Task):
    """Agents tuning (C, gamma) of an RBF SVM on their own data: x[0] -> C, x[1] -> gamma (``scale``)."""

    name: str
    agents: tuple
    c_range: tuple
    gamma_range: tuple
    metric: str
    metric_label: str
    lengthscale: float
    noise_var: float
    data_definition: dict
    summary: str = ""
    default_grid: int = 50
    dim: int = 2
    noise_std: float = 0.0
    scorer_version: int = 1
    scale: str = "log10"            # log10 | linear

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    def hyperparameters(self, points: np.ndarray) -> dict[str, np.ndarray]:
        """The (C, gamma) each point of [0, 1]^2 stands for."""
        points = np.atleast_2d(points)
        to_range = linear_scale if self.scale == "linear" else log_scale
        return {"C": to_range(points[:, 0], *self.c_range), "gamma": to_range(points[:, 1], *self.gamma_range)}

    def definition(self) -> dict:
        return {"task": self.name, "model": "rbf-svm", "axes": ["C", "gamma"], "scale": self.scale,
                "C_range": list(self.c_range), "gamma_range": list(self.gamma_range), "metric": self.metric,
                "scorer": "svc-precomputed-kernel", "scorer_version": self.scorer_version,
                "n_agents": self.n_agents, **self.data_definition}

    def score(self, agent: int, points: np.ndarray) -> np.ndarray:
        hp = self.hyperparameters(points)
        return svm_scores(self.agents[agent], hp["C"], hp["gamma"], self.metric)
