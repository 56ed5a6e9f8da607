"""The settings advisor's evidence: its pick against the papers' own setting on fresh seeds, every case stored as
it finishes in ``data/advise/evidence.json`` (engine/advise/evidence.py says what is fixed and how it is judged).

    nice -n 10 python -m benchmarks.advisor_evidence            # every case not stored yet, then the verdicts
    python -m benchmarks.advisor_evidence --decide-only         # the verdicts of the stored cases again

Needs the landmine data (``DPBO_DATA_DIR``). Each case: the default search (what ``dpbo advise`` does) on two local
worker processes, then 2 x 40 paired runs of the pick and of the paper's setting.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

import numpy as np

from engine.advise import advice_of_search, iter_search
from engine.advise.evidence import RUNS, case_id, case_requests, decide_cases, judge, table_rows
from engine.executor import Executor, use

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "advise" / "evidence.json"
PROTOCOL = 2
FIRST_NOTE = ("The first protocol (streams 7 and 8; 12 validation runs of the pick, the same validation seeds for "
              "every request) was stopped after 5 of its 12 cases: its pick beat the paper's setting in the 4 "
              "synthetic cases in both streams, but the predicted utility was below the fresh runs' in all 4 "
              "(z 1.9 to 4.1), because those 4 cases shared one unusually easy sample of 12 objective draws "
              "(the pick's mean there 0.0032 against 0.0055 on 36 further validation seeds, 0.0058 on 48 of a "
              "fresh stream). The search was revised (24 validation runs of the pick, seeds derived from each "
              "request, a Student's t interval) and judged again on streams 9 and 10, never looked at before.")


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()


# The code this process runs: the commit when it started, and whether the engine differed from it then.
COMMIT = git("rev-parse", "--short", "HEAD")
ENGINE_CHANGED = bool(git("status", "--porcelain", "--", "engine"))


def load() -> dict:
    if OUT.is_file():
        payload = json.loads(OUT.read_text())
        if payload.get("protocol") != PROTOCOL:        # the first protocol's cases: kept, judged apart
            payload = {"protocol": PROTOCOL, "provenance": dict(payload["provenance"], runs_per_stream=RUNS),
                       "cases": [], "first_protocol": {"note": FIRST_NOTE, "cases": payload["cases"]}}
        return payload
    return {"protocol": PROTOCOL, "provenance": {
                "what": "the settings advisor's pick against the papers' settings, on fresh seeds",
                           "command": "nice -n 10 python -m benchmarks.advisor_evidence",
                           "runs_per_stream": RUNS, "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                           "shared by up to five engineers", "python": platform.python_version(),
                           "numpy": np.__version__}, "cases": []}


def save(payload: dict) -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")


def run_case(request, workers: int) -> dict:
    start_cpu, start = cpu(), time.perf_counter()
    load_before = os.getloadavg()[0]
    with use(Executor("joblib", workers=workers)):
        search = None
        for search in iter_search(request):
            pass
        advice = advice_of_search(search).to_json()
        search_cpu, search_wall = cpu() - start_cpu, time.perf_counter() - start
        case = judge(request, advice)
    case["advice"] = {k: advice[k] for k in ("recommended", "tied", "references", "search", "metric", "delta")}
    case["made"] = {"date": datetime.date.today().isoformat(), "engine_commit": COMMIT,
                    "engine_uncommitted_changes": ENGINE_CHANGED,
                    "search_cpu_seconds": round(search_cpu, 1), "search_wall_seconds": round(search_wall, 1),
                    "cpu_seconds": round(cpu() - start_cpu, 1), "wall_seconds": round(time.perf_counter() - start, 1),
                    "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)]}
    return case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--decide-only", action="store_true")
    args = parser.parse_args()
    payload = load()
    done = {case["case"] for case in payload["cases"]}
    if not args.decide_only:
        for request in case_requests():
            if case_id(request) in done:
                continue
            print(f"{case_id(request)} ...", flush=True)
            case = run_case(request, args.workers)
            payload["cases"].append(case)
            save(payload)
            print(f"  pick {case['pick']} | {case['made']}", flush=True)
    decide_cases(payload["cases"])
    if payload.get("first_protocol"):
        decide_cases(payload["first_protocol"]["cases"])
    payload["provenance"]["decided"] = datetime.date.today().isoformat()
    save(payload)
    for row in table_rows(payload["cases"]):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
