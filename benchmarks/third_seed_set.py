"""The stored verdicts re-judged on a third seed set, used for nothing else: how many decisive ones a fresh seed
overturns (holds <-> reversed) or turns not significant.

For every stored claim of a paper whose verdict is decisive (holds, reversed, differs) and rests on runs, the
same comparison is run again at seed ``THIRD_OFFSET`` (200000: neither the discovery's 0 nor the replication's
100000), at the stored runs per setting, on the settings those claims compare only
(engine.reproduce.replication.restrict); generated parts draw new objectives there, as every seed set does. A
claim on the third set is *confirmed* when its one-sided p in the stored verdict's direction is below 0.05 (over
its units: runs, or objective draws), *overturned* when its two-sided p is below 0.05 the opposite way, *not
significant* otherwise. Nothing is tuned on it: the verdicts stay those of discovery and replication.

Usage::

    DPBO_DATA_DIR=../shared/datasets python -m benchmarks.third_seed_set [--papers po-gp-ucb,dp-fts-de] [--workers 2]

``dp-fts-de`` means its synthetic parts (synthetic, synthetic-appendix, heterogeneous); ``fts`` its synthetic part
unless ``--parts`` says otherwise. Prints a JSON summary and
writes it to ``benchmarks/results/third_seed_set.json`` (``--out``); with ``--provenance`` also into
``data/reproduction/provenance.json`` under ``"third_seed_set"``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import date
from pathlib import Path

from benchmarks import RESULTS
from engine.reproduce.claims import ALPHA, deciding, p_one_sided, p_two_sided, signed_z, tally, test_of, units_of
from engine.reproduce.replication import THIRD_OFFSET, restrict

SYNTHETIC_PARTS = ("synthetic", "synthetic-appendix", "heterogeneous")


def decisive_claims(payload: dict, parts) -> dict[str, dict[str, tuple]]:
    """{part: {claim text: (better, worse)}} of the stored claims decisive under the rule and judged over runs."""
    out: dict[str, dict[str, tuple]] = {}
    for name in parts:
        for claim in payload["parts"].get(name, {}).get("claims", []):
            if tally(claim["verdict"]) in ("holds", "reversed") and test_of(claim) in ("difference", "any-of",
                                                                                       "equivalence"):
                n = deciding(claim["numbers"])
                out.setdefault(name, {})[claim["claim"]] = (n.get("better"), n.get("worse"))
    return out


def third_run(paper: str, payload: dict, wanted: dict, seed: int, workers: int, runs_per: int | None = None) -> dict:
    """The paper's output for the ``wanted`` claims at ``seed`` (``runs_per`` runs per setting, else the stored)."""
    runs = {name: runs_per or int(payload["parts"][name]["runs"]) for name in wanted}
    if paper == "dp-fts-de":
        from engine.reproduce.dp_fts_de import PART_SPECS
        from engine.reproduce.report import run_parts

        results = run_parts([(restrict(PART_SPECS[n], c), runs[n]) for n, c in wanted.items()], seed=seed,
                            jobs=workers)
        return {"parts": {name: r.to_json() for name, r in results.items()}}
    if paper == "fts":
        from engine.reproduce import fts

        specs = {n: restrict(fts.PART_SPECS[n], c) for n, c in wanted.items()}
        per = min([r for n, r in runs.items() if n != "synthetic"] or [fts.RUNS])
        functions = runs.get("synthetic", fts.FUNCTIONS * fts.INITIALISATIONS) // fts.INITIALISATIONS
        results = fts.reproduce(tuple(wanted), runs=per, functions=functions, seed=seed, jobs=workers, specs=specs)
        return {"parts": {name: r.to_json() for name, r in results.items()}}
    from engine.reproduce.papers import paper_module

    return paper_module(paper).reproduce(tuple(wanted), runs=runs[next(iter(wanted))], seed=seed)


