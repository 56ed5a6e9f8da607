"""Trade-off explorer: sweep one or two parameters and see the whole privacy-utility frontier."""

from __future__ import annotations

from ui.kit.routes import use_the_products_menu

use_the_products_menu()   # before the engine loads (see ui/kit/routes.py)


import numpy as np
import streamlit as st

from engine.cancel import Cancelled
from engine.hosting import dask_scheduler, is_hosted
from engine.objectives import dataset_label
from engine.objectives.registry import data_status
from engine.paths import cache_dir
from engine.sweep import SweepSummary, get_adapter, iter_sweep, spec_cost
from engine.limits import SHOWN_ITEMS, TEXT_CHARS, short_text
from engine.sweep.analysis import (ALL_PAIRS_MAX_SETTINGS, is_full_grid)
from engine.validation import ConfigError
from ui.sweep import controls
from ui.sweep.analysis import open_upload, result_facts, table_analysis
from ui.kit.charts import show
from ui.kit.errors import ErrorSlots
from ui.kit.text import plain
from ui.kit.run_loop import LiveLine, RunStatus, checked, run_live, show_failure
from ui.reproduction.view import preset_note
from ui.kit.opening import open_page
from ui.kit.routes import TRADEOFF, page_link
from ui.sweep.figures import frontier_figure, heatmap_figure, settings_table
from ui.kit.table_build import missing_data
from ui.kit.tables import readable

opening = open_page(TRADEOFF, controls.init)

# ---------------------------------------------------------------- header
st.title("Privacy-utility trade-off explorer")
st.write(
    "One run shows one point; choosing a privacy budget needs the whole **frontier**. Pick a configuration, the "
    "one or two parameters to vary and their values, and run the sweep: every setting becomes one point "
    "(privacy loss ε against utility, with standard errors over runs), the **Pareto-optimal** settings (no other "
    "setting is both more private and better) are joined and highlighted, and non-private methods appear as "
    "reference levels. Click a point to open that configuration on its own page.")
opening.note()

build_tab, upload_tab = st.tabs(["Build and run a sweep", "Open a saved sweep table"])

# ---------------------------------------------------------------- build a sweep
with build_tab:
    slots = ErrorSlots()
    controls.builder(slots)
values = controls.current()
executor = values["executor"]
workers = int(values["workers"]) if executor != "local" else None

with build_tab:
    spec, cells, price = None, [], None
    try:
        spec = controls.spec_of(values)
        cells = spec.cells(get_adapter(spec.tool))
        price = checked(spec_cost(spec, executor=executor, workers=workers, cells=cells), what="This sweep")
    except ConfigError as err:
        slots.show(err)
        spec = None
    dataset = cells[0].params.get("dataset") if spec is not None and spec.tool == "fbo" and cells else None
    data = data_status(dataset) if dataset else None
    if data is not None and not data.available:
        missing_data(data, dataset_label(dataset).split(":")[0])
    if spec is not None:
        settings = len({(c.role, c.setting) for c in cells if c.role == "setting"})
        refs = len({c.setting for c in cells if c.role == "reference"})
        st.caption(f"{settings} settings" + (f" + {refs} reference{'s' if refs > 1 else ''}" if refs else "")
                   + f" = {len(cells)} cells x {spec.runs} runs = {len(cells) * spec.runs} table rows. "
                   "Finished cells are kept on disk: running the same sweep again only runs what is missing.")
    shown_preset = (st.session_state.get(controls.RESULT_KEY) or {}).get("preset")
    if values["preset"] != controls.CUSTOM and values["preset"] != shown_preset:
        preset_note(values["preset"])   # a paper figure: what our 100-run reproduction says (nothing if no claims)
    run_clicked = st.button("Run sweep", type="primary", icon=":material/play_arrow:", key="sw_run",
                            disabled=spec is None or (data is not None and not data.available))
    run_errors = ErrorSlots()
    run_errors.fallback()
    bar = st.empty()
    if run_clicked and spec is not None:
        out = cache_dir() / "sweeps" / f"{spec.tool}-{spec.key()}.parquet"
        saved_at = controls.saved_at(out)   # cells an earlier session finished are reused: say so with the results
        scheduler = dask_scheduler() if executor == "dask" else None     # the host's, never a visitor's
        bar.progress(0.0, text="Starting the sweep ...")
        sweep = LiveLine("sweep", lambda: iter_sweep(spec, out, executor=executor, workers=workers,
                                                     scheduler=scheduler), len(cells) + 1)
        run = run_live(controls.RUN_KEY, [sweep], values=values, draw=lambda run, suffix: None, progress_slot=bar,
                       errors=run_errors, price=price, slots=workers or 1,
                       starting="Starting the sweep ...",
                       progress=lambda latest, counts: (1.0, "Writing the table ...")
                       if isinstance(latest[0], SweepSummary) else (latest[0].fraction, latest[0].line()))
        if run is not None and run.status is RunStatus.FAILED:
            show_failure(run, st)
        elif run is not None and run.status is RunStatus.STOPPED:
            st.warning(f"{plain(run.message or 'Stopped')}. The cells that finished are saved and drawn below: run "
                       "the same sweep again to compute only the rest.", icon=":material/pause_circle:")
            controls.keep_finished(spec, out, values["preset"], dataset)
        elif run is not None:
            summary = run.results[0]
            bar.progress(1.0, text=f"Done: {summary.cells} cells, {summary.rows} rows in {summary.seconds:.1f} s"
                         + (f" ({summary.cells_reused} cells from an earlier run)"
                            if summary.cells_reused and not is_hosted() else ""))
            st.session_state[controls.RESULT_KEY] = dict(
                table=summary.table, label=spec.describe(get_adapter(spec.tool).label), source="run",
                failures=summary.failed, dataset=dataset, preset=values["preset"],
                reused=(summary.cells_reused, summary.cells, saved_at) if summary.cells_reused else None)

