"""How the dashboard shows a reproduction of the DP-FTS-DE paper: curves, checkpoints, verdicts, and preset notes.

Everything here draws data the engine produced (:mod:`engine.reproduce`): the
stored 100-run reproduction (:mod:`engine.reproduce.stored`) or a small run
made on the Paper reproduction page, both in the command line's JSON shape
(``PartResult.to_json()``). A paper preset on another page calls
:func:`preset_note` to say, next to its chart, what the stored runs make of
the paper's claims about its figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.reproduce.report import deciding_comparison
from engine.reproduce.investigations import investigation
from engine.reproduce.stored import figure_name, figure_verdicts
from ui.kit.charts import show
from ui.reproduction.ablations import show_ablations
from ui.fbo.figures import convergence_figure
from ui.kit.figure_style import Line
from ui.kit.routes import REPRODUCTION, page_link
from ui.kit.tables import MISSING

# Verdict cells are coloured (not marked with emoji: a browser without an emoji font draws boxes).
VERDICT_COLOURS = {"holds": "#d8f0dc", "not significant": "#eeeeee", "reversed": "#f8d7d5", "differs": "#f8e7c8",
                   "inconsistent": "#e8d8f0"}
# Below this many runs a standard error rests on too few numbers for the 2-standard-error rule to be read as a
# test (with 2 runs it is one number's spread): the page says so above the verdicts.
FEW_RUNS = 20


def setting_lines(payload: dict, keys) -> list[Line]:
    """The mean curve of each setting in ``keys`` with its standard error over runs (TS as the baseline)."""
    lines = []
    for setting in payload["settings"]:
        if setting["key"] not in keys:
            continue
        err = np.array([np.nan if v is None else v for v in setting["curve_stderr"]], dtype=float)
        y = np.asarray(setting["curve"], dtype=float)
        lines.append(Line(setting["label"], np.arange(y.size), y, err, baseline=setting["key"] == "ts"))
    return lines


def curves_figure(payload: dict, keys, *, figure: str | None = None) -> go.Figure:
    what = f"{figure_name(figure)}'s lines" if figure else "every setting"
    return convergence_figure(setting_lines(payload, keys), metric_label=payload["metric"],
                              total_iterations=len(payload["settings"][0]["curve"]) - 1,
                              title=f"{what}: mean {payload['metric']} over agents and {payload['runs']} runs "
                                    "(± one s.e. over runs)")


def checkpoint_table(payload: dict) -> pd.DataFrame:
    """One row per setting: ε after T, and the mean (s.e. over runs) at each checkpoint."""
    rows = []
    for setting in payload["settings"]:
        clipped = setting.get("clipped_percent")
        row = {"setting": setting["label"],
               "ε after T": f"{setting['epsilon']:.2f}" if setting["epsilon"] is not None else MISSING,
               "clipped %": f"{clipped:.2f}" if clipped is not None else MISSING}
        for t in payload["checkpoints"]:
            point = setting["checkpoints"].get(str(t))
            row[f"t = {t}"] = (f"{point['mean']:.4f} ({point['stderr']:.4f})"
                               if point is not None and np.isfinite(point["stderr"] or np.nan) else MISSING)
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_columns(claim: dict) -> dict:
    """The columns every verdict table shows beside the verdict: why (the rule's reason), what a "not significant"
    verdict's evidence says, the replication's difference, the power of the whole rule (the difference it would
    confirm with 80 % chance; for sameness, its chance of holding when the settings are alike, and the margin with
    its source), the test's units and the claim's data."""
    rep = claim.get("replication") or {}
    power = claim.get("power") or {}
    numbers = claim["numbers"]
    margin = numbers.get("equivalence_margin")
    chosen = deciding_comparison(numbers)
    if margin is not None:
        chance = power.get("at_zero")
        detect = (f"margin ±{margin:.4f} ({numbers.get('margin_source', 'registered')}); P(holds) if alike "
                  + (MISSING if chance is None else f"{chance:.2f}"))
    else:
        detectable = power.get("detectable")
        detect = MISSING if detectable is None else f"{detectable:.4f}"
        if power.get("at_paper") is not None:
            detect += f"; P(holds) at the paper's effect {power['at_paper']:.2f}"
    units = chosen.get("units")
    unit = "objective draws" if chosen.get("unit") == "objective draw" else "runs"
    return {"why": claim.get("why", MISSING),
            "evidence": claim.get("reading") or ("" if claim.get("verdict") != "not significant" else MISSING),
            "replication": (f"{rep['difference']:+.4f} ± {rep['stderr']:.4f}" if rep.get("stderr") is not None
                            else MISSING),
            "rule could detect (80 %)": detect,
            "units": MISSING if units is None else f"{units} {unit}",
            "data": claim.get("data_kind", MISSING) + (" · by construction" if claim.get("by_construction") else "")}


def verdict_table(payload: dict) -> pd.DataFrame:
    """One row per claim: our verdict, the claim and where the paper makes it, and the paired numbers."""
    labels = {s["key"]: s["label"] for s in payload["settings"]}
    rows = []
    for claim in payload["claims"]:
        n = deciding_comparison(claim["numbers"])
        best = f" (best: {labels.get(n['better'], n['better'])})" if "comparisons" in claim["numbers"] else ""
        compared = ("mean over t = 1..T" if n["at"] == "curve" else f"at t = {n['at']}"
                    if isinstance(n["at"], int) else f"{n['at']}: ours {n['better_mean']:.2f}, against "
                    f"{n['worse_mean']:.2f}")
        rows.append({"#": len(rows) + 1, "verdict": claim["verdict"], "the paper claims": claim["claim"],
                     "where": claim["source"],
                     "compared": compared, "difference ± s.e.": f"{n['difference']:+.4f} ± {n['stderr']:.4f}{best}",
                     "z": f"{n['z']:+.1f}" if n["z"] is not None else MISSING, **verdict_columns(claim)})
    return pd.DataFrame(rows)


def investigations(payload: dict) -> list[tuple[list[int], str]]:
    """Each investigation of the claims that do not hold, once, with the rows of the verdict table it covers."""
    notes: dict[str, list[int]] = {}
    for row, claim in enumerate(payload["claims"], start=1):
        note = investigation(claim["claim"], claim["verdict"])
        if note:
            notes.setdefault(note, []).append(row)
    return [(rows, note) for note, rows in notes.items()]


def show_investigations(payload: dict) -> None:
    for rows, note in investigations(payload):
        which = f"claim {rows[0]}" if len(rows) == 1 else "claims " + ", ".join(map(str, rows[:-1])) + \
            f" and {rows[-1]}"
        st.markdown(f"**Investigated ({which} of the table, #):** {note}")
        show_ablations([payload["claims"][row - 1]["claim"] for row in rows])


def coloured(table: pd.DataFrame):
    return table.style.map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, 'white')}", subset=["verdict"])


def show_part(payload: dict, part, *, key: str, source: str) -> None:
    """A part's curves (chosen by the paper's figure), its checkpoint table and its verdicts."""
    figures = list(part.figures)
    labels = {f: f"{figure_name(f)}'s lines" for f in figures} | {"all": "every setting"}
    choice = st.segmented_control("lines to draw", figures + ["all"], default=figures[-1], format_func=labels.get,
                                  key=f"{key}_lines", help="The settings the paper's claims about each figure "
                                                           "compare.") or figures[-1]
    keys = part.settings_of(choice) if choice != "all" else [s.key for s in part.settings]
    show(curves_figure(payload, keys, figure=None if choice == "all" else choice), key=f"{key}_curves",
         about=f"{source}: each line is one setting's mean {payload['metric']} after every iteration (lower is "
               "better), averaged over agents and runs, with a band of one standard error over runs (TS dashed).")
    st.markdown(f"**What the paper claims, and what {payload['runs']} paired runs say.** A claim *holds* (or is "
                "*reversed*) when its discovery runs are decisive after the false discovery rate over the paper's "
                "claims and a replication on fresh runs (and, for generated functions, fresh functions) confirms "
                "it one-sided; *not significant* otherwise, with what the evidence says (\"evidence\"). The "
                f"difference is the claimed loser's {payload['metric']} minus the claimed winner's (positive: as "
                "the paper says), at the iteration the claim is about or averaged over the whole run "
                "(\"compared\"); on generated functions the test is over objective draws (\"units\").")
    if payload["runs"] < FEW_RUNS:
        st.warning(f"Only {payload['runs']} runs per setting: each standard error rests on {payload['runs']} numbers, "
                   "so these verdicts can change from one seed to the next. Read them as a demonstration; the "
                   "stored 100-run verdicts are the result.", icon=":material/warning:")
    st.table(coloured(verdict_table(payload)), hide_index=True)
    show_investigations(payload)
    with st.expander(f"Every setting at the checkpoints: mean {payload['metric']} (standard error over runs)"):
        checkpoints = checkpoint_table(payload)
        st.dataframe(checkpoints, hide_index=True, height=35 * (len(checkpoints) + 1) + 3)


def paper_note(paper: str, figure: str | None, where=None) -> None:
    """What the stored reproduction of ``paper`` (dp-hype, po-gp-ucb) says about ``figure`` ("Fig. 5")."""
    from engine.reproduce.stored_papers import anchor, figure_note

    note = figure_note(paper, figure) if figure else None
    if note is None:
        return
    box = (where if where is not None else st).container()
    (box.info if note.all_hold else box.warning)(f"**Against the paper: {note.headline}** {note.details}",
                                                 icon=":material/fact_check:")
    with box:
        st.markdown(f"[Every verdict about {figure} on the Paper reproduction page]"
                    f"({REPRODUCTION.url_path}?paper={paper}#{anchor(paper, figure)})")


def stored_data_figure(paper: str, figure: str | None, where=None, payload: dict | None = None,
                       setting: dict | None = None) -> None:
    """The stored reproduction's data figure of ``figure`` when it has one, else nothing. DP-HYPE: Figs. 7-8, the
    label mix of the first clients under the Dirichlet split; Figs. 4 and 9, the candidates' test accuracies;
    Figs. 5, 6, 10 and 11, the test accuracy against epsilon of the cell of ``setting`` (a preset's data set,
    clients and alpha; default: the page preset's, engine.reproduce.dp_hype_figures.FIGURE_CELLS)."""
    from engine.reproduce.dp_hype_figures import CURVE_FIGURES, HISTOGRAM_FIGURES
    from engine.reproduce.dp_hype_labels import FIGURES
    from engine.reproduce.stored_papers import stored_payload

    if paper != "dp-hype" or figure not in set(FIGURES.values()) | set(CURVE_FIGURES) | set(HISTOGRAM_FIGURES):
        return
    parts = (payload or stored_payload(paper) or {}).get("parts") or {}
    key = f"{paper}_{figure}".replace(" ", "").replace(".", "")
    if figure in CURVE_FIGURES or figure in HISTOGRAM_FIGURES:
        if parts.get("data"):
            _stored_accuracy(parts["data"], figure, key, where, setting)
        return
    part = parts.get("labels")
    if not part:
        return
    from ui.hype.figures import label_distribution_figure

    for dataset in (d for d, f in FIGURES.items() if f == figure):
        cells = [c for c in part["cells"] if c["dataset"] == dataset]
        if cells:
            show(label_distribution_figure(cells, f"{figure}: {dataset} stand-in, {part['shown_clients']} of "
                                                  f"{part['clients']} clients (run 0)"),
                 key=f"{key}_{dataset}_labels", where=where,
                 about="Each bar is one client's local data set (training and validation), split into its labels: "
                       "the engine's own Dirichlet split, the same one its score tables train on.")


def _stored_accuracy(part: dict, figure: str, key: str, where, setting: dict | None) -> None:
    from engine.reproduce.dp_hype_figures import FIGURE_CELLS, HISTOGRAM_FIGURES, candidate_histograms, \
        cell_curve, find_cell
    from ui.hype.figures import accuracy_figure, candidate_histogram_figure

    runs = f"{part['runs']} runs, {part.get('training_label', '')}"
    if figure in HISTOGRAM_FIGURES:
        dataset = (setting or {}).get("dataset")
        where_cells = "n = 100, iid" if figure == "Fig. 4" else f"n = 50, {dataset or 'mnist-like'}"
        show(candidate_histogram_figure(candidate_histograms(part, figure, dataset if figure == "Fig. 9" else None),
                                        f"{figure} (stored, {where_cells}): the 100 candidates' test accuracies"),
             key=f"{key}_hist", where=where,
             about=f"How many of the 100 candidates of Table III reach each test accuracy after federated averaging, "
                   f"mean over the stored reproduction's {runs} (the paper's data sets replaced by stand-ins, and "
                   f"scikit-learn's digits).")
        return
    dataset, clients, alpha = FIGURE_CELLS[figure]
    if setting and setting.get("mode") == "data":
        dataset, clients = setting.get("dataset", dataset), setting.get("clients", clients)
        alpha = None if setting.get("split") == "iid" else setting.get("alpha", alpha)
    cell = find_cell(part, dataset, clients, alpha)
    if cell is None:
        return
    curve = cell_curve(cell)
    split = "iid" if cell["alpha"] is None else f"α = {cell['alpha']:g}"
    show(accuracy_figure(curve["epsilons"], curve["hype"], curve["opt"], curve["randguess"], opt_ci=curve["opt_ci"],
                         randguess_ci=curve["randguess_ci"],
                         title=f"{figure} (stored): {dataset}, n = {clients}, {split}, {curve['runs']} runs"),
         key=f"{key}_curve", where=where,
         about=f"The stored reproduction's test accuracy of the chosen candidate against ε (mean and 95 % interval "
               f"over {runs}), with OPT and RANDGUESS.")


def preset_note(figure: str, where=None) -> None:
    """What the stored 100-run reproduction says about ``figure``'s claims, in two lines with the numbers."""
    verdicts = figure_verdicts(figure.split("-")[0])   # "fig5-equal": one line of Fig. 5
    if verdicts is None:
        return
    box = (where if where is not None else st).container()
    text = f"**Against the paper: {verdicts.headline}** {verdicts.details}"
    if verdicts.all_hold:
        box.info(text, icon=":material/fact_check:")
    else:
        box.warning(text, icon=":material/fact_check:")
    with box:
        page_link(REPRODUCTION, "See the curves and every verdict on the Paper reproduction page",
                  icon=":material/arrow_forward:", query_params={"part": verdicts.part})


def show_fts_paper(stored: dict | None) -> None:
    """The stored reproduction of the FTS paper: per part its curves (when they are curves), verdicts and
    checkpoints, and the figures that cannot be reproduced here."""
    if stored is None:
        st.info("No stored FTS reproduction is installed here (data/reproduction/fts.json); "
                "`python -m engine reproduce fts` makes one.", icon=":material/info:")
        return
    output, provenance = stored["output"], stored["provenance"]
    st.caption(f"Stored with `{provenance.get('command', 'python -m engine reproduce fts')}`"
               + (f" on {provenance['date']}" if provenance.get("date") else "")
               + (f" ({provenance['note']})" if provenance.get("note") else "")
               + f". Run times measured on {output.get('machine', 'this machine')}.")
    for name, payload in output["parts"].items():
        with st.expander(payload["title"], expanded=name == "synthetic"):
            keys = [s["key"] for s in payload["settings"] if not s["key"].startswith(("time", "growth"))
                    and not s["key"].endswith("fts time")]
            show(curves_figure(payload, keys), key=f"fts_{name}_curves",
                 about=f"Each line: mean {payload['metric']} over targets and {payload['runs']} runs, ± one s.e.")
            st.table(coloured(verdict_table(payload)), hide_index=True)
            show_investigations(payload)
            st.dataframe(checkpoint_table(payload), hide_index=True)
    rows = [{"figure": figure_name(item["figure"]), "the paper claims": item["claim"], "why not here": item["reason"]}
            for item in output.get("not_reproducible", [])]
    if rows:
        st.markdown("**Not reproducible here**")
        st.table(pd.DataFrame(rows), hide_index=True)
