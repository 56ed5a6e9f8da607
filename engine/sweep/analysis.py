"""Reading a sweep table: one point per setting, the Pareto front, series and grids for figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.cancel import checkpoint
from engine.sweep.adapters import ADAPTERS, EXTRA_METRICS
from engine.sweep.cell import META_COLUMNS

# Parameters that differ between cells without being part of what a setting is.
NOT_SETTINGS = frozenset({"seed", "runs", "seed_param", "runs_param"})


def parameter_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c not in META_COLUMNS]


def _distinct(series: pd.Series) -> list:
    """The distinct values of ``series`` in their first order (NaN as None), in one pass: an uploaded table's
    column of 200,000 different numbers took hours when each value was looked up in a list."""
    values, seen = [], set()
    for v in series.tolist():
        if isinstance(v, float) and np.isnan(v):
            v = None
        try:
            new = v not in seen
            seen.add(v)
        except TypeError:       # an unhashable cell: compared with the values so far
            new = v not in values
        if new:
            values.append(v)
    return values


def varied_parameters(table: pd.DataFrame) -> list[str]:
    """Parameters that take more than one value over the sweep's settings (references aside)."""
    rows = table[table["role"] == "setting"] if "role" in table else table
    return [c for c in parameter_columns(rows) if c not in NOT_SETTINGS and len(_distinct(rows[c])) > 1]


def lower_is_better(table: pd.DataFrame) -> bool:
    """Direction of the utility column, as the table stores it with the metric.

    Tables written before the ``lower_is_better`` column existed take the
    direction of the tool that wrote them.
    """
    if "lower_is_better" in table and len(table):
        values = _distinct(table["lower_is_better"])
        if len(values) == 1 and values[0] is not None:
            return bool(values[0])
    tools = _distinct(table["tool"]) if "tool" in table else []
    if len(tools) == 1 and tools[0] in ADAPTERS:
        return ADAPTERS[tools[0]].metric.lower_is_better
    return True


def metric_choices(table: pd.DataFrame) -> dict[str, str]:
    """The metrics a sweep table can be read with: ``{"utility": its stored metric}`` and every further metric
    column (:data:`engine.sweep.adapters.EXTRA_METRICS`) that holds a value, by column and label."""
    ok = table[table["error"].isna()] if "error" in table else table
    stored = str(ok["metric"].iloc[0]) if "metric" in ok and len(ok) else "utility"
    choices = {"utility": stored}
    for column, metric in EXTRA_METRICS.items():
        if column in table and table[column].notna().any():
            choices[column] = metric.label
    return choices