# ---------------------------------------------------------------- open a saved table
with upload_tab:
    upload = st.file_uploader("a sweep table saved from this page or written by python -m engine sweep",
                              type=["csv", "parquet"], key="sw_upload")
    if upload is not None and st.session_state.get("sw_upload_id") != upload.file_id:
        try:
            limit_mb = float(st.get_option("server.maxUploadSize"))
            data = upload.getvalue()
            # Read and analysed in a walled worker, which sends back what the page shows, never the table.
            facts, opened = open_upload(data, upload.name, int(limit_mb * 2**20))
        except ConfigError as err:
            st.error(plain(str(err)), icon=":material/error:")
        else:
            st.session_state["sw_upload_id"] = upload.file_id
            st.session_state[controls.RESULT_KEY] = dict(
                table=None, label=f"Uploaded table {upload.name}", source="upload", dataset=None, **opened,
                failures=facts.failures)



# ---------------------------------------------------------------- results
def show_results(result: dict) -> None:
    facts = result_facts(result)            # an upload's came from its worker: the server holds no table
    st.divider()
    st.subheader(plain(result["label"]))
    if facts.shortened:
        st.caption(f"{facts.shortened:,} texts of this table are longer than {TEXT_CHARS} characters: the page shows "
                   "their start and a short code that tells them apart (your file keeps them whole).")
    if not facts.rows:
        st.info("The sweep produced no rows.")
        return
    choices = facts.choices                 # DP-HYPE data mode also records the chosen candidate's test accuracy
    chosen = st.radio("metric", tuple(choices), format_func=choices.get, horizontal=True, key="sw_metric",
                      help="What the frontier, the heatmap and the table show, mean ± s.e. over runs.") \
        if len(choices) > 1 else "utility"
    chosen = chosen if chosen in choices else "utility"
    try:
        analysis = table_analysis(result, chosen)   # once per table and metric; an upload's behind the wall
    except (ConfigError, Cancelled) as err:
        st.session_state.pop(controls.RESULT_KEY, None)     # the same file is not read again on a rerun
        st.error(plain(str(err)), icon=":material/error:")
        return
    summary, varied, lower = analysis.summary, analysis.varied, analysis.lower
    metric, tool = choices[chosen], facts.tool
    m = st.columns(4)
    m[0].metric("settings", int((~summary["reference"]).sum()))
    m[1].metric("rows (cell x run)", facts.rows)
    m[2].metric("failed cells", facts.failed_cells)
    m[3].metric("compute time", "-" if facts.compute_seconds is None else f"{facts.compute_seconds:.1f} s")
    failures = result.get("failures") or []
    for failure in failures[:SHOWN_ITEMS]:          # a few one by one, each text bounded (engine.limits.answer)
        st.warning(plain(f"Cell {short_text(failure.get('setting'))}: {short_text(failure.get('error'))}"),
                   icon=":material/warning:")
    if len(failures) > SHOWN_ITEMS:
        st.warning(f"And {len(failures) - SHOWN_ITEMS:,} more failed settings: the settings table below lists "
                   "every one.", icon=":material/warning:")
    for note in controls.provenance(result):
        st.info(plain(note), icon=":material/history:")
    if not summary["utility"].notna().any():
        st.info("No setting finished: every cell failed, so there is no frontier to draw. The failures are "
                "listed above; lower what they name and run the sweep again.", icon=":material/info:")
    tied = analysis.tied
    if int((~summary["reference"]).sum()) > ALL_PAIRS_MAX_SETTINGS:
        st.caption(f"More than {ALL_PAIRS_MAX_SETTINGS} settings: only neighbours along each line are compared "
                   "for \"within 1 s.e. of\".")
    if result.get("preset") not in (None, controls.CUSTOM):
        preset_note(result["preset"])

    st.markdown("**Privacy loss against utility** — one point per setting (mean over runs, bars: one standard "
                "error); ringed gold: Pareto-optimal settings; dashed lines: non-private references; thick grey: "
                "neighbours within one standard error of each other, which these runs cannot order.")
    pairs = {frozenset((a, b)) for a, others in tied.items() for b in others}
    event = show(frontier_figure(summary, varied, metric_label=metric, lower_is_better=lower, tied=pairs),
                 key="sw_frontier", on_select="rerun", selection_mode="points",
                 about="Each point is one setting: how much privacy it spends (ε, left is more private) against "
                       "the utility its runs reached, so the best trade-offs lie towards the better corner.")
    try:
        points = list(event.selection.points)
    except AttributeError:   # no selection support (e.g. under AppTest)
        points = []
    picked = None
    for point in points:
        data = point.get("customdata")
        if isinstance(data, dict):       # a binary-encoded array arrives as {index: value}
            data = list(data.values())
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if isinstance(data, (int, float)):
            picked = int(data)
            break

    labels = [f"{r['setting']}" + ("  (reference)" if r["reference"] else "  ★ Pareto-optimal" if r["pareto"] else "")
              for _, r in summary.iterrows()]
    if picked is not None and picked in set(summary["cell"]):
        default = int(np.flatnonzero(summary["cell"].to_numpy() == picked)[0])
    else:
        front = summary[summary["pareto"]]
        best = (front["utility"].idxmin() if lower else front["utility"].idxmax()) if len(front) else 0
        default = int(best) if len(front) else 0
    c1, c2 = st.columns([2, 1.4], vertical_alignment="bottom")
    choice = c1.selectbox("setting to open on its own page (or click a point)", range(len(summary)),
                          index=default, format_func=lambda i: labels[i], key=f"sw_open_{picked}")
    row = summary.iloc[choice]
    refs = summary.loc[summary["reference"], "algorithm"].dropna().tolist() if "algorithm" in summary else []
    route, query = controls.setting_link(tool, facts.settings[(row["role"], row["setting"])], refs)
    if route is not None:
        with c2:
            page_link(route, plain(f"Open {row['setting']} on the {route.title} page"), icon=":material/open_in_new:",
                      query_params=query)

    if len(varied) == 2 and is_full_grid(summary[~summary["reference"]], varied):
        show(heatmap_figure(summary, varied[0], varied[1], metric_label=metric, lower_is_better=lower),
             key="sw_heatmap", about=f"The mean utility of every combination of {varied[0]} and {varied[1]}, "
                                     "each cell labelled with its privacy loss ε.")

    st.markdown("**Settings**")
    # A missing number (a reference's ε, a failed setting) shows a dash, never "None".
    shown = readable(settings_table(summary, varied, tied),
                     formats={"utility": "{:.4g}", "± se": "{:.2g}", "privacy loss ε": "{:.3g}"})
    st.dataframe(shown, hide_index=True, height=min(36 * (len(summary) + 1) + 3, 640),
                 column_config={"utility": st.column_config.Column(metric)})
    if facts.csv is not None:       # an uploaded table's rows are the visitor's own file
        d1, d2, _ = st.columns([1, 1, 2.5])
        d1.download_button("Download CSV", facts.csv, file_name="sweep.csv",
                           mime="text/csv", icon=":material/download:", key="sw_download_csv")
        d2.download_button("Download Parquet", facts.parquet, file_name="sweep.parquet",
                           mime="application/octet-stream", icon=":material/download:", key="sw_download_parquet")
    with st.expander(f"All {facts.rows} rows (one per cell x run)"):
        if facts.preview_note:
            st.caption(facts.preview_note)
        st.dataframe(readable(facts.preview), hide_index=True)


if controls.RESULT_KEY in st.session_state:
    show_results(st.session_state[controls.RESULT_KEY])
else:
    st.info("Run a sweep, or open a saved table, to see its frontier here.", icon=":material/scatter_plot:")

