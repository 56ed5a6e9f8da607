"""The Trade-off explorer's controls: a sweep's tool, fixed settings, axes, runs and executor, and its links.

The Federated BO settings come through :mod:`ui.fbo.controls` (the module that
owns them); a finished setting opens on its tool's page through
:func:`setting_link`, with the query parameters that page reads.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import streamlit as st

from engine.fbo.presets import REFERENCES, reference_name
from engine.fbo.variants import REFERENCE_ALGORITHMS, sweep_base
from engine.objectives.registry import data_status
from engine.sweep import COMBINE, EXECUTOR_LABELS, EXECUTORS, SWEEP_PRESETS, SweepSpec, get_adapter
from engine.sweep.analysis import NOT_SETTINGS
from engine.hosting import dask_scheduler, is_hosted
from engine.limits import HostLimits
from engine.sweep.spec import MAX_REPLICATES, MAX_RUNS
from engine.sweep.values import format_lines, format_values, parse_assignment, parse_lines
from engine.validation import ConfigError
from ui.fbo import controls as fbo_controls
from ui.hype import controls as hype_controls
from ui.pogpucb import controls as pogpucb_controls
from ui.kit.errors import ErrorSlots
from ui.kit.routes import TOOL_ROUTES, Route
from ui.kit.state import MAX_TEXT, Ignored, SEED_MAX, Param, current_values, init_state, set_state

PREFIX = "sw_"
RESULT_KEY = "sw_result"           # the table shown (from a run or an upload)
RUN_KEY = "sw_run_state"           # the page's LiveRun
PAGE_TOOLS = ("fbo", "hype", "pogpucb")
REFERENCE_LABELS = {"ts": "TS (agents alone)", "fts": "FTS (FTS-DE with P = 1, as the paper)",
                    "fts-de": "FTS-DE (no DP)"}
CUSTOM = "custom"
DEFAULT_BASE = dict(algorithm="dp-fts-de", dataset="synthetic", agents=50, iterations=30)

# What a custom sweep of each tool starts from (seconds here). The federated BO default was measured
# (docs/benchmarks.md, "Trade-off explorer defaults"; python -m benchmarks.bench_tradeoff_defaults): at 60
# runs every neighbouring pair of this grid is ordered as privacy predicts over three sweep seeds, 17 of the
# 21 pairs by more than one standard error of the paired difference (agents' own GPs); the former
# q = 0.15, 0.25, 0.5 x z = 1, 1.5 at 3 runs differed by less than its error bars.
FBO_RUNS = 60
TOOL_DEFAULTS = {
    "fbo": dict(base=format_lines(DEFAULT_BASE), p1="q", v1="0.25, 0.5, 1", p2="z", v2="1, 2", refs=["ts"],
                runs=FBO_RUNS),
    "hype": dict(base=format_lines(dict(mode="simulation", clients=250, candidates=100, good=5, repetitions=300)),
                 p1="epsilon", v1="0.1, 0.25, 0.5, 1, 3", p2="k", v2="1, 5", refs=[], runs=2),
    "pogpucb": dict(base=format_lines(dict(dataset="synthetic", iterations=30, baseline=False)),
                    p1="epsilon", v1="3.004, 3.669, 4.482", p2="r", v2="3, 10", refs=[], runs=3),
}

PARAMS = {
    "preset": Param(CUSTOM, str, (CUSTOM,) + tuple(SWEEP_PRESETS)),
    "tool": Param("fbo", str, PAGE_TOOLS),
    "base": Param(format_lines(DEFAULT_BASE), str),
    "p1": Param("q", str),
    "v1": Param(TOOL_DEFAULTS["fbo"]["v1"], str),
    "p2": Param("z", str),
    "v2": Param(TOOL_DEFAULTS["fbo"]["v2"], str),
    "combine": Param("grid", str, COMBINE),
    "refs": Param(["ts"], list, REFERENCE_ALGORITHMS),
    "runs": Param(FBO_RUNS, int, low=1, high=MAX_RUNS),
    "seeds": Param(1, int, low=1, high=MAX_REPLICATES),
    "seed": Param(0, int, low=0, high=SEED_MAX),
    "executor": Param("joblib", str, EXECUTORS),
    "workers": Param(2, int, low=1, high=256),     # and at most the host's DPBO_MAX_WORKERS (see current())
}
# No control, link or setting names a Dask scheduler: the address is the host's (DPBO_DASK_SCHEDULER).


def _key(name: str) -> str:
    return PREFIX + name


def preset_values(name: str) -> dict:
    """The controls' values for a sweep preset."""
    preset = SWEEP_PRESETS[name]
    axes = list(preset.get("axes", ()))
    refs = [n for n in map(reference_name, preset.get("references", ())) if n in REFERENCE_ALGORITHMS]
    return dict(preset=name, tool=preset["tool"], base=format_lines(preset.get("base", {})),
                p1=axes[0][0] if axes else "none", v1=format_values(axes[0][1]) if axes else "",
                p2=axes[1][0] if len(axes) > 1 else "none", v2=format_values(axes[1][1]) if len(axes) > 1 else "",
                combine=preset.get("combine", "grid"), refs=refs, runs=preset.get("runs", 3), seeds=1)


