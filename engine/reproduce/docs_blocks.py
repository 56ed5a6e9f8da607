"""The tables and notes of docs/paper-comparisons.md that quote stored results, made from the stored JSON.

The doc marks each such block::

    <!-- generated: claims:dp-fts-de:landmine -->
    ...made by this module...
    <!-- end generated -->

and :func:`fill` remakes every block from ``data/reproduction/``; tests/test_sentences.py checks that the doc
equals its filled self, so no table or note in it can quote a verdict the JSON does not hold.
``python -m benchmarks.rejudge_stored --docs`` rewrites the doc after the stored files change. Blocks:

- ``tallies``: verdicts per paper and data kind (engine.reproduce.tallies);
- ``power``: the whole rule's chance of "holds" at the paper's own effect, where the paper prints it;
- ``claims:PAPER:PART`` and ``checkpoints:PAPER:PART``: a stored part's claims with their verdicts, numbers,
  replication and power, and its settings at the checkpoints;
- ``ablations``: every ablation's rows, both sides judged by the one rule;
- ``note:NAME``: an investigation (engine.reproduce.investigations, by its constant's name) or
  ``conclusion:PAPER:FIGURE`` (engine.reproduce.conclusions), rendered.
"""

from __future__ import annotations

import math
import re

BLOCK = re.compile(r"(<!-- generated: (.+?) -->\n)(.*?)(<!-- end generated -->)", re.S)


def _cell(text) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def claims_table(part: dict) -> str:
    from engine.reproduce.claims import deciding
    from engine.reproduce.stats import numbers_text, verdict_text

    lines = ["| verdict | the paper's claim | difference ± s.e. (over units) | replication | the rule could detect "
             "(80 %) | where |", "| --- | --- | --- | --- | --- | --- |"]
    for claim in part["claims"]:
        power = claim.get("power") or {}
        if power.get("at_zero") is not None:
            detect = f"P(holds) if alike {power['at_zero']:.2f} (margin ±{claim['numbers']['equivalence_margin']:.4f})"
        elif power.get("detectable") is not None:
            detect = f"{power['detectable']:.4f}"
        else:
            detect = ""
        n = deciding(claim["numbers"])
        numbers = numbers_text(claim["numbers"]) if n.get("stderr") is not None or "ratio" not in n else \
            f"ratio {n['ratio']:.2f}"
        lines.append(f"| {verdict_text(claim)} | {_cell(claim['claim'])} | {numbers} | "
                     f"{numbers_text(claim.get('replication')) if claim.get('replication') else ''} | {detect} | "
                     f"{_cell(claim['source'])} |")
    return "\n".join(lines)


def checkpoints_table(part: dict) -> str:
    checkpoints = part.get("checkpoints") or []
    lines = ["| setting | ε after T | clipped % | " + " | ".join(f"t = {t}" for t in checkpoints) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in checkpoints) + " |"]
    for setting in part.get("settings", []):
        cells = []
        for t in checkpoints:
            point = setting.get("checkpoints", {}).get(str(t))
            ok = point is not None and point.get("stderr") is not None and math.isfinite(point["stderr"])
            cells.append(f"{point['mean']:.4f} ({point['stderr']:.4f})" if ok else "")
        eps = setting.get("epsilon")
        clipped = setting.get("clipped_percent")
        lines.append(f"| {_cell(setting['label'])} | {'' if eps is None else f'{eps:.2f}'} | "
                     f"{'' if clipped is None else f'{clipped:.2f}'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def power_table(payloads: dict) -> str:
    """Every claim whose paper prints its effect (or a sameness claim): the chance the whole rule says "holds" at
    that effect (at no difference, for sameness), beside the difference the rule confirms with 80 % chance."""
    from engine.reproduce.stats import deciding, verdict_text

    lines = ["| paper | the paper's claim | verdict | the paper's effect | P(holds) at it | s.e. | the rule could "
             "detect (80 %) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for paper, payload in payloads.items():
        for part in payload["parts"].values():
            for claim in part["claims"]:
                power = claim.get("power") or {}
                alike = power.get("at_zero")
                if power.get("at_paper") is None and alike is None:
                    continue
                n = deciding(claim["numbers"])
                effect = "alike (margin " + f"{claim['numbers']['equivalence_margin']:.4f})" if alike is not None \
                    else f"{power['paper_effect']:+.4f}"
                chance = alike if alike is not None else power["at_paper"]
                detect = "" if power.get("detectable") is None else f"{power['detectable']:.4f}"
                lines.append(f"| {paper} | {_cell(claim['claim'])} | {verdict_text(claim)} | {effect} | "
                             f"{chance:.2f} | {n['stderr']:.4f} | {detect} |")
    return "\n".join(lines)


def block(name: str, folder=None) -> str:
    """The markdown of one generated block."""
    from engine.reproduce.stored_papers import stored_beside, stored_payload

    kind, _, rest = name.partition(":")
    if kind == "tallies":
        from engine.reproduce.tallies import stored_tallies, tally_markdown

        return tally_markdown(stored_tallies(folder))
    if kind in ("claims", "checkpoints"):
        paper, part_name = rest.split(":", 1)
        parts = {**(stored_payload(paper, folder) or {}).get("parts", {}), **stored_beside(paper, folder)}
        part = parts[part_name]
        return claims_table(part) if kind == "claims" else checkpoints_table(part)
    if kind == "power":
        from engine.reproduce.stored_papers import stored_payloads

        return power_table(stored_payloads(folder))
    if kind == "ablations":
        from engine.reproduce.ablation_tables import ablation_markdown, stored_ablations

        return ablation_markdown(stored_ablations(folder) or {"ablations": {}})
    if kind == "note":
        from engine.reproduce import investigations
        from engine.reproduce.sentences import render

        return render(getattr(investigations, rest), folder)
    if kind == "conclusion":
        from engine.reproduce.conclusions import conclusion

        paper, figure = rest.split(":", 1)
        return conclusion(paper, figure, folder) or ""
    raise KeyError(f"unknown generated block {name!r}")


def fill(text: str, folder=None) -> str:
    """``text`` with every generated block made again from the stored JSON."""
    return BLOCK.sub(lambda m: m.group(1) + block(m.group(2), folder).rstrip("\n") + "\n" + m.group(4), text)


def names(text: str) -> list[str]:
    """The generated blocks ``text`` marks."""
    return [m.group(2) for m in BLOCK.finditer(text)]
