"""Trade-off explorer: sweep one or two parameters and see the whole privacy-utility frontier."""

from __future__ import annotations

import io
import math
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from engine.fbo.config import FboConfig
from engine.fbo.presets import REFERENCES, reference_name
from engine.paths import cache_dir
from engine.sweep import (
    COMBINE,
    EXECUTOR_LABELS,
    EXECUTORS,
    META_COLUMNS,
    SWEEP_PRESETS,
    SweepSpec,
    get_adapter,
    read_table,
    run_sweep,
    summarise,
    varied_parameters,
)
from engine.sweep.analysis import NOT_SETTINGS, is_full_grid, lower_is_better
from engine.sweep.spec import format_lines, format_values, parse_assignment, parse_lines
from engine.validation import ConfigError
from ui.common import (
    FBO_PAGE,
    FBO_PARAMS,
    FIXED_AGENT_DATASETS,
    ErrorSlots,
    Param,
    fbo_link_params,
    init_state,
    max_work,
    mirror_to_query,
    page_link,
    set_state,
    state_values,
)
from ui.sweep_figures import frontier_figure, heatmap_figure, settings_table

st.set_page_config(page_title="Trade-off explorer · DP-BO Explorer", page_icon=":material/scatter_plot:",
                   layout="wide")

P_ = "sw_"
RESULT = "sw_result"
FBO_RUN_KEY = "fbo_run_state"   # where the Federated BO page keeps its last run (and its settings)
PAGE_TOOLS = ("fbo", "hype", "pogpucb")
TOOL_PAGES = {"fbo": (FBO_PAGE, "Federated BO"), "hype": ("pages/4_DP_HYPE.py", "DP-HYPE"),
              "pogpucb": ("pages/5_PO_GP_UCB.py", "PO-GP-UCB")}
REFERENCE_ALGORITHMS = ("ts", "fts", "fts-de")
REFERENCE_LABELS = {"ts": "TS (agents alone)", "fts": "FTS (FTS-DE with P = 1, as the paper)",
                    "fts-de": "FTS-DE (no DP)"}
SWEEP_WORK_FACTOR = 10   # a sweep may ask for this many times the work of one run on the FBO page
CUSTOM = "custom"
DEFAULT_BASE = dict(algorithm="dp-fts-de", dataset="synthetic", agents=50, iterations=30)

# What a custom sweep of each tool starts from (small enough to run in seconds here).
TOOL_DEFAULTS = {
    "fbo": dict(base=format_lines(DEFAULT_BASE), p1="q", v1="0.15, 0.25, 0.5", p2="z", v2="1, 1.5", refs=["ts"],
                runs=3),
    "hype": dict(base=format_lines(dict(mode="simulation", clients=250, candidates=100, good=5, repetitions=300)),
                 p1="epsilon", v1="0.1, 0.25, 0.5, 1, 3", p2="k", v2="1, 5", refs=[], runs=2),
    "pogpucb": dict(base=format_lines(dict(dataset="synthetic", iterations=30, baseline=False)),
                    p1="epsilon", v1="3.004, 3.669, 4.482", p2="r", v2="3, 10", refs=[], runs=3),
}
# Query parameters of the PO-GP-UCB page that a sweep row can fill (epsilon given directly).
PO_LINK_FIELDS = ("dataset", "epsilon", "delta", "r", "iterations", "runs", "seed", "hyperparameters")

PARAMS = {
    "preset": Param(CUSTOM, str, (CUSTOM,) + tuple(SWEEP_PRESETS)),
    "tool": Param("fbo", str, PAGE_TOOLS),
    "base": Param(format_lines(DEFAULT_BASE), str),
    "p1": Param("q", str),
    "v1": Param("0.15, 0.25, 0.5", str),
    "p2": Param("z", str),
    "v2": Param("1, 1.5", str),
    "combine": Param("grid", str, COMBINE),
    "refs": Param(["ts"], list, REFERENCE_ALGORITHMS),
    "runs": Param(3, int),
    "seeds": Param(1, int),
    "seed": Param(0, int),
    "executor": Param("joblib", str, EXECUTORS),
    "scheduler": Param("", str),
    "workers": Param(2, int),
}


