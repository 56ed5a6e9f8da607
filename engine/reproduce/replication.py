"""The replication half of every verdict: the claims decisive in discovery run again on an independent seed set.

:func:`engine.reproduce.claims.decide` needs, for every claim decisive in discovery (the runs at the command's
seed), the same comparison measured on fresh seeds. :func:`replicate` runs exactly that, and no more, for one
paper's output: the settings the decisive claims compare (an any-of claim: the comparison discovery chose), at the
discovery's runs per setting, seeded with :func:`replication_seed`; then :func:`attach` writes each claim's
``replication`` numbers and the paper's claims are decided again. Claims that are not decisive in discovery
cannot hold whatever a replication says, so they are not run again: this is what keeps a replicated reproduction
affordable (docs/paper-comparisons.md, "How a verdict is decided").

Seeds: every paper seeds run r with ``seed + r`` or with ``derive_seed(seed, block)``; the replication's seed
is ``seed + REPLICATION_OFFSET``, far from any run index, so no run of the replication is a run of the discovery.
``THIRD_OFFSET`` seeds the one further check of the verdicts (benchmarks/third_seed_set.py) and nothing else.
"""

from __future__ import annotations

import dataclasses

from engine.reproduce.claims import decide_payload, deciding

REPLICATION_OFFSET = 100_000
THIRD_OFFSET = 200_000


def replication_seed(seed: int) -> int:
    return int(seed) + REPLICATION_OFFSET


def decisive(payload: dict, keep=()) -> dict[str, dict[str, tuple]]:
    """{part: {claim text: (better, worse)}} of the claims decisive in discovery (the deciding comparison's
    setting keys or labels); in the parts ``keep``, only those without stored replication numbers."""
    out: dict[str, dict[str, tuple]] = {}
    for name, part in payload.get("parts", {}).items():
        for claim in part.get("claims", []):
            if name in keep and claim.get("replication"):
                continue
            if (claim.get("discovery") or {}).get("decisive"):
                n = deciding(claim["numbers"])
                out.setdefault(name, {})[claim["claim"]] = (n.get("better"), n.get("worse"))
    return out


def attach(payload: dict, replication: dict, seed: int, keep=()) -> dict:
    """Write into ``payload``'s decisive claims the numbers of the same comparison in ``replication`` (an output
    of the same paper at the replication seed), then decide the paper's claims again. The parts ``keep`` keep
    the replication numbers they have (a stored part whose design did not change)."""
    for name, part in payload.get("parts", {}).items():
        again = {c["claim"]: c for c in replication.get("parts", {}).get(name, {}).get("claims", [])}
        for claim in part.get("claims", []):
            if name in keep and claim.get("replication") and claim["claim"] not in again:
                continue
            claim.pop("replication", None)
            if not (claim.get("discovery") or {}).get("decisive") or claim["claim"] not in again:
                continue
            chosen = deciding(claim["numbers"])
            numbers = again[claim["claim"]]["numbers"]
            same = [c for c in numbers.get("comparisons", [numbers]) if c.get("better") == chosen.get("better")]
            n = same[0] if same else deciding(numbers)
            claim["replication"] = {"seed": int(seed), "runs": n.get("runs"), "better": n.get("better"),
                                    "difference": n.get("difference"), "stderr": n.get("stderr")}
    return decide_payload(payload)


def restrict(part, wanted: dict[str, tuple]):
    """``part`` (an engine.reproduce.report.Part) with only the claims in ``wanted`` (an any-of claim cut down
    to the comparison discovery chose) and the settings they compare."""
    claims = []
    for claim in part.claims:
        if claim.text not in wanted:
            continue
        better, _ = wanted[claim.text]
        if claim.any_of and better in claim.better:
            claim = dataclasses.replace(claim, better=(better,))
        claims.append(claim)
    keys = {k for c in claims for k in (*c.better, c.worse)}
    return dataclasses.replace(part, settings=tuple(s for s in part.settings if s.key in keys), claims=tuple(claims))


