"""The ablation table under an investigation: each of our deviations, the verdict with it and without it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.reproduce.ablation_tables import rows_for


def _cell(numbers: dict, again: dict | None = None) -> str:
    """The side's verdict (the one rule over the ablation family), its discovery numbers and its replication's."""
    from engine.reproduce.stats import numbers_text, verdict_text

    if numbers.get("ratio") is not None:
        return f"{verdict_text(numbers)} (ours {numbers['better_mean']:.2f} %)"
    return f"{verdict_text(numbers)} ({numbers_text(numbers)}" + (f"; again {numbers_text(again)})" if again else ")")


def ablation_table(claims) -> pd.DataFrame | None:
    """One row per stored ablation of these claims (None when there is none)."""
    rows = rows_for(claims)
    if not rows:
        return None
    # Which ablation and the verdicts first: a reader sees them without scrolling the table sideways; the long
    # texts of the two ways come last.
    again = [row.get("replication") or {} for row in rows]
    return pd.DataFrame([{"claim": row["claim"], "ablation": row["ablation"],
                          "verdict with it": _cell(row["with"], rep.get("with")),
                          "verdict without it": _cell(row["without"], rep.get("without")),
                          "runs": row["runs"] or "accounting",
                          "conclusion": row["conclusion"], "our deviation": row["deviation"],
                          "the authors' way": row["authors"]} for row, rep in zip(rows, again)])


def show_ablations(claims) -> None:
    table = ablation_table(claims)
    if table is not None:
        st.markdown("**Ablation: each deviation of ours switched to what the authors did, same seeds, both sides "
                    "judged by the same rule as the paper's claims and run again on the replication seed set "
                    "(data/reproduction/ablations.json).**")
        st.dataframe(table, hide_index=True, column_config={"claim": st.column_config.TextColumn(width="medium")})