def key(name: str) -> str:
    return P_ + name


def preset_values(name: str) -> dict:
    """The controls' values for a sweep preset."""
    preset = SWEEP_PRESETS[name]
    axes = list(preset.get("axes", ()))
    refs = [n for n in map(reference_name, preset.get("references", ())) if n in REFERENCE_ALGORITHMS]
    return dict(preset=name, tool=preset["tool"], base=format_lines(preset.get("base", {})),
                p1=axes[0][0] if axes else "none", v1=format_values(axes[0][1]) if axes else "",
                p2=axes[1][0] if len(axes) > 1 else "none", v2=format_values(axes[1][1]) if len(axes) > 1 else "",
                combine=preset.get("combine", "grid"), refs=refs, runs=preset.get("runs", 3), seeds=1)


def fbo_values_from_page(values: dict) -> tuple[dict, list[str]]:
    """A base configuration and references from the federated BO page's controls (URL or session)."""
    algorithms = list(values.get("algorithms") or ["dp-fts-de"])
    private = [a for a in algorithms if a.startswith("dp-")]
    base = {"algorithm": private[-1] if private else algorithms[-1]}
    fields = set(FboConfig.__dataclass_fields__)
    for name, value in values.items():
        if name in fields and name not in ("runs", "seed", "budget") and value is not None:
            base[name] = value
    if base.get("dataset") in FIXED_AGENT_DATASETS:
        base["agents"] = None     # the task has its own agents (one per landmine field)
    if values.get("budget_mode") in ("stop", "calibrate"):
        base["budget"] = values.get("budget")
        base["calibrate_z"] = values.get("budget_mode") == "calibrate"
    refs = [a for a in algorithms if a in REFERENCE_ALGORITHMS]
    return base, refs


# ---------------------------------------------------------------- state: URL, presets, the FBO page
if st.query_params.get("from") == "fbo":
    # Linked from the federated BO page: its query parameters describe the configuration to sweep.
    page_values = {}
    for name, param in FBO_PARAMS.items():
        if name in st.query_params:
            try:
                page_values[name] = param.decode(st.query_params[name])
            except ValueError:
                pass
    base, refs = fbo_values_from_page(dict({n: p.default for n, p in FBO_PARAMS.items()}, **page_values))
    set_state(dict(preset=CUSTOM, tool="fbo", base=format_lines(base), refs=refs), P_)
    st.query_params.clear()
elif st.query_params.get("preset") in SWEEP_PRESETS and key("preset") not in st.session_state:
    set_state(preset_values(st.query_params["preset"]), P_)
ignored = init_state(PARAMS, P_)


def load_preset():
    name = st.session_state[key("preset")]
    if name in SWEEP_PRESETS:
        set_state(preset_values(name), P_)


def load_tool_defaults():
    tool = st.session_state[key("tool")]
    set_state(dict(TOOL_DEFAULTS[tool], preset=CUSTOM, combine="grid", seeds=1), P_)


def fbo_page_values() -> dict:
    """The Federated BO page's settings of its last run (kept in the session), else its live controls."""
    run_state = st.session_state.get(FBO_RUN_KEY)
    if isinstance(run_state, dict) and isinstance(run_state.get("values"), dict):
        return {k: v for k, v in run_state["values"].items() if k in FBO_PARAMS}
    return {name: st.session_state[f"fbo_{name}"] for name in FBO_PARAMS if f"fbo_{name}" in st.session_state}


def load_fbo_page():
    values = fbo_page_values()
    base, refs = fbo_values_from_page(dict({n: p.default for n, p in FBO_PARAMS.items()}, **values))
    set_state(dict(preset=CUSTOM, tool="fbo", base=format_lines(base), refs=refs), P_)