def replicate(paper: str, payload: dict, seed: int, *, jobs=None, progress=None, keep=()) -> dict:
    """``payload`` (paper ``paper``'s output, decided) with every decisive claim replicated at
    :func:`replication_seed` ``(seed)`` and the claims decided again. ``keep``: parts (reused from the stored
    files, their design unchanged) whose stored replication numbers stand; only their decisive claims without
    one are run again."""
    wanted = decisive(payload, keep)
    again_seed = replication_seed(seed)
    if not wanted:
        return attach(payload, {"parts": {}}, again_seed, keep)
    runs = {name: int(part.get("runs", 2)) for name, part in payload["parts"].items()}
    if paper == "dp-fts-de":
        from engine.reproduce.dp_fts_de import PART_SPECS
        from engine.reproduce.report import run_parts

        requests = [(restrict(PART_SPECS[name], claims), runs[name]) for name, claims in wanted.items()]
        results = run_parts(requests, seed=again_seed, jobs=jobs, progress=progress)
        again = {"parts": {name: result.to_json() for name, result in results.items()}}
    elif paper == "fts":
        from engine.reproduce import fts

        specs = {name: restrict(fts.PART_SPECS[name], claims) for name, claims in wanted.items()}
        # Initialisations per landmine target; the synthetic part's runs are functions x initialisations, and the
        # replication draws new functions (its seed set's).
        others = [r for name, r in runs.items() if name != "synthetic"]
        per = min(others) if others else fts.RUNS
        functions = max(2, runs.get("synthetic", fts.FUNCTIONS * fts.INITIALISATIONS) // fts.INITIALISATIONS)
        results = fts.reproduce(tuple(wanted), runs=per, functions=functions, seed=again_seed, jobs=jobs,
                                progress=progress, specs=specs)
        again = {"parts": {name: result.to_json() for name, result in results.items()}}
    elif paper == "dp-hype":
        from engine.reproduce import dp_hype

        again = dp_hype.replicate_parts(wanted, payload, again_seed, jobs=jobs, progress=progress)
    else:
        from engine.reproduce.papers import paper_module

        module = paper_module(paper)
        names = tuple(name for name in wanted if name in module.PARTS)
        again = module.reproduce(names, runs=runs[names[0]], seed=again_seed, progress=progress) if names else {}
    return attach(payload, again, again_seed, keep)


def same_design(stored: dict, part) -> bool:
    """Whether a stored (seed-0) part was made under the part's design: a part that draws its objective per run must
    have stored its draws (``objective_draws`` per setting); one made on a fixed draw (the design before) is not. A
    part with one draw per seed set (a stand-in instance) draws seed 0's instance at seed 0, as before."""
    if getattr(part, "draws", "fixed") in ("fixed", "seed-set"):
        return True
    return all("objective_draws" in s for s in stored.get("settings", [])) and bool(stored.get("settings"))


def reusable(paper: str, parts) -> dict:
    """{part: its stored discovery (seed 0)} of the ``parts`` whose stored claims the engine still makes, for
    ``reproduce --reuse-stored``: DP-FTS-DE's and FTS's parts whose claim sentences are the engine's, and
    DP-HYPE's data part with its claims made again from its stored cells (per-run numbers). PO-GP-UCB runs
    in about a minute and always runs."""
    import copy

    from engine.reproduce.margins import remargin

    out = {}
    if paper in ("dp-fts-de", "fts"):
        if paper == "fts":
            from engine.reproduce import fts

            stored = (fts.stored() or {}).get("output", {}).get("parts", {})
            specs = fts.PART_SPECS
        else:
            from engine.reproduce.dp_fts_de import PART_SPECS as specs
            from engine.reproduce.stored_papers import stored_payload

            stored = (stored_payload("dp-fts-de") or {}).get("parts", {})
        for name in parts:
            part = stored.get(name)
            if part and [c["claim"] for c in part["claims"]] == [c.text for c in specs[name].claims] \
                    and same_design(part, specs[name]):
                out[name] = copy.deepcopy(part)
                remargin(out[name]["claims"])
    elif paper == "dp-hype" and "data" in parts:
        from engine.reproduce.dp_hype import data_from_cells
        from engine.reproduce.stored_papers import stored_payload

        part = (stored_payload("dp-hype") or {}).get("parts", {}).get("data")
        if part:
            out["data"] = data_from_cells(copy.deepcopy(part))
    return out
