"""Re-decide every stored reproduction under the current rule, without running anything, and write the tallies.

    python -m benchmarks.rejudge_stored [--folder data/reproduction] [--split FILE]

Every stored file keeps its numbers; what the rule derives from them is made again: each sameness claim's
margin from the registry (engine.reproduce.margins), the data kinds of the identities (Fig. 11's privacy
losses, DP-HYPE's formulas), the verdicts of each paper's claims decided together (engine.reproduce.claims:
BH, one-sided replication, readings, power), the ablation family (engine.reproduce.ablation_rule), and
``tallies.json`` (engine.reproduce.tallies). ``--split FILE``: a ``reproduce dp-fts-de`` output to store first,
one file per part, as the command printed it. ``--docs``: remake docs/paper-comparisons.md's generated blocks.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.reproduce.claims import decide
from engine.reproduce.margins import remargin

IDENTITY_PARTS = {"dp-fts-de": ("landmine-renyi",), "dp-hype": ("communication", "noise")}


def _dump(path: Path, payload: dict, indent: int | None = None) -> None:
    path.write_text(json.dumps(payload, indent=indent) + "\n")


def _identities(paper: str, parts: dict) -> None:
    for name, part in parts.items():
        for claim in part.get("claims", []):
            exact_formula = paper == "dp-hype" and name == "simulation" and claim.get("test") == "exact" \
                and claim.get("by_construction")
            if name in IDENTITY_PARTS.get(paper, ()) or exact_formula:
                claim["data_kind"] = "identity"


def rejudge(folder: Path) -> dict:
    """Re-decide every stored paper in ``folder``; returns {file: verdicts changed}."""
    from engine.reproduce.ablation_rule import decide_ablations
    from engine.reproduce.claims import counts

    changed = {}
    files = {"dp-fts-de": sorted(folder.glob("dp-fts-de-*.json"))}
    for paper in ("fts", "po-gp-ucb", "dp-hype", "dp-hype-fashion-mnist"):
        files[paper] = [folder / f"{paper}.json"]
    for paper, paths in files.items():
        payloads = {path: json.loads(path.read_text()) for path in paths if path.is_file()}
        claims = []
        for payload in payloads.values():
            _identities(paper, payload["parts"])
            for part in payload["parts"].values():
                claims += remargin(part.get("claims", []))
        before = [c["verdict"] for c in claims]
        decide(claims)
        changed[paper] = sum(a != c["verdict"] for a, c in zip(before, claims))
        for path, payload in payloads.items():
            for part in payload["parts"].values():
                if "counts" in part:
                    part["counts"] = counts(part["claims"])
            _dump(path, payload)
    ablations = folder / "ablations.json"
    if ablations.is_file():
        _dump(ablations, decide_ablations(json.loads(ablations.read_text())), indent=1)
    write_tallies(folder)
    return changed


def write_tallies(folder: Path) -> dict:
    from engine.reproduce import stored_papers
    from engine.reproduce.tallies import TALLIES_FILE, stored_tallies

    stored_papers.forget()
    tallies = stored_tallies(folder)
    (folder / TALLIES_FILE).write_text(json.dumps(tallies, indent=1) + "\n")
    return tallies


def split(output: Path, folder: Path) -> list[str]:
    """Store a ``reproduce dp-fts-de`` output one file per part (the command's shape, one part each)."""
    payload = json.loads(output.read_text())
    names = []
    for name, part in payload["parts"].items():
        one = {key: value for key, value in payload.items() if key not in ("parts", "reused")}
        one["parts"] = {name: part}
        _dump(folder / f"dp-fts-de-{name}.json", one)
        names.append(name)
    return names


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="data/reproduction")
    parser.add_argument("--split", default=None)
    parser.add_argument("--docs", action="store_true", help="remake docs/paper-comparisons.md's generated blocks")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    if args.split:
        print("stored:", ", ".join(split(Path(args.split), folder)))
    print(json.dumps(rejudge(folder)))
    if args.docs:
        from engine.reproduce import sentences
        from engine.reproduce.ablation_tables import forget
        from engine.reproduce.docs_blocks import fill

        sentences.clear()
        forget()
        doc = Path("docs/paper-comparisons.md")
        doc.write_text(fill(doc.read_text(), None if args.folder == "data/reproduction" else folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
