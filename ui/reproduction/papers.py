"""The Paper reproduction page's front: every stored paper named, the paper x figure summary, and one paper's
figures (DP-HYPE, PO-GP-UCB) in its own order, each figure's claims in full under a collapsed section."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.reproduce.papers import BY_CONSTRUCTION, IDENTITIES, OTHER_DATA, data_label
from engine.reproduce.power import READINGS
from engine.reproduce.report import deciding_comparison
from engine.reproduce.tallies import tally_rows
from ui.kit.routes import REPRODUCTION
from ui.kit.tables import MISSING
from ui.reproduction.view import coloured, verdict_columns

# The papers in the order the page offers them, by the name the command line takes.
PAPER_TITLES = {"dp-fts-de": "DP-FTS-DE", "fts": "FTS", "dp-hype": "DP-HYPE", "po-gp-ucb": "PO-GP-UCB"}
PAPER_LABELS = {"dp-fts-de": "DP-FTS-DE (Dai et al. 2021)", "fts": "FTS (Dai, Low and Jaillet 2020)",
                "dp-hype": "DP-HYPE (Liebenow, Peinemann and Mohammadi)",
                "po-gp-ucb": "PO-GP-UCB (private outsourced BO)"}


def names(papers) -> str:
    """"DP-FTS-DE, FTS, DP-HYPE and PO-GP-UCB" for the papers given (in the page's order)."""
    titles = [PAPER_TITLES[p] for p in PAPER_TITLES if p in set(papers)]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def page_title(papers) -> str:
    return f"Paper reproduction: {names(papers)}, their claims judged over runs"


def figure_link(row: dict) -> str:
    """The page with the row's paper (and DP-FTS-DE's part) chosen, at the row's figure."""
    query = f"paper={row['paper']}" + (f"&part={row['part']}" if row["paper"] == "dp-fts-de" else "")
    return f"{REPRODUCTION.url_path}?{query}#{row['anchor']}"


TALLY = (("hold", "holds"), ("not significant", "not significant"), ("reversed", "reversed"),
         ("inconsistent", "inconsistent"), ("by construction", BY_CONSTRUCTION), ("identities", IDENTITIES),
         ("other data (beside)", OTHER_DATA))
SHORT_KINDS = {"paper": "paper's data", "stand-in": "stand-in", "generated": "generated",
               "other": "other data (beside)", "identity": "identities (no data)"}
SHORT_READINGS = {"leans the paper's way": "n.s., leans the paper's way", "leans against it": "n.s., leans against",
                  "underpowered": "n.s., underpowered", "not tested": "n.s., not tested (no margin)"}


def kind_rows(tallies: dict) -> pd.DataFrame:
    """One row per paper and data kind (never added up across kinds): every claim counted once, its verdict, and
    "not significant" split by what the evidence says (leans the paper's way, against it, underpowered, not
    tested); identities (exact computations, no data) in rows of their own."""
    out = []
    for row in tally_rows({p: tallies[p] for p in PAPER_TITLES if p in tallies}):
        out.append({"paper": PAPER_TITLES[row["paper"]], "data": SHORT_KINDS[row["data"]], "claims": row["claims"],
                    "hold": row["holds"], "reversed": row["reversed"], "inconsistent": row["inconsistent"],
                    **{SHORT_READINGS[r]: row[f"n.s.: {r}"] for r in READINGS},
                    "by construction": row[BY_CONSTRUCTION]})
    return pd.DataFrame(out)


def show_summary(rows: list[dict], tallies: dict | None = None) -> None:
    """Every stored paper's verdicts per data kind, then the paper x figure table, each row linking to its claims."""
    if not rows:
        return
    if tallies:
        st.table(kind_rows(tallies), hide_index=True)
    table = pd.DataFrame([{"paper": PAPER_TITLES.get(r["paper"], r["paper"]), "figure": r["figure"],
                           "data": data_label(r["kinds"]), "claims": r["claims"],
                           **{label: r[key] for label, key in TALLY}, "see": figure_link(r)} for r in rows])
    with st.expander(f"Every figure and table of every paper ({len(table)} rows), with a link to its claims"):
        st.dataframe(table, hide_index=True, height=min(35 * (len(table) + 1) + 3, 560), column_config={
            "see": st.column_config.LinkColumn("see", display_text="the claims", help="Open the figure's claims")})


def needs_conclusion(row: dict) -> bool:
    """A figure with a tallied claim that does not hold needs its investigation's conclusion."""
    return bool(row["not significant"] or row["reversed"] or row["inconsistent"])


def _runs(value) -> str:
    return MISSING if value is None else f"{int(value)}"


def claims_table(claims: list[dict]) -> pd.DataFrame:
    """One row per claim, its text in full: the verdict, the deciding difference and the runs it rests on."""
    rows = []
    for claim in claims:
        n = deciding_comparison(claim["numbers"])
        difference = n.get("difference")
        rows.append({"verdict": claim["verdict"], "the paper claims": claim["claim"],
                     "difference ± s.e.": MISSING if difference is None else
                     f"{difference:+.4f} ± {n.get('stderr', float('nan')):.4f}",
                     **verdict_columns(claim), "runs": _runs(claim["numbers"].get("runs")),
                     "where": claim["source"]})
    return pd.DataFrame(rows)


def show_claims(paper: str, payload: dict) -> None:
    """Every stored claim of ``paper``, its figures in the paper's order: a heading under the anchor the summary
    links to, the counts, and a collapsed section with the figure's data, its investigation (once) and claims."""
    from engine.reproduce.conclusions import conclusion
    from engine.reproduce.stored_papers import anchor, claims_of, summary
    from ui.reproduction.ablations import show_ablations
    from ui.reproduction.view import stored_data_figure

    for row in (r for r in summary() if r["paper"] == paper):
        figure = row["figure"]
        st.subheader(f"{PAPER_TITLES.get(paper, paper)}, {figure}", anchor=anchor(paper, figure))
        with st.expander(f"{row['claims']} claims: {row['holds']} hold, {row['not significant']} not significant, "
                         f"{row['reversed']} reversed, {row['inconsistent']} inconsistent"
                         + (f", {row[BY_CONSTRUCTION]} by construction" if row[BY_CONSTRUCTION] else "")
                         + (f", {row[IDENTITIES]} identities" if row[IDENTITIES] else "")
                         + (f", {row[OTHER_DATA]} on other data" if row[OTHER_DATA] else "")
                         + (" (and the stored figure)" if paper == "dp-hype" else ""), expanded=False):
            if conclusion(paper, figure) and needs_conclusion(row):
                st.markdown("**Investigated.** " + conclusion(paper, figure))
                show_ablations([claim["claim"] for claim in claims_of(paper, figure)])
            stored_data_figure(paper, figure, payload=payload)
            training = payload["parts"].get(row["part"], {}).get("training_label")
            if training:
                st.caption(f"Score tables of the stand-ins: {training}.")
            st.table(coloured(claims_table(claims_of(paper, figure))), hide_index=True)


def show_beside(paper: str) -> None:
    """``paper``'s parts on a data set it did not use (DP-HYPE's Fashion-MNIST), after its own figures: what the
    data and the run were, and every claim, counted beside the tally above, not in it."""
    from engine.reproduce.stored_papers import stored_beside

    for name, part in stored_beside(paper).items():
        st.subheader(f"{PAPER_TITLES.get(paper, paper)} on other data: {part.get('title', name)}",
                     anchor=f"other-data-{name}")
        claims = part.get("claims", [])
        holds = sum(c["verdict"] == "holds" for c in claims)
        training = part.get("training_label", "training as stored")
        replicated = any(c.get("replication") for c in claims)
        st.caption(f"A real data set the paper did not use, reported beside its tally and not in it: "
                   f"{len(claims)} claims over {part.get('runs')} runs ({training}); {holds} hold. Its decisive "
                   + ("claims were run again on fresh seeds." if replicated
                      else "claims have not been replicated on fresh seeds (they say \"discovery only\")."))
        with st.expander(f"{len(claims)} claims on {name}", expanded=False):
            st.table(coloured(claims_table(claims)), hide_index=True)