def _load_preset() -> None:
    name = st.session_state[_key("preset")]
    if name in SWEEP_PRESETS:
        set_state(preset_values(name), PREFIX)


def _load_tool_defaults() -> None:
    tool = st.session_state[_key("tool")]
    set_state(dict(TOOL_DEFAULTS[tool], preset=CUSTOM, combine="grid", seeds=1), PREFIX)


def _use_fbo(settings: dict) -> None:
    base, refs = sweep_base(settings)
    set_state(dict(preset=CUSTOM, tool="fbo", base=format_lines(base), refs=refs), PREFIX)


def _load_fbo_settings() -> None:
    _use_fbo(fbo_controls.settings())


def init() -> list[Ignored]:
    """Seed the controls: a link from the Federated BO page, a ``?preset=``, then the URL's values."""
    if st.query_params.get("from") == "fbo":
        # Linked from the federated BO page: its query parameters describe the configuration to sweep.
        _use_fbo(fbo_controls.url_settings())
        st.query_params.clear()
    elif st.query_params.get("preset") in SWEEP_PRESETS and _key("preset") not in st.session_state:
        set_state(preset_values(st.query_params["preset"]), PREFIX)
    ignored = init_state(PARAMS, PREFIX)
    _within_host()
    return ignored


def executors() -> tuple[str, ...]:
    """The executors this server offers: Dask only with the host's scheduler, or locally (a loopback cluster)."""
    if is_hosted() and dask_scheduler() is None:
        return tuple(e for e in EXECUTORS if e != "dask")
    return EXECUTORS


def _within_host() -> None:
    """An executor this server offers and workers within its cap (before the controls are drawn)."""
    if st.session_state.get(_key("executor")) not in executors():
        st.session_state[_key("executor")] = "joblib"
    cap = HostLimits.from_env().workers_cap
    if int(st.session_state.get(_key("workers"), 1)) > cap:
        st.session_state[_key("workers")] = cap


def current() -> dict:
    """The controls' values now, mirrored into the URL."""
    return current_values(PARAMS, PREFIX)


def builder(slots: ErrorSlots) -> None:
    """The sweep's controls, with error slots by field (call inside the build tab)."""
    top = st.columns([2.2, 1, 1.2], vertical_alignment="bottom")
    top[0].selectbox("preset", PARAMS["preset"].choices, key=_key("preset"), on_change=_load_preset,
                     format_func=lambda n: "Custom sweep" if n == CUSTOM else SWEEP_PRESETS[n]["label"],
                     help="A sweep from the papers. The landmine one (Fig. 3a) needs LandmineData.mat under "
                          "DPBO_DATA_DIR.")
    top[1].selectbox("tool", PAGE_TOOLS, key=_key("tool"), format_func=lambda t: get_adapter(t).label,
                     on_change=_load_tool_defaults, help="Which engine every cell runs.")
    top[2].button("Use the Federated BO settings", on_click=_load_fbo_settings, disabled=not fbo_controls.settings(),
                  help="Copy the configuration of your last run on the Federated BO page (its private algorithm "
                       "becomes the base, its non-private ones the references).")
    tool = st.session_state[_key("tool")]
    adapter = get_adapter(tool)
    try:
        field_names = [n for n in adapter.fields() if n not in NOT_SETTINGS]
    except ConfigError as err:
        st.error(str(err), icon=":material/error:")
        st.stop()

    left, right = st.columns([1, 1.4], gap="large")
    with left:
        st.text_area("fixed settings (one name = value per line)", key=_key("base"), height=230,
                     max_chars=MAX_TEXT,
                     help=f"Every cell uses these; anything not listed takes the engine's default. "
                          f"Names: {', '.join(field_names)}.")
        slots.fallback()
    with right:
        c1, c2 = st.columns([1, 1.6])
        options1 = field_names
        if st.session_state[_key("p1")] not in options1:
            st.session_state[_key("p1")] = options1[0]
        c1.selectbox("vary", options1, key=_key("p1"), help="The first parameter the sweep varies.")
        c2.text_input("its values", key=_key("v1"), placeholder="e.g. 0.15, 0.25, 0.5", max_chars=MAX_TEXT,
                      help="Comma-separated; every value is one setting.")
        with c2:
            slots.under(st.session_state[_key("p1")], "v1")
        c3, c4 = st.columns([1, 1.6])
        options2 = ["none"] + [n for n in field_names if n != st.session_state[_key("p1")]]
        if st.session_state[_key("p2")] not in options2:
            st.session_state[_key("p2")] = "none"
        c3.selectbox("and vary", options2, key=_key("p2"), format_func=lambda n: "nothing else" if n == "none" else n,
                     help="Optional second parameter: a heatmap appears for a full grid.")
        two = st.session_state[_key("p2")] != "none"
        c4.text_input("its values", key=_key("v2"), disabled=not two, placeholder="e.g. 1, 1.5",
                      max_chars=MAX_TEXT)
        with c4:
            slots.under(st.session_state[_key("p2")], "v2")
        if two:
            st.radio("combine", COMBINE, key=_key("combine"), horizontal=True,
                     format_func={"grid": "every combination (grid)",
                                  "one-at-a-time": "one at a time around the fixed settings (paper Fig. 3a)"}.get,
                     help="Grid: all pairs of values. One at a time: vary the first with the second at its fixed "
                          "value, then the second with the first at its fixed value.")
        if tool == "fbo":
            st.multiselect("reference levels (non-private)", REFERENCE_ALGORITHMS, key=_key("refs"),
                           format_func=REFERENCE_LABELS.get,
                           help="Run these algorithms once on the same task and draw their final utility as "
                                "horizontal lines.")
        r1, r2, r3 = st.columns(3)
        r1.number_input("runs per setting", key=_key("runs"), min_value=1, step=1,
                        help="Independent runs (one table row each); error bars are standard errors over them.")
        with r1:
            slots.under("runs")
        r2.number_input("seeds per setting", key=_key("seeds"), min_value=1, step=1,
                        help="Cells per setting, each with its own seed and all its runs; more cells spread better "
                             "over workers.")
        with r2:
            slots.under("replicates")
        r3.number_input("sweep seed", key=_key("seed"), min_value=0, step=1,
                        help="Every cell's seed derives from it: the same seed gives the same table, whichever "
                             "executor runs it.")
        with r3:
            slots.under("seed")
        e1, e2 = st.columns([1.4, 1])
        e1.radio("run on", executors(), key=_key("executor"), format_func=EXECUTOR_LABELS.get)
        with e2:
            if st.session_state[_key("executor")] == "dask":
                address = dask_scheduler()
                st.caption(f"Scheduler: {address} (set by the host)." if address else
                           "A Dask cluster on this machine (the host can set DPBO_DASK_SCHEDULER).")
            if st.session_state[_key("executor")] != "local" and not (
                    st.session_state[_key("executor")] == "dask" and dask_scheduler()):
                cap = HostLimits.from_env().workers_cap
                st.number_input("workers", key=_key("workers"), min_value=1, max_value=cap, step=1,
                                help=f"Worker processes on this machine (at most {cap} here).")
            slots.under("executor", "scheduler", "workers")