def judge_third(payload: dict, again: dict, wanted: dict) -> dict:
    """Confirmed / not significant / overturned counts, and the claims that were not confirmed."""
    counts = {"decisive": 0, "confirmed": 0, "not significant": 0, "overturned": 0}
    changed = []
    for name, claims in wanted.items():
        stored = {c["claim"]: c for c in payload["parts"][name]["claims"]}
        fresh = {c["claim"]: c for c in again["parts"][name]["claims"]}
        for text in claims:
            claim, other = stored[text], fresh[text]
            chosen = deciding(claim["numbers"])
            numbers = other["numbers"]
            same = [c for c in numbers.get("comparisons", [numbers]) if c.get("better") == chosen.get("better")]
            n = same[0] if same else deciding(numbers)
            margin = claim["numbers"].get("equivalence_margin")
            if margin is not None:
                z = None if not n.get("stderr") else (margin - abs(n["difference"])) / n["stderr"]
            else:
                z = signed_z(n.get("difference"), n.get("stderr"))
            way = 1.0 if tally(claim["verdict"]) == "holds" else -1.0
            counts["decisive"] += 1
            if z is not None and p_one_sided(way * z, units_of(n)) < ALPHA:
                outcome = "confirmed"
            elif z is not None and p_two_sided(z, units_of(n)) < ALPHA:
                outcome = "overturned"
            else:
                outcome = "not significant"
            counts[outcome] += 1
            if outcome != "confirmed":
                changed.append({"part": name, "claim": text, "stored": claim["verdict"], "third": outcome,
                                "difference": n.get("difference"), "stderr": n.get("stderr"), "z": z})
    return {**counts, "not confirmed": changed}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", default="po-gp-ucb,dp-fts-de")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=THIRD_OFFSET)
    parser.add_argument("--parts", default=None, help="dp-fts-de's parts to re-judge (default: its synthetic parts)")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per setting (default: the stored count; fewer detect less, the output says so)")
    parser.add_argument("--out", default=str(RESULTS / "third_seed_set.json"))
    parser.add_argument("--provenance", action="store_true")
    args = parser.parse_args(argv)
    from engine.reproduce.stored_papers import STORED_DIR, stored_payload

    summary = {"seed": args.seed, "date": date.today().isoformat(), "load_average_start": os.getloadavg()[0],
               "command": "python -m benchmarks.third_seed_set " + " ".join(argv or sys.argv[1:]), "papers": {}}
    started = time.perf_counter()
    for paper in args.papers.split(","):
        payload = stored_payload(paper)
        defaults = {"dp-fts-de": SYNTHETIC_PARTS, "fts": ("synthetic",)}
        parts = ((tuple(args.parts.split(",")) if args.parts else defaults[paper]) if paper in defaults
                 else tuple(payload["parts"]))
        wanted = decisive_claims(payload, parts)
        t0 = time.perf_counter()
        again = third_run(paper, payload, wanted, args.seed, args.workers, args.runs)
        summary["papers"][paper] = {"parts": list(wanted), "runs": {n: p["runs"] for n, p in again["parts"].items()},
                                    **judge_third(payload, again, wanted),
                                    "wall_seconds": round(time.perf_counter() - t0, 1)}
        print(paper, {k: v for k, v in summary["papers"][paper].items() if k != "not confirmed"}, file=sys.stderr)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    summary["load_average_end"] = os.getloadavg()[0]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    if args.provenance:
        path = Path(STORED_DIR) / "provenance.json"
        provenance = json.loads(path.read_text())
        earlier = provenance.get("third_seed_set", {}).get("runs", [])
        # One entry per command (a paper re-judged again replaces its earlier entry).
        kept = [r for r in earlier if not set(r["papers"]) & set(summary["papers"])]
        provenance["third_seed_set"] = {"seed": args.seed, "runs": kept + [summary]}
        path.write_text(json.dumps(provenance, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