# ---------------------------------------------------------------- header
st.title("Privacy-utility trade-off explorer")
st.write(
    "One run shows one point; choosing a privacy budget needs the whole **frontier**. Pick a configuration, the "
    "one or two parameters to vary and their values, and run the sweep: every setting becomes one point "
    "(privacy loss ε against utility, with standard errors over runs), the **Pareto-optimal** settings (no other "
    "setting is both more private and better) are joined and highlighted, and non-private methods appear as "
    "reference levels. Click a point to open that configuration on its own page.")
if ignored:
    st.warning(f"Ignored link parameter(s) that did not parse: {', '.join(ignored)}.")

build_tab, upload_tab = st.tabs(["Build and run a sweep", "Open a saved sweep table"])

# ---------------------------------------------------------------- build a sweep
with build_tab:
    slots = ErrorSlots()
    top = st.columns([2.2, 1, 1.2], vertical_alignment="bottom")
    top[0].selectbox("preset", PARAMS["preset"].choices, key=key("preset"), on_change=load_preset,
                     format_func=lambda n: "Custom sweep" if n == CUSTOM else SWEEP_PRESETS[n]["label"],
                     help="A sweep from the papers. The landmine one (Fig. 3a) needs LandmineData.mat under "
                          "DPBO_DATA_DIR.")
    top[1].selectbox("tool", PAGE_TOOLS, key=key("tool"), format_func=lambda t: get_adapter(t).label,
                     on_change=load_tool_defaults, help="Which engine every cell runs.")
    top[2].button("Use the Federated BO settings", on_click=load_fbo_page, disabled=not fbo_page_values(),
                  help="Copy the configuration of your last run on the Federated BO page (its private algorithm "
                       "becomes the base, its non-private ones the references).")
    tool = st.session_state[key("tool")]
    adapter = get_adapter(tool)
    try:
        field_names = [n for n in adapter.fields() if n not in NOT_SETTINGS]
    except ConfigError as err:
        st.error(str(err), icon=":material/error:")
        st.stop()

    left, right = st.columns([1, 1.4], gap="large")
    with left:
        st.text_area("fixed settings (one name = value per line)", key=key("base"), height=230,
                     help=f"Every cell uses these; anything not listed takes the engine's default. "
                          f"Names: {', '.join(field_names)}.")
        slots.fallback()
    with right:
        c1, c2 = st.columns([1, 1.6])
        options1 = field_names
        if st.session_state[key("p1")] not in options1:
            st.session_state[key("p1")] = options1[0]
        c1.selectbox("vary", options1, key=key("p1"), help="The first parameter the sweep varies.")
        c2.text_input("its values", key=key("v1"), placeholder="e.g. 0.15, 0.25, 0.5",
                      help="Comma-separated; every value is one setting.")
        with c2:
            slots.under(st.session_state[key("p1")], "v1")
        c3, c4 = st.columns([1, 1.6])
        options2 = ["none"] + [n for n in field_names if n != st.session_state[key("p1")]]
        if st.session_state[key("p2")] not in options2:
            st.session_state[key("p2")] = "none"
        c3.selectbox("and vary", options2, key=key("p2"), format_func=lambda n: "nothing else" if n == "none" else n,
                     help="Optional second parameter: a heatmap appears for a full grid.")
        two = st.session_state[key("p2")] != "none"
        c4.text_input("its values", key=key("v2"), disabled=not two, placeholder="e.g. 1, 1.5")
        with c4:
            slots.under(st.session_state[key("p2")], "v2")
        if two:
            st.radio("combine", COMBINE, key=key("combine"), horizontal=True,
                     format_func={"grid": "every combination (grid)",
                                  "one-at-a-time": "one at a time around the fixed settings (paper Fig. 3a)"}.get,
                     help="Grid: all pairs of values. One at a time: vary the first with the second at its fixed "
                          "value, then the second with the first at its fixed value.")
        if tool == "fbo":
            st.multiselect("reference levels (non-private)", REFERENCE_ALGORITHMS, key=key("refs"),
                           format_func=REFERENCE_LABELS.get,
                           help="Run these algorithms once on the same task and draw their final utility as "
                                "horizontal lines.")
        r1, r2, r3 = st.columns(3)
        r1.number_input("runs per setting", key=key("runs"), min_value=1, step=1,
                        help="Independent runs (one table row each); error bars are standard errors over them.")
        with r1:
            slots.under("runs", "number of runs")
        r2.number_input("seeds per setting", key=key("seeds"), min_value=1, step=1,
                        help="Cells per setting, each with its own seed and all its runs; more cells spread better "
                             "over workers.")
        with r2:
            slots.under("number of seeds per setting")
        r3.number_input("sweep seed", key=key("seed"), min_value=0, step=1,
                        help="Every cell's seed derives from it: the same seed gives the same table, whichever "
                             "executor runs it.")
        with r3:
            slots.under("seed")
        e1, e2 = st.columns([1.4, 1])
        e1.radio("run on", EXECUTORS, key=key("executor"), format_func=EXECUTOR_LABELS.get)
        with e2:
            if st.session_state[key("executor")] == "dask":
                st.text_input("scheduler address", key=key("scheduler"), placeholder="tcp://host:8786",
                              help="Blank: start a Dask cluster on this machine. Workers must be able to import "
                                   "this project (same code on their PYTHONPATH).")
            if st.session_state[key("executor")] != "local":
                st.number_input("workers", key=key("workers"), min_value=1, max_value=64, step=1,
                                help="Worker processes on this machine (joblib, or a local Dask cluster).")
            slots.under("executor", "scheduler", "number of workers")

