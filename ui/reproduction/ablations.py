"""The ablation table under an investigation: each of our deviations, the verdict with it and without it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.reproduce.ablation_tables import rows_for


def _cell(numbers: dict) -> str:
    if numbers.get("ratio") is not None:
        return f"{numbers['verdict']} (ours {numbers['better_mean']:.2f} %)"
    if not numbers.get("stderr"):
        return f"{numbers['verdict']} ({numbers['difference']:+.2f})"
    return f"{numbers['verdict']} ({numbers['difference']:+.4f} ± {numbers['stderr']:.4f})"


def ablation_table(claims) -> pd.DataFrame | None:
    """One row per stored ablation of these claims (None when there is none)."""
    rows = rows_for(claims)
    if not rows:
        return None
    # Which ablation and the verdicts first: a reader sees them without scrolling the table sideways; the long
    # texts of the two ways come last.
    return pd.DataFrame([{"claim": row["claim"], "ablation": row["ablation"], "verdict with it": _cell(row["with"]),
                          "verdict without it": _cell(row["without"]), "runs": row["runs"] or "accounting",
                          "conclusion": row["conclusion"], "our deviation": row["deviation"],
                          "the authors' way": row["authors"]} for row in rows])


def show_ablations(claims) -> None:
    table = ablation_table(claims)
    if table is not None:
        st.markdown("**Ablation: each deviation of ours switched to what the authors did, same seeds "
                    "(data/reproduction/ablations.json).**")
        st.dataframe(table, hide_index=True, column_config={"claim": st.column_config.TextColumn(width="medium")})
