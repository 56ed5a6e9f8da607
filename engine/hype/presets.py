"""The DP-HYPE page's presets for the reproduced figures (engine.reproduce.dp_hype), as control values.

Each preset is (label, the figure its stored verdicts are filed under, control values). The data
presets use the stand-ins of :mod:`engine.hype.standins` (labelled as such) at the paper's k = 5 and
delta = 1e-5.
"""

from __future__ import annotations


def _data(dataset: str, clients: int, alpha, epsilon: float) -> dict:
    split = dict(split="iid") if alpha is None else dict(split="dirichlet", alpha=alpha)
    return dict(mode="data", noise="epsilon", epsilon=epsilon, delta=1e-5, k=5, clients=clients, dataset=dataset,
                xi=0.0, dropout=0.0, repetitions=1000, seed=0, runs=3, **split)


def paper_presets() -> dict:
    return {
        "fig2b": ("Paper Fig. 2b: |H_good| = 32, σ_loss = 0.2, n = 250, p = 100", "Fig. 2b",
                  dict(mode="simulation", noise="epsilon", epsilon=0.25, delta=1e-5, k=5, clients=250,
                       candidates=100, good=32, sigma_loss=0.2, xi=0.0, dropout=0.0, repetitions=2000, seed=0)),
        "fig4-cifar": ("Paper Fig. 4: Cifar-10-like stand-in, iid, n = 100, ε = 1 (the candidates' accuracies)",
                       "Fig. 4", _data("cifar-like", 100, None, 1.0)),
        "fig5-mnist": ("Paper Fig. 5: MNIST-like stand-in, iid, n = 100, ε = 0.25", "Fig. 5",
                       _data("mnist-like", 100, None, 0.25)),
        "fig5-adult": ("Paper Fig. 5: Adult-like stand-in, iid, n = 100, ε = 0.25", "Fig. 5",
                       _data("adult-like", 100, None, 0.25)),
        "fig6-cifar": ("Paper Fig. 6: Cifar-10-like stand-in, Dirichlet α = 0.5, n = 100, ε = 1", "Fig. 6",
                       _data("cifar-like", 100, 0.5, 1.0)),
        "fig7-cifar": ("Paper Fig. 7: Cifar-10-like stand-in, Dirichlet α = 0.5, n = 50 (label distributions)",
                       "Fig. 7", _data("cifar-like", 50, 0.5, 1.0)),
        "fig8-adult": ("Paper Fig. 8: Adult-like stand-in, Dirichlet α = 0.5, n = 50 (label distributions)",
                       "Fig. 8", _data("adult-like", 50, 0.5, 1.0)),
        "fig9-mnist": ("Paper Fig. 9: MNIST-like stand-in, Dirichlet α = 0.5, n = 50, ε = 1 (the candidates' "
                       "accuracies)", "Fig. 9", _data("mnist-like", 50, 0.5, 1.0)),
        "fig10-mnist": ("Paper Fig. 10: MNIST-like stand-in, Dirichlet α = 5, n = 250, ε = 0.25", "Fig. 10",
                        _data("mnist-like", 250, 5.0, 0.25)),
        "fig11-mnist": ("Paper Fig. 11: MNIST-like stand-in, Dirichlet α = 5, n = 50, ε = 0.25", "Fig. 11",
                        _data("mnist-like", 50, 5.0, 0.25)),
    }


def preset_figure(name: str) -> str | None:
    """The figure a preset reproduces (fig2a is the page's own preset)."""
    if name == "fig2a":
        return "Fig. 2a"
    return paper_presets().get(name, (None, None))[1]