values = state_values(PARAMS, P_)
mirror_to_query(values, PARAMS)


def build_spec(values: dict) -> SweepSpec:
    """The sweep the controls describe; raises ConfigError naming the control."""
    base = parse_lines(values["base"])
    axes = []
    for p, v in (("p1", "v1"), ("p2", "v2")):
        name = values[p]
        if name == "none" or (p == "p2" and not values[v].strip()):
            continue
        if not values[v].strip():
            raise ConfigError(f"Give the values of {name}, separated by commas.", name)
        axes.append(parse_assignment(f"{name}={values[v]}", many=True))
    references = ()
    if values["tool"] == "fbo":
        references = tuple(dict(REFERENCES[a]) for a in values["refs"])
    preset = SWEEP_PRESETS.get(values["preset"], {})
    label = preset.get("label", "") if values["preset"] != CUSTOM else ""
    return SweepSpec(tool=values["tool"], base=base, axes=tuple(axes), combine=values["combine"],
                     references=references, runs=int(values["runs"]), replicates=int(values["seeds"]),
                     seed=int(values["seed"]), label=label)


def check_size(spec: SweepSpec, cells) -> None:
    """Refuse sweeps larger than this host accepts (federated BO: agents x iterations x runs, summed)."""
    if spec.tool != "fbo":
        return
    limit = max_work()
    total = 0
    for cell in cells:
        agents = cell.params.get("agents") or 29   # tasks with their own agents (landmine) have 29
        work = agents * cell.params["iterations"] * cell.runs
        if work > limit:
            raise ConfigError(f"The setting {cell.setting} asks for {work:,} agent-iterations per cell; the limit "
                              f"here is {limit:,}. Lower the agents, iterations or runs.", "runs")
        total += work
    if total > SWEEP_WORK_FACTOR * limit:
        raise ConfigError(f"This sweep asks for {total:,} agent-iterations in all; the limit here is "
                          f"{SWEEP_WORK_FACTOR * limit:,}. Vary fewer values, or lower the runs or iterations "
                          "(or run it with python -m engine sweep).", "runs")


def describe(spec: SweepSpec) -> str:
    if spec.label:
        return spec.label
    tool = get_adapter(spec.tool).label
    return f"{tool}: " + " x ".join(f"{n} in {{{format_values(v)}}}" for n, v in spec.axes)


