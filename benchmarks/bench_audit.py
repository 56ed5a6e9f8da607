"""Benchmark the privacy audits: the figures the docs show, their cost, and which negative control each catches.

Sections (all on the DP-FTS-DE server at the paper's settings unless said: q = 0.25, z = 1, S = 11, P = 1,
delta = 1e-5, the PLD claim; CPU seconds are this process's, measured with ``time.process_time``, beside the
wall time and the machine's load, which other people's work shares):

1. ``many-trial``: one release (claim 2.707) at 10^6 trials, and at as many trials as ``--seconds`` of CPU
   afford (measured rate from a 10^7-trial run, then one run of that size): the bound as a fraction of the claim,
   its curve against the trials (10^4 up), the cost. The same at the paper's T = 40 releases (claim 11.28).
2. ``one-run``: T = 40 releases with 10^3 and 10^4 canaries, seeds 0-4: the one-run bound (Steinke et al.) and
   the f-DP one beside the claim, its curve against the canaries, the cost.
3. ``controls``: every negative control against both audits (the many-trial settings of tests/test_audit.py, the
   one-run's at z = 2, whose claim one run can reach) and a Flower strategy's public-seed copy: caught or not.
4. ``single``: 10^6 trials of one server release and of one vote in a fresh interpreter each, with peak memory.

``--figure`` draws the many-trial curve of section 1 (the page's figure) into docs/images/audit_trials.png with
headless Chromium.

Usage::

    nice -n 10 python -m benchmarks.bench_audit [--seconds 60] [--sections many-trial one-run controls single]
        [--figure]

Prints JSON and writes it to ``benchmarks/results/bench_audit.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("many-trial", "one-run", "controls", "single")
PAPER = dict(q=0.25, z=1.0, S=11.0, P=1, delta=1e-5)
CHROMIUM = "/usr/bin/chromium"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def timed(work):
    wall, cpu, before = time.perf_counter(), time.process_time(), load()
    out = work()
    return out, dict(cpu_seconds=round(time.process_time() - cpu, 2), wall_seconds=round(time.perf_counter() - wall, 2),
                     load_before=before, load_after=load())


def many_trial(seconds: float) -> dict:
    from engine.audit import ServerAudit, run_audit

    out = {}
    for steps in (1, 40):
        rows = {}
        # The rate, from a run one tenth of a minute's worth at T = 1 (a tenth of that at T = 40).
        probe_trials = 10_000_000 if steps == 1 else 250_000
        probe, cost = timed(lambda: run_audit(ServerAudit(**PAPER, steps=steps, trials=probe_trials, seed=0)))
        rate = probe_trials / max(cost["cpu_seconds"], 1e-9)
        budget = int(seconds * rate) // 1000 * 1000
        for label, trials in (("1e6", 1_000_000), (f"{seconds:g} s of CPU", budget)):
            result, cost = timed(lambda: run_audit(ServerAudit(**PAPER, steps=steps, trials=trials, seed=0)))
            rows[label] = dict(trials=trials, epsilon_claimed=round(result.epsilon_claimed, 4),
                               epsilon_lower=round(result.epsilon_lower, 4),
                               fraction=round(result.epsilon_lower / result.epsilon_claimed, 3),
                               statistic=result.statistic_used, tpr=result.tpr, fpr=result.fpr,
                               curve=[(int(n), round(e, 4)) for n, e in result.curve], **cost)
            print(json.dumps({f"T={steps} {label}": {k: v for k, v in rows[label].items() if k != "curve"}}),
                  file=sys.stderr)
        rows["trials_per_cpu_second"] = round(rate)
        out[f"T={steps}"] = rows
    return out


def one_run() -> dict:
    from engine.audit import OneRunAudit, run_one_run

    out = {}
    for canaries in (1_000, 10_000):
        rows = []
        for seed in range(5):
            result, cost = timed(lambda: run_one_run(OneRunAudit(**PAPER, steps=40, canaries=canaries, seed=seed)))
            rows.append(dict(seed=seed, epsilon_claimed=round(result.epsilon_claimed, 4),
                             epsilon_lower=round(result.epsilon_lower, 4),
                             epsilon_fdp=round(result.bound.epsilon_fdp, 4),
                             by_canaries=[(n, round(e, 4)) for n, e in result.bound.nested], **cost))
        lows = [r["epsilon_lower"] for r in rows]
        fdps = [r["epsilon_fdp"] for r in rows]
        out[str(canaries)] = dict(claim=rows[0]["epsilon_claimed"], lower_mean=round(float(np.mean(lows)), 3),
                                  lower_min=min(lows), lower_max=max(lows), fdp_mean=round(float(np.mean(fdps)), 3),
                                  fraction=round(float(np.mean(lows)) / rows[0]["epsilon_claimed"], 3),
                                  cpu_seconds_mean=round(float(np.mean([r["cpu_seconds"] for r in rows])), 2),
                                  runs=rows)
        print(json.dumps({f"one-run {canaries}": {k: v for k, v in out[str(canaries)].items() if k != "runs"}}),
              file=sys.stderr)
    return out


def controls() -> list[dict]:
    from engine.audit import OneRunAudit, ServerAudit, run_audit, run_one_run

    many = {"half-noise": dict(trials=400_000, noise_scale=0.5),
            "no-subsampling": dict(q=0.1, trials=400_000, control="no-subsampling"),
            "reused-noise": dict(steps=3, trials=100_000, control="reused-noise"),
            "public-seed": dict(steps=4, trials=100_000, control="public-seed")}
    once = {"half-noise": dict(steps=1, noise_scale=0.5), "no-subsampling": dict(steps=1, control="no-subsampling"),
            "reused-noise": dict(steps=2, control="reused-noise"), "public-seed": dict(steps=1, control="public-seed")}
    rows = []
    for name in many:
        trials, cost = timed(lambda: run_audit(ServerAudit(seed=0, **many[name])))
        single, cost1 = timed(lambda: run_one_run(OneRunAudit(z=2.0, canaries=1_000, seed=0, **once[name])))
        rows.append(dict(control=name, many_trial=dict(settings=many[name], claim=round(trials.epsilon_claimed, 3),
                                                       lower=round(trials.epsilon_lower, 3),
                                                       caught=bool(trials.violation), **cost),
                         one_run=dict(settings=dict(z=2.0, canaries=1_000, **once[name]),
                                      claim=round(single.epsilon_claimed, 3), lower=round(single.epsilon_lower, 3),
                                      caught=bool(single.violation), **cost1)))
        print(json.dumps(rows[-1]), file=sys.stderr)
    try:
        from engine.flower.one_run import StrategyOneRun, strategy_one_run
    except ImportError:
        return rows
    for strategy in ("dp-fts-de", "dp-fts-de-public-seed"):
        result, cost = timed(lambda: strategy_one_run(StrategyOneRun(strategy=strategy, canaries=500, steps=1,
                                                                     z=2.0, seed=0)))
        rows.append(dict(control=f"flower {strategy}", one_run=dict(claim=round(result.epsilon_claimed, 3),
                                                                    lower=round(result.epsilon_lower, 3),
                                                                    caught=bool(result.violation), **cost)))
        print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


CHILD = """
import json, resource, time
from engine.audit import ServerAudit, VoteAudit, run_audit
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
wall, cpu = time.perf_counter(), time.process_time()
result = run_audit({config})
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps(dict(wall_seconds=round(wall, 3), cpu_seconds=round(cpu, 3),
                      peak_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      rss_after_imports_mib=round(base / 1024, 1), epsilon_claimed=round(result.epsilon_claimed, 3),
                      epsilon_lower=round(result.epsilon_lower, 3))))
