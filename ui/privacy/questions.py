"""The Privacy accountant page's computed answers: the inverse questions and the paper's Fig. 2 table.

Both run through :mod:`ui.kit.run_loop` (stoppable, priced); the page keeps the
controls and draws what these return.
"""

from __future__ import annotations

import streamlit as st

from engine.limits import accountant_cost
from engine.privacy import ACCOUNTANT_LABELS, ACCOUNTANTS, default_delta, supports
from engine.privacy.paper import FIG2_EPSILON
from engine.validation import ConfigError
from ui.kit.cached import cached_calibrate_q, cached_calibrate_steps, cached_calibrate_z, cached_epsilon
from ui.kit.errors import ErrorSlots
from ui.kit.run_loop import LiveLine, RunStatus, checked, run_live
from ui.kit.compute import compute

MAX_STEPS = 100_000
SOLVE_LABELS = {"z": "noise multiplier z", "q": "sampling probability q", "steps": "number of releases T"}
# DP-FTS-DE paper, Fig. 2 (c, d): N = 200, delta = 200^-1.1, T = 40, moments accountant.
PAPER_FIG2 = [dict(q=row.q, z=row.z, paper=row.epsilon) for row in FIG2_EPSILON]


def _answer(setting: dict, solve: str, target: float, acc: str) -> dict:
    """One accountant's answer row: the knob that meets ``target`` and the epsilon it reaches."""
    p = setting
    common = dict(sampling=p["sampling"], n_agents=p["n_agents"])
    label = ACCOUNTANT_LABELS[acc]
    if not supports(acc, p["sampling"]):
        return {"accountant": label, "answer": "n/a (no fixed-size sampling)"}
    try:
        if solve == "z":
            answer = cached_calibrate_z(target, p["q"], p["steps"], p["delta"], acc, **common)
            reached = cached_epsilon(p["q"], answer, p["steps"], p["delta"], acc, **common)
            text = f"z = {answer:.4f}"
        elif solve == "q":
            answer = cached_calibrate_q(target, p["z"], p["steps"], p["delta"], acc, **common)
            reached = cached_epsilon(answer, p["z"], p["steps"], p["delta"], acc, **common)
            text = f"q = {answer:.4f}"
        else:
            answer = cached_calibrate_steps(target, p["q"], p["z"], p["delta"], acc, **common)
            reached = cached_epsilon(p["q"], p["z"], answer, p["delta"], acc, **common) if answer else 0.0
            text = f"T = {answer}" if answer else "not even one release fits"
    except ConfigError as err:
        return {"accountant": label, "answer": str(err)}
    return {"accountant": label, "answer": text, "ε reached": round(float(reached), 4)}


def solve_live(setting: dict, solve: str, target: float, chosen: list[str], errors: ErrorSlots) -> dict | None:
    """Answer the inverse question for every chosen accountant as a live run (priced, stoppable).

    Returns ``{"rows", "question"}`` (the rows that finished when stopped), or
    None when the run was refused.
    """
    def rows():
        done = []
        for acc in chosen:
            done.append(_answer(setting, solve, target, acc))
            yield list(done)

    largest = MAX_STEPS if solve == "steps" else setting["steps"]
    try:
        price = checked(accountant_cost(largest, chosen, curve=False, calibrations=1, z=setting["z"]),
                        what="This calibration")
    except ConfigError as err:
        errors.show(err)
        return None
    run = run_live("acc_inverse_run", [LiveLine("solve", rows, len(chosen))], values={},
                   draw=lambda run, suffix: None, progress_slot=st.empty(), errors=errors,
                   price=price, starting="Calibrating (a few seconds for RDP and PLD the first time) ...",
                   progress=lambda latest, counts: (counts[0] / max(len(chosen), 1),
                                                    f"{counts[0]} of {len(chosen)} accountants"))
    if run is None or not run.results or run.results[0] is None:
        return None
    question = f"{SOLVE_LABELS[solve]} for ε = {target:g} (δ = {setting['delta']:.3g})"
    if run.status is not RunStatus.DONE:
        question += f" ({run.message or 'stopped'}; the rows that finished)"
    return dict(rows=run.results[0], question=question)


def _fig2_rows() -> list[dict]:
    paper_delta = default_delta(200, "paper")
    return [dict({"q": row["q"], "z": row["z"], "paper (moments accountant)": row["paper"]},
                 **{f"ours: {ACCOUNTANT_LABELS[acc]}": cached_epsilon(row["q"], row["z"], 40, paper_delta, acc)
                    for acc in ACCOUNTANTS}) for row in PAPER_FIG2]


def fig2_table() -> list[dict]:
    """The paper's Fig. 2 settings with our three accountants' epsilon (delta = 200^-1.1, T = 40), stoppable."""
    return compute(_fig2_rows)