with build_tab:
    spec, cells = None, []
    try:
        spec = build_spec(values)
        cells = spec.cells()
        check_size(spec, cells)
    except ConfigError as err:
        slots.show(err)
        spec = None
    if spec is not None:
        settings = len({(c.role, c.setting) for c in cells if c.role == "setting"})
        refs = len({c.setting for c in cells if c.role == "reference"})
        st.caption(f"{settings} settings" + (f" + {refs} reference{'s' if refs > 1 else ''}" if refs else "")
                   + f" = {len(cells)} cells x {spec.runs} runs = {len(cells) * spec.runs} table rows. "
                   "Finished cells are kept on disk: running the same sweep again only runs what is missing.")
    run_clicked = st.button("Run sweep", type="primary", icon=":material/play_arrow:", disabled=spec is None,
                            key="sw_run")
    run_error = st.empty()
    if run_clicked and spec is not None:
        out = cache_dir() / "sweeps" / f"{spec.tool}-{spec.key()}.parquet"
        bar = st.progress(0.0, text="Starting the sweep ...")
        executor = values["executor"]
        scheduler = (values["scheduler"].strip() or None) if executor == "dask" else None
        try:
            summary = run_sweep(spec, out, executor=executor,
                                workers=int(values["workers"]) if executor != "local" else None, scheduler=scheduler,
                                on_progress=lambda p: bar.progress(min(1.0, p.fraction), text=p.line()))
        except ConfigError as err:
            bar.empty()
            run_error.error(str(err), icon=":material/error:")
        else:
            bar.progress(1.0, text=f"Done: {summary.cells} cells, {summary.rows} rows in {summary.seconds:.1f} s"
                         + (f" ({summary.cells_reused} cells from an earlier run)" if summary.cells_reused else ""))
            st.session_state[RESULT] = dict(table=summary.table, label=describe(spec), source="run",
                                            failures=summary.failed)

# ---------------------------------------------------------------- open a saved table
with upload_tab:
    upload = st.file_uploader("a sweep table saved from this page or written by python -m engine sweep",
                              type=["csv", "parquet"], key="sw_upload")
    if upload is not None and st.session_state.get("sw_upload_id") != upload.file_id:
        try:
            table = read_table(io.BytesIO(upload.getvalue()), upload.name)
        except ConfigError as err:
            st.error(str(err), icon=":material/error:")
        else:
            st.session_state["sw_upload_id"] = upload.file_id
            failures = table.loc[table["error"].notna(), ["setting", "error"]].drop_duplicates() \
                if "error" in table else pd.DataFrame()
            st.session_state[RESULT] = dict(table=table, label=f"Uploaded table {upload.name}", source="upload",
                                            failures=[dict(setting=s, error=e) for s, e in failures.to_numpy()])