def spec_of(values: dict) -> SweepSpec:
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


def saved_at(out: Path) -> float | None:
    """When the oldest cell saved for the sweep table ``out`` was written (None: nothing saved yet)."""
    parts = Path(str(out) + ".parts")
    times = [entry.stat().st_mtime for entry in parts.glob("*.parquet")] if parts.is_dir() else []
    return min(times) if times else None


def keep_finished(spec: SweepSpec, out: Path, preset: str, dataset: str | None) -> None:
    """After a stopped sweep: its finished cells become the result shown (nothing when none finished)."""
    from engine.sweep.runner import finished_table

    table = finished_table(spec, out)
    if not len(table):
        return
    total = len(spec.cells(get_adapter(spec.tool)))
    done = int(table["cell"].nunique())
    st.session_state[RESULT_KEY] = dict(
        table=table, label=spec.describe(get_adapter(spec.tool).label), source="run", dataset=dataset, preset=preset,
        failures=[], stopped=(done, total))


def provenance(result: dict) -> list[str]:
    """Sentences saying where shown results come from when it is not this press of Run."""
    notes = []
    if result.get("stopped"):
        done, total = result["stopped"]
        notes.append(f"The sweep was stopped: {done} of its {total} cells finished, and only they are drawn. Run "
                     "the same sweep again to compute the rest (the finished cells are kept).")
    if result.get("reused") and not is_hosted():     # hosted: nothing tells a visitor what others ran, or when
        reused, total, when = result["reused"]
        date = datetime.datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M") if when else "an earlier date"
        notes.append(f"{reused} of {total} cells were not run now: they are results an earlier session saved on "
                     f"{date} for the same sweep (running it again only runs what is missing).")
    dataset = result.get("dataset")
    if dataset and not data_status(dataset).available:
        notes.append(f"These results come from an earlier run: the {dataset} data is no longer available here, "
                     "so this sweep cannot be run again until its file is back.")
    return notes


def _text(value) -> str:
    return "true" if value is True else "false" if value is False else f"{value:g}" if isinstance(value, float) \
        else str(value)


def setting_link(tool: str, params: dict[str, Any], references: list[str]) -> tuple[Route | None, dict[str, str]]:
    """The page that shows one setting of a ``tool`` sweep, and the query parameters that open it there."""
    params = {k: v for k, v in params.items() if v is not None}
    route = TOOL_ROUTES.get(tool)
    if tool == "fbo":
        algorithms = list(dict.fromkeys(references + [params.get("algorithm", "dp-fts-de")]))
        return route, fbo_controls.link_params(params, algorithms=algorithms)
    if tool == "pogpucb":
        return route, dict({k: _text(params[k]) for k in pogpucb_controls.LINK_FIELDS if k in params}, eps_mode="eps")
    return route, {k: _text(v) for k, v in params.items() if k not in hype_controls.NOT_LINKED}