def with_metric(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """``table`` read with metric ``column`` as its utility (its label and direction too); "utility": unchanged."""
    if column == "utility" or column not in table:
        return table
    metric = EXTRA_METRICS[column]
    out = table.copy()
    out["utility"] = out[column]
    out["metric"] = metric.label
    out["lower_is_better"] = metric.lower_is_better
    return out


def _clean(value):
    """A table cell as a plain Python value (NaN as None)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def setting_params(table: pd.DataFrame, role: str, setting: str) -> dict:
    """The parameters of one setting of a sweep table, read from its first row."""
    rows = table[(table["role"] == role) & (table["setting"] == setting)] if "role" in table else \
        table[table["setting"] == setting]
    row = rows.iloc[0]
    return {c: _clean(row[c]) for c in table.columns if c not in META_COLUMNS}


def every_setting_params(table: pd.DataFrame) -> dict[tuple[str, str], dict]:
    """:func:`setting_params` of every setting, by (role, setting), in one pass over the table."""
    keys = [c for c in ("role", "setting") if c in table]
    return {(row["role"] if "role" in table else "setting", row["setting"]):
            {c: _clean(row[c]) for c in table.columns if c not in META_COLUMNS}
            for _, row in table.drop_duplicates(keys).iterrows()} if keys else {}


def _stderr(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def pareto_mask(x: np.ndarray, y: np.ndarray, lower_is_better: bool = True) -> np.ndarray:
    """True for points no other point beats on both privacy loss ``x`` (lower) and utility ``y``.

    A point is dominated when another has ``x`` no larger and ``y`` no worse,
    one of them strictly. Points with a missing coordinate are never optimal.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if not lower_is_better:
        y = -y
    ok = np.isfinite(x) & np.isfinite(y)
    xo, yo = x[:, None], y[:, None]
    # dominated[i, j]: point j dominates point i (vectorised over all pairs).
    dominated = (x[None, :] <= xo) & (y[None, :] <= yo) & ((x[None, :] < xo) | (y[None, :] < yo))
    dominated &= ok[None, :]
    return ok & ~dominated.any(axis=1)


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting: mean utility and privacy loss with standard errors over runs, and the front.

    Columns: ``role, setting, cell, <varied parameters>, runs, failed, utility,
    utility_se, privacy_loss, privacy_loss_se, privacy_delta, wall_seconds,
    reference`` (a non-private setting, drawn as a level), ``pareto``.
    Failed rows count in ``failed`` and are left out of the means.
    """
    if table is None or not len(table):
        return pd.DataFrame()
    varied = varied_parameters(table)
    keys = [c for c in ("role", "setting") if c in table]
    error = table["error"].notna() if "error" in table else pd.Series(False, index=table.index)
    rows = []
    for _, group in table.groupby(keys, sort=False, dropna=False):
        ok = group[~error.loc[group.index]]
        first = group.iloc[0]
        row = {k: first[k] for k in keys}
        row["cell"] = int(group["cell"].min()) if "cell" in group else len(rows)
        for name in varied:
            row[name] = first[name]
        for name in ("algorithm", "dataset"):
            if name in group and name not in row:
                row[name] = first[name]
        row.update(runs=int(len(ok)), failed=int(len(group) - len(ok)),
                   utility=float(ok["utility"].mean()) if len(ok) else np.nan,
                   utility_se=_stderr(ok["utility"]),
                   privacy_loss=float(ok["privacy_loss"].mean()) if len(ok) else np.nan,
                   privacy_loss_se=_stderr(ok["privacy_loss"]),
                   privacy_delta=float(ok["privacy_delta"].mean()) if "privacy_delta" in ok and len(ok) else np.nan,
                   wall_seconds=float(group["wall_seconds"].sum()) if "wall_seconds" in group else np.nan)
        rows.append(row)
    summary = pd.DataFrame(rows).sort_values("cell", kind="stable").reset_index(drop=True)
    summary["reference"] = ~np.isfinite(summary["privacy_loss"].to_numpy(float)) & (summary["runs"] > 0)
    private = ~summary["reference"].to_numpy()
    mask = np.zeros(len(summary), dtype=bool)
    mask[private] = pareto_mask(summary.loc[private, "privacy_loss"], summary.loc[private, "utility"],
                                lower_is_better(table))
    summary["pareto"] = mask
    return summary


def _run_keys(rows: pd.DataFrame) -> list[str]:
    """The columns that name a run's random numbers: its seed and run index (else replicate and run)."""
    keys = [c for c in ("seed", "run") if c in rows]
    return keys if len(keys) == 2 else [c for c in ("replicate", "run") if c in rows]


ALL_PAIRS_MAX_SETTINGS = 100   # up to this many settings every pair is compared (4,950 pairs at most)
PAIR_SECONDS = 4e-4            # one comparison of two settings' runs (pandas, on the development machine)
SETTING_SECONDS = 2e-3         # summarising one setting and finding its neighbours


def pair_count(settings: int, max_settings: int = ALL_PAIRS_MAX_SETTINGS) -> int:
    """How many pairs :func:`pair_differences` compares for ``settings`` private settings (an upper bound)."""
    settings = max(0, int(settings))
    if settings <= max_settings:
        return settings * (settings - 1) // 2
    return 2 * settings        # neighbours along the figure's lines: fewer than two per setting and line


def pair_seconds(settings: int, max_settings: int = ALL_PAIRS_MAX_SETTINGS) -> float:
    """Estimated seconds of :func:`pair_differences` for a table of ``settings`` private settings."""
    return pair_count(settings, max_settings) * PAIR_SECONDS + max(0, int(settings)) * SETTING_SECONDS


def neighbour_pairs(table: pd.DataFrame) -> list[tuple[str, str]]:
    """Pairs of settings next to each other on a line of the frontier figure (:func:`series`)."""
    summary = summarise(table)
    if not len(summary):
        return []
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset] = set()
    for _, points in series(summary, varied_parameters(table)):
        names = points["setting"].tolist()
        for a, b in zip(names, names[1:]):
            if a != b and frozenset((a, b)) not in seen:
                seen.add(frozenset((a, b)))
                pairs.append((a, b))
    return pairs