# ---------------------------------------------------------------- results
def clean(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def setting_params(table: pd.DataFrame, role: str, setting: str) -> dict:
    """The parameters of one setting, from its first row."""
    rows = table[(table["role"] == role) & (table["setting"] == setting)] if "role" in table else \
        table[table["setting"] == setting]
    row = rows.iloc[0]
    return {c: clean(row[c]) for c in table.columns if c not in META_COLUMNS}


def link_params(tool: str, params: dict, references: list[str]) -> dict[str, str]:
    params = {k: v for k, v in params.items() if v is not None}
    if tool == "fbo":
        algorithms = list(dict.fromkeys(references + [params.get("algorithm", "dp-fts-de")]))
        return fbo_link_params(params, algorithms=algorithms)

    def text(v):
        return "true" if v is True else "false" if v is False else f"{v:g}" if isinstance(v, float) else str(v)

    if tool == "pogpucb":
        return dict({k: text(params[k]) for k in PO_LINK_FIELDS if k in params}, eps_mode="eps")
    return {k: text(v) for k, v in params.items() if k not in ("data_dir", "cache_dir")}


def show_results(result: dict) -> None:
    table = result["table"]
    st.divider()
    st.subheader(result["label"])
    if table is None or not len(table):
        st.info("The sweep produced no rows.")
        return
    summary = summarise(table)
    varied = varied_parameters(table)
    lower = lower_is_better(table)
    ok = table[table["error"].isna()] if "error" in table else table
    metric = str(ok["metric"].iloc[0]) if "metric" in ok and len(ok) else "utility"
    tool = str(table["tool"].iloc[0]) if "tool" in table else "fbo"
    m = st.columns(4)
    m[0].metric("settings", int((~summary["reference"]).sum()))
    m[1].metric("rows (cell x run)", len(table))
    m[2].metric("failed cells", int(table.loc[table["error"].notna(), "cell"].nunique()) if "error" in table else 0)
    m[3].metric("compute time", f"{table['wall_seconds'].sum():.1f} s" if "wall_seconds" in table else "-")
    for failure in result.get("failures") or []:
        st.warning(f"Cell {failure.get('setting')}: {failure.get('error')}", icon=":material/warning:")

    st.markdown("**Privacy loss against utility** — one point per setting (mean over runs, bars: one standard "
                "error); ringed gold: Pareto-optimal settings; dashed lines: non-private references.")
    event = st.plotly_chart(frontier_figure(summary, varied, metric_label=metric, lower_is_better=lower),
                            key="sw_frontier", on_select="rerun", selection_mode="points")
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
        best = front["utility"].idxmin() if lower else front["utility"].idxmax() if len(front) else 0
        default = int(best) if len(front) else 0
    page, page_label = TOOL_PAGES.get(tool, (None, None))
    c1, c2 = st.columns([2, 1.4], vertical_alignment="bottom")
    choice = c1.selectbox("setting to open on its own page (or click a point)", range(len(summary)),
                          index=default, format_func=lambda i: labels[i], key=f"sw_open_{picked}")
    row = summary.iloc[choice]
    if page is not None:
        refs = [a for a in summary.loc[summary["reference"], "algorithm"].dropna().tolist()] \
            if "algorithm" in summary else []
        query = link_params(tool, setting_params(table, row["role"], row["setting"]), refs)
        text = f"Open {row['setting']} on the {page_label} page"
        with c2:
            try:
                page_link(page, text, icon=":material/open_in_new:", query_params=query)
            except StreamlitAPIException:
                # The page is not registered (this page run on its own, e.g. under AppTest): a plain link.
                slug = page.split("/")[-1].removesuffix(".py").split("_", 1)[-1]
                st.markdown(f"[{text}]({slug}?{urlencode(query)})")

    if len(varied) == 2 and is_full_grid(summary[~summary["reference"]], varied):
        st.plotly_chart(heatmap_figure(summary, varied[0], varied[1], metric_label=metric, lower_is_better=lower),
                        key="sw_heatmap")

    st.markdown("**Settings**")
    st.dataframe(settings_table(summary, varied), hide_index=True, height=min(36 * (len(summary) + 1) + 3, 640),
                 column_config={"utility": st.column_config.NumberColumn(metric, format="%.4g"),
                                "± se": st.column_config.NumberColumn(format="%.2g"),
                                "privacy loss ε": st.column_config.NumberColumn(format="%.3g")})
    d1, d2, _ = st.columns([1, 1, 2.5])
    d1.download_button("Download CSV", table.to_csv(index=False).encode(), file_name="sweep.csv",
                       mime="text/csv", icon=":material/download:", key="sw_download_csv")
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    d2.download_button("Download Parquet", buffer.getvalue(), file_name="sweep.parquet",
                       mime="application/octet-stream", icon=":material/download:", key="sw_download_parquet")
    with st.expander(f"All {len(table)} rows (one per cell x run)"):
        st.dataframe(table, hide_index=True)


if RESULT in st.session_state:
    show_results(st.session_state[RESULT])
else:
    st.info("Run a sweep, or open a saved table, to see its frontier here.", icon=":material/scatter_plot:")

