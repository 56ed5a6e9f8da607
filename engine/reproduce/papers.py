"""Running the registered papers' reproductions by name, and one summary table over all of them.

Each module in :data:`engine.reproduce.PAPERS` other than ``dp-fts-de`` (whose command line predates
the registry) exposes ``PARTS``, ``PAPER_RUNS`` and ``reproduce(parts, runs=..., seed=..., progress=...)``
returning ``{"paper", "seed", "parts": {part: {"title", "runs", "claims": [...], ...}}}``; a claim is
``{"claim", "source", "figure", "holds", "verdict", "numbers"}``.
"""

from __future__ import annotations

import importlib
import re

from engine.limits import Cost
from engine.reproduce.claims import DATA_KINDS, VERDICTS, tally


def paper_module(name: str):
    from engine.reproduce import PAPERS

    return importlib.import_module(PAPERS[name])


def paper_parts(name: str) -> tuple[str, ...]:
    return tuple(paper_module(name).PARTS)


def default_parts(name: str) -> tuple[str, ...]:
    """The parts ``python -m engine reproduce NAME`` runs without --parts (its module's ``DEFAULT_PARTS``, else
    every part)."""
    module = paper_module(name)
    return tuple(getattr(module, "DEFAULT_PARTS", module.PARTS))


def paper_runs(name: str) -> int:
    module = paper_module(name)
    return int(getattr(module, "PAPER_RUNS", getattr(module, "LANDMINE_RUNS", 2)))


def paper_cost(name: str, parts, runs: int, *, repetitions: int | None = None, training: str | None = None,
               workers: int = 1) -> Cost:
    """The price of reproducing ``parts`` of paper ``name`` with ``runs`` runs on ``workers`` processes: its
    module's measured ``SECONDS_PER_RUN`` per part and run (score tables and training included, none cached),
    shared among the workers in its ``PARALLEL_PARTS``, and ``MEMORY_MB`` (plus ``WORKER_MEMORY_MB`` a worker
    when a parallel part runs); a module with a ``TRAINING_FACTOR`` (dp-hype) scales it by the training asked
    for."""
    module = paper_module(name)
    parts = tuple(parts)
    shares = getattr(module, "PART_SHARES", None)     # a part's share of the run's price, when they differ
    parallel = set(getattr(module, "PARALLEL_PARTS", ())) & set(parts)
    workers = max(1, int(workers)) if parallel else 1

    def share(part: str) -> float:
        own = shares[part] if shares else 1.0 / max(1, len(module.PARTS))
        return own / workers if part in parallel else own

    # A part with a price of its own (part_price(part, runs) -> (CPU seconds, worker MB)) is not in SECONDS_PER_RUN.
    own = {part: module.part_price(part, runs) for part in parts} if hasattr(module, "part_price") else {}
    own = {part: price for part, price in own.items() if price is not None}
    seconds = module.SECONDS_PER_RUN * sum(share(p) for p in parts if p not in own) * int(runs)
    factors = getattr(module, "TRAINING_FACTOR", {})
    seconds *= factors.get(training or getattr(module, "TRAINING", ""), 1.0)
    seconds += sum(price / (workers if part in parallel else 1) for part, (price, _) in own.items())
    if repetitions is not None and hasattr(module, "SECONDS_PER_REPETITION"):
        seconds += module.SECONDS_PER_REPETITION * int(repetitions)
    worker_mb = max([getattr(module, "WORKER_MEMORY_MB", 0.0)] + [mb for _, mb in own.values()])
    memory = module.MEMORY_MB + (worker_mb * workers if parallel else 0.0)
    return Cost(seconds=seconds, memory_mb=memory, field="runs", knobs=("runs", "parts"))


def run_paper(name: str, parts=None, runs: int | None = None, seed: int = 0, progress=None, **options) -> dict:
    """The reproduction of paper ``name`` (not ``dp-fts-de``) as plain data."""
    module = paper_module(name)
    return module.reproduce(tuple(parts or default_parts(name)), runs=runs or module.PAPER_RUNS, seed=seed,
                            progress=progress, **options)


def claim_figures(claim: dict) -> list[str]:
    """The figures or tables a stored claim is about (its ``figure`` field, else read from its source)."""
    if claim.get("figure"):
        return [claim["figure"]]
    found = re.findall(r"(Fig\. \d+[a-z]?|Table \d+)", claim.get("source", ""))
    return list(dict.fromkeys(found)) or ["other"]


BY_CONSTRUCTION = "by construction"
OTHER_DATA = "other data"
IDENTITIES = "identities"


def tally_key(claim: dict) -> str:
    """Where a tally counts ``claim``: under its verdict (paper's data, stand-ins, generated data), apart when it
    is an identity (an exact computation, no data) or holds by construction, or beside the paper's tally when its
    data is a set the paper did not use."""
    if claim.get("data_kind") == "other":
        return OTHER_DATA
    if claim.get("data_kind") == "identity":
        return IDENTITIES
    if claim.get("by_construction"):
        return BY_CONSTRUCTION
    return tally(claim["verdict"])


def summary_rows(payloads: dict) -> list[dict]:
    """One row per (paper, figure): how many claims hold, are not significant, are reversed and are inconsistent
    (``claims`` = those four + ``by construction`` + ``identities`` + ``other data``), and how many claims of each
    data kind
    (``kinds``); ``other`` counts the verdicts of the claims on other data, reported beside the tally.

    ``payloads`` maps a paper's name to its command-line output (``{"parts": {...}}``).
    """
    rows: dict[tuple, dict] = {}
    for paper, payload in payloads.items():
        for part_name, part in payload.get("parts", {}).items():
            for claim in part.get("claims", []):
                for figure in claim_figures(claim):
                    row = rows.setdefault((paper, figure), {
                        "paper": paper, "figure": figure, "part": part_name, "claims": 0,
                        **{v: 0 for v in VERDICTS}, BY_CONSTRUCTION: 0, IDENTITIES: 0, OTHER_DATA: 0,
                        "kinds": {k: 0 for k in DATA_KINDS}, "other": {v: 0 for v in VERDICTS}})
                    row["claims"] += 1
                    row[tally_key(claim)] += 1
                    row["kinds"][claim.get("data_kind", "paper")] += 1
                    if claim.get("data_kind") == "other":
                        row["other"][tally(claim["verdict"])] += 1
    return list(rows.values())


def data_label(kinds: dict) -> str:
    """"stand-in" or "stand-in 20, other 5": the data kinds of a row's claims."""
    present = {k: n for k, n in kinds.items() if n}
    if len(present) == 1:
        return next(iter(present))
    return ", ".join(f"{k} {n}" for k, n in present.items())


def claim_lines(payload: dict) -> list[str]:
    """A readable list of every part's claims (what the command line prints on stderr)."""
    lines = []
    for part in payload["parts"].values():
        lines.append(f"\n{part['title']} ({part.get('runs', '?')} runs, {part.get('seconds', 0):.0f} s)")
        for c in part["claims"]:
            n = c["numbers"]
            lines.append(f"  [{c['verdict']:>15s}] {c['claim']}: {n['difference']:+.4f} (s.e. {n['stderr']:.4f})"
                         + (f" [{c['why']}]" if c.get("why") else ""))
    return lines