def pair_differences(table: pd.DataFrame, max_settings: int = ALL_PAIRS_MAX_SETTINGS) -> pd.DataFrame:
    """Pairs of private settings: the difference of their mean utility and its standard error over runs.

    Up to ``max_settings`` settings every pair is compared; a larger table
    (an upload may hold thousands, and all pairs grow as their square) compares
    only the neighbours along the lines of the frontier figure, which are the
    pairs the page draws as "cannot be ordered" (see :func:`pair_count`). A
    cancel checkpoint runs between settings.

    Utility per run is already the mean over agents (the adapters write one
    row per run). When both settings ran on the same seeds (a sweep's common
    random numbers, the default), the standard error is that of the per-run
    differences, which cancels the noise the two runs share; otherwise it is
    sqrt(se_a^2 + se_b^2). ``tied`` marks a pair whose difference is within
    one standard error: its runs cannot tell which setting is better.

    Columns: ``a, b`` (setting labels, in sweep order for all pairs, along a
    line for neighbours), ``difference`` (a - b), ``se``, ``paired``, ``tied``.
    """
    columns = ["a", "b", "difference", "se", "paired", "tied"]
    if table is None or not len(table) or "setting" not in table:
        return pd.DataFrame(columns=columns)
    ok = table[table["error"].isna()] if "error" in table else table
    if "role" in ok:
        ok = ok[ok["role"] == "setting"]
    ok = ok[np.isfinite(ok["privacy_loss"].to_numpy(float))] if "privacy_loss" in ok else ok
    keys = _run_keys(ok)
    runs = {}
    for name, group in ok.groupby("setting", sort=False):
        checkpoint()
        values = (group.set_index(keys)["utility"] if keys else group["utility"]).dropna()
        runs[name] = (values, frozenset(values.index) if keys and values.index.is_unique else None,
                      float(values.mean()) if len(values) else np.nan, _stderr(values))
    names = list(runs)
    if len(names) <= max_settings:
        pairs = ((a, b) for i, a in enumerate(names) for b in names[i + 1:])
    else:
        pairs = (p for p in neighbour_pairs(table) if p[0] in runs and p[1] in runs)
    rows = []
    last = None
    for a, b in pairs:
        if a != last:
            checkpoint()
            last = a
        ua, index_a, mean_a, se_a = runs[a]
        ub, index_b, mean_b, se_b = runs[b]
        paired = index_a is not None and index_a == index_b and len(ua) > 1
        if paired:
            diffs = ua - ub.reindex(ua.index)
            difference, se = float(diffs.mean()), _stderr(diffs)
        else:
            difference, se = mean_a - mean_b, float(np.hypot(se_a, se_b))
        rows.append((a, b, difference, se, paired, bool(abs(difference) <= se)))
    return pd.DataFrame(rows, columns=columns)


def ties(pairs: pd.DataFrame) -> dict[str, list[str]]:
    """For every setting, the settings it is tied with (within one standard error), in sweep order."""
    out: dict[str, list[str]] = {}
    for row in pairs[pairs["tied"]].itertuples(index=False):
        out.setdefault(row.a, []).append(row.b)
        out.setdefault(row.b, []).append(row.a)
    return out


def _label(name: str, value) -> str:
    return f"{name}={value:g}" if isinstance(value, (float, np.floating)) else f"{name}={value}"


def is_full_grid(points: pd.DataFrame, names: list[str]) -> bool:
    """True when the points hold every combination of the values of ``names`` exactly once."""
    combos = {tuple(r) for r in points[names].astype(str).itertuples(index=False)}
    sizes = [len(_distinct(points[n])) for n in names]
    return len(combos) == int(np.prod(sizes)) == len(points)


def series(summary: pd.DataFrame, varied: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """Group the private settings into lines for the frontier chart.

    One varied parameter: one line along it. Two on a full grid: one line per
    value of the second along the first. Otherwise (one parameter at a time
    around a base, as in Fig. 3a): one line per parameter, holding the
    settings where only that parameter leaves its most common value; the
    shared base setting belongs to every line.
    """
    points = summary[~summary["reference"]] if "reference" in summary else summary
    if not len(points):
        return []
    varied = [v for v in varied if v in points]
    if not varied:
        return [("settings", points)]
    if len(varied) == 1:
        name = varied[0]
        return [(f"vary {name}", points.sort_values(name, kind="stable"))]
    if len(varied) == 2 and is_full_grid(points, varied):
        along, across = varied
        return [(_label(across, value), group.sort_values(along, kind="stable"))
                for value, group in points.groupby(across, sort=True)]
    modes = {n: points[n].astype(str).mode().iloc[0] for n in varied}
    differs = {n: points[n].astype(str) != modes[n] for n in varied}
    n_diff = sum(d.astype(int) for d in differs.values())
    out = []
    for name in varied:
        members = points[(n_diff == 0) | ((n_diff == 1) & differs[name])]
        if len(members) > 1:
            held = ", ".join(_label(o, points.loc[n_diff == 0, o].iloc[0]) for o in varied
                             if o != name and (n_diff == 0).any())
            label = f"vary {name}" + (f" ({held})" if held else "")
            out.append((label, members.sort_values(name, kind="stable")))
    others = points[n_diff > 1]
    if len(others):
        out.append(("other settings", others))
    return out or [("settings", points)]


def grid(summary: pd.DataFrame, x: str, y: str, value: str = "utility") -> pd.DataFrame:
    """``value`` of the private settings as a matrix: rows ``y``, columns ``x`` (missing cells NaN)."""
    points = summary[~summary["reference"]] if "reference" in summary else summary
    return points.pivot_table(index=y, columns=x, values=value, aggfunc="mean").sort_index().sort_index(axis=1)