"""
SINGLE = {"single-server": "ServerAudit(q=0.25, z=1.0, trials=1_000_000, seed=0)",
          "single-votes": "VoteAudit(epsilon=1.0, k=5, trials=1_000_000, seed=0)"}


def single() -> dict:
    out = {}
    for case, config in SINGLE.items():
        done = subprocess.run([sys.executable, "-c", CHILD.format(config=config)], cwd=ROOT, capture_output=True,
                              text=True, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        out[case] = dict(json.loads(done.stdout), load=load())
        print(json.dumps({case: out[case]}), file=sys.stderr)
    return out


def figure(stored: dict, seconds: float) -> Path:
    """The page's bound-against-trials figure of the 60 s run, drawn by headless Chromium into docs/images."""
    import plotly.graph_objects as go
    from playwright.sync_api import sync_playwright

    row = stored["many-trial"]["T=1"][f"{seconds:g} s of CPU"]
    kept = [row["curve"][0]]
    for point in row["curve"][1:]:             # a point each time the trials grow by 20 % (and the last)
        if point[0] >= 1.2 * kept[-1][0] or point is row["curve"][-1]:
            kept.append(point)
    trials, bounds = zip(*kept)
    fig = go.Figure(go.Scatter(x=trials, y=bounds, mode="lines+markers", name="audited lower bound (95 %)",
                               line=dict(color="#2ca02c", width=3)))
    fig.add_hline(y=row["epsilon_claimed"], line=dict(color="#7f7f7f", dash="dash", width=2),
                  annotation_text=f"claimed ε {row['epsilon_claimed']:.3g}", annotation_position="top left")
    fig.add_hline(y=0.8 * row["epsilon_claimed"], line=dict(color="#bbbbbb", dash="dot", width=1.5),
                  annotation_text="0.8 × the claim", annotation_position="bottom right")
    fig.update_layout(title=f"DP-FTS-DE server, q = 0.25, z = 1, one release: the lower bound against the trials "
                            f"({row['trials']:,} in {row['cpu_seconds']:.0f} s of CPU)",
                      xaxis=dict(title="trials (log scale)", type="log", exponentformat="power"),
                      yaxis=dict(title="ε", rangemode="tozero"), width=1100, height=520, template="plotly_white",
                      showlegend=False)
    html = ROOT / "benchmarks" / "results" / "audit_trials.html"
    fig.write_html(html, include_plotlyjs=True, full_html=True)
    path = ROOT / "docs" / "images" / "audit_trials.png"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1140, "height": 560})
        page.goto(html.as_uri())
        page.wait_for_selector(".main-svg", timeout=60_000)
        page.screenshot(path=str(path))
        browser.close()
    html.unlink()
    return path


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU seconds of the largest many-trial audit")
    parser.add_argument("--sections", nargs="*", choices=SECTIONS, default=list(SECTIONS),
                        help="sections to run (none: only redraw --figure from the stored results)")
    parser.add_argument("--figure", action="store_true", help="draw docs/images/audit_trials.png")
    args = parser.parse_args(argv)
    path = ROOT / "benchmarks" / "results" / "bench_audit.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    work = {"many-trial": lambda: many_trial(args.seconds), "one-run": one_run, "controls": controls,
            "single": single}
    if args.sections:
        results.update(started=time.strftime("%Y-%m-%d %H:%M"), load_at_start=load())
        for section in args.sections:
            results[section] = work[section]()
        results["load_at_end"] = load()
        save_results("bench_audit.json", results)
    if args.figure:
        print(f"figure: {figure(results, args.seconds)}", file=sys.stderr)
    print(json.dumps({k: v for k, v in results.items() if k != "many-trial"}, indent=1, default=str)[:4000])
    return results


if __name__ == "__main__":
    main()
