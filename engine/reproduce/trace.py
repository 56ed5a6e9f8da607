"""The engine's side of the differential trace against the authors' DP-FTS-DE landmine code.

:func:`engine_trace` runs DP-FTS-DE on landmine with the authors' settings (their landmine_dp_fts_de.py:
29 agents, M = 100, P = 4, q = 0.35, z = 1, S = 22, 1 - p_t = 1/t, GP re-fit every 5 observations)
on the continuous box, where the authors' agents search too, and logs every server round: each
agent's omega norm, how many were selected and how many of those clipped, phi_max, the noise's
standard deviation and the norm of every sub-region's broadcast. benchmarks/trace_authors_dpftsde.py
runs the authors' code beside it and stores both in data/reproduction/authors-trace.json;
tests/test_authors_trace.py checks this side against the stored numbers.

Rounds are numbered as the authors' loop numbers them: round r aggregates the vectors the agents sent
after iteration r (round 0: after the initial points) and its broadcast is used in iteration r + 1.
Our record of iteration t holds round t - 1.
"""

from __future__ import annotations

import numpy as np

from engine.fbo.presets import LANDMINE

# The authors' landmine_dp_fts_de.py:50-71 (DP-FTS-DE, Poisson subsampling, the moments accountant).
TRACE_SETTINGS = dict(LANDMINE, algorithm="dp-fts-de", q=0.35, z=1.0, S=22.0, P=4, domain="continuous")


def round_summary(norms, selected, threshold: float, phi_max, noise_std, broadcast_norms) -> dict:
    """One server round as plain numbers (the same keys for both sides of the trace)."""
    norms = np.asarray(norms, dtype=float)
    selected = np.asarray(selected, dtype=bool)
    clipped = selected & (norms > threshold)
    n_selected = int(selected.sum())
    return {"omega_norms": [float(v) for v in norms],
            "omega_norm_mean": float(norms.mean()),
            "selected": n_selected,
            "clipped": int(clipped.sum()),
            "clipped_share": float(clipped.sum() / n_selected) if n_selected else None,
            "phi_max": [float(v) for v in np.atleast_1d(phi_max)],
            "noise_std": [float(v) for v in np.atleast_1d(noise_std)],
            "broadcast_norms": [float(v) for v in np.atleast_1d(broadcast_norms)]}


def engine_trace(iterations: int = 10, seed: int = 0, objective=None) -> dict:
    """The engine's rounds 0..iterations-1 of one seeded run (see the module docstring).

    ``objective``: the landmine objective on the continuous domain (built when omitted; needs
    LandmineData.mat where :func:`engine.paths.data_dir` looks).
    """
    from engine.fbo import FboConfig
    from engine.fbo.simulation import Simulation

    config = FboConfig(**{**TRACE_SETTINGS, "iterations": int(iterations), "runs": 1, "seed": int(seed)})
    sim = Simulation(config, objective)
    rounds = []
    threshold = config.S / np.sqrt(config.P)
    for record in sim:
        step = record.server_step
        if step is None:
            continue
        rounds.append(round_summary(np.linalg.norm(step.vectors, axis=1), step.selected, threshold,
                                    np.asarray(step.weights).max(), step.noise_std,
                                    np.linalg.norm(step.broadcast, axis=1)))
    return {"settings": {k: v for k, v in config.to_dict().items()
                         if k in ("dataset", "algorithm", "agents", "iterations", "features", "lengthscale",
                                  "noise_var", "q", "z", "S", "P", "pt_schedule", "n_init", "weight_schedule",
                                  "own_features", "refit_every", "split", "domain", "seed")},
            "threshold": float(threshold), "rounds": rounds}


def summary(rounds: list[dict]) -> dict:
    """Means over rounds: omega norm, share clipped (pooled over rounds), phi_max, noise std, broadcast norm."""
    selected = sum(r["selected"] for r in rounds)
    return {"omega_norm_mean": float(np.mean([r["omega_norm_mean"] for r in rounds])),
            "omega_norm_range": [float(min(min(r["omega_norms"]) for r in rounds)),
                                 float(max(max(r["omega_norms"]) for r in rounds))],
            "clipped_share": float(sum(r["clipped"] for r in rounds) / selected) if selected else None,
            "selected_mean": float(selected / len(rounds)),
            "phi_max_mean": float(np.mean([np.mean(r["phi_max"]) for r in rounds])),
            "noise_std_mean": float(np.mean([np.mean(r["noise_std"]) for r in rounds])),
            "broadcast_norm_mean": float(np.mean([np.mean(r["broadcast_norms"]) for r in rounds]))}


def trace_markdown(stored: dict) -> str:
    """The trace as a markdown table per seed: ours against the authors' per round."""
    out = []
    for run in stored["runs"]:
        out += [f"Seed {run['seed']} (one run each; the two sides share settings and seed numbers, not random "
                "streams):", "",
                "| round | mean ω norm (ours / authors') | selected | clipped | φ_max | noise std | broadcast norm "
                "(mean over sub-regions) |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for r, (a, b) in enumerate(zip(run["engine"]["rounds"], run["authors"]["rounds"])):
            out.append(f"| {r} | {a['omega_norm_mean']:.2f} / {b['omega_norm_mean']:.2f} | {a['selected']} / "
                       f"{b['selected']} | {a['clipped']} / {b['clipped']} | "
                       + " / ".join(", ".join(f"{v:.4f}" for v in x["phi_max"]) for x in (a, b)) + " | "
                       + " / ".join(", ".join(f"{v:.2f}" for v in x["noise_std"]) for x in (a, b)) + " | "
                       f"{np.mean(a['broadcast_norms']):.1f} / {np.mean(b['broadcast_norms']):.1f} |")
        out.append("")
    return "\n".join(out)
