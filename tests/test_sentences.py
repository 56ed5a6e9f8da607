"""Every sentence that cites a verdict is made from the stored JSON: the investigations, the conclusions, the docs'
tables and notes; and the tallies per paper and data kind are their claims counted. A sentence that names a
verdict the JSON does not hold fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.reproduce import sentences
from engine.reproduce.conclusions import CONCLUSIONS
from engine.reproduce.docs_blocks import BLOCK, fill, names
from engine.reproduce.investigations import TEMPLATES
from engine.reproduce.sentences import FIELD, MissingVerdict, render, verdict_text, verdict_words
from engine.reproduce.stored import STORED_DIR
from engine.reproduce.stored_papers import stored_beside, stored_payloads
from engine.reproduce.tallies import TALLIES_FILE, kind_tally, stored_tallies

ROOT = Path(__file__).resolve().parents[1]
ALL_TEMPLATES = list(TEMPLATES) + list(CONCLUSIONS.values())


@pytest.mark.parametrize("template", ALL_TEMPLATES)
def test_a_notes_prose_names_no_verdict_outside_its_fields(template):
    assert verdict_words(template) == [], template[:80]


def _stored_claims() -> dict:
    payloads = stored_payloads()
    out = {}
    for paper, payload in payloads.items():
        parts = {**payload["parts"], **stored_beside(paper)}
        out[paper] = [c for part in parts.values() for c in part["claims"]]
    return out


def test_every_verdict_a_note_cites_is_the_stored_claims_verdict():
    claims = _stored_claims()
    checked = 0
    for template in ALL_TEMPLATES:
        render(template)                                   # every field names something the JSON holds
        for kind, args in FIELD.findall(template):
            if kind != "v":
                continue
            paper, start = args.split("|")
            stored = next(c for c in claims[paper] if c["claim"].startswith(start))
            assert render("{v:" + args + "}") == verdict_text(stored)
            checked += 1
    assert checked > 40


def _folder(tmp_path, verdict: str) -> Path:
    claim = {"claim": "Table 1: decreasing r increases regret: r = 10 beats r = 8", "source": "", "verdict": verdict,
             "numbers": {"difference": 0.01, "stderr": 0.005, "runs": 50}, "data_kind": "generated",
             "by_construction": False}
    folder = tmp_path / verdict.replace(" ", "-")
    folder.mkdir()
    (folder / "po-gp-ucb.json").write_text(json.dumps({"paper": "po-gp-ucb", "parts": {"synthetic": {
        "claims": [claim]}}}))
    return folder


def test_a_sentence_follows_the_json_and_a_claim_the_json_lacks_fails(tmp_path):
    template = "Decreasing r: {v:po-gp-ucb|Table 1: decreasing r} ({n:po-gp-ucb|Table 1: decreasing r})."
    held, lost = _folder(tmp_path, "holds"), _folder(tmp_path, "not significant")
    assert render(template, held) == "Decreasing r: holds (+0.0100 ± 0.0050 over 50)."
    assert render(template, lost).startswith("Decreasing r: not significant (")
    with pytest.raises(MissingVerdict, match="no stored claim"):
        render("{v:po-gp-ucb|Table 9: nothing like it}", held)
    with pytest.raises(MissingVerdict, match="ablation"):
        render("{av:clip-bound|An overly small S|without}", held)
    assert verdict_words("It holds here: {v:po-gp-ucb|x}.") == ["holds"]


def test_the_docs_tables_and_notes_are_the_stored_jsons():
    text = (ROOT / "docs" / "paper-comparisons.md").read_text()
    blocks = names(text)
    assert "tallies" in blocks and "ablations" in blocks and len(blocks) > 30
    sentences.clear()
    assert text == fill(text), "docs/paper-comparisons.md differs from the stored JSON: python -m " \
                               "benchmarks.rejudge_stored --docs"


def test_the_docs_prose_names_no_verdict_outside_the_rule_and_the_generated_blocks():
    text = BLOCK.sub("", (ROOT / "docs" / "paper-comparisons.md").read_text())
    for section in re.split(r"\n(?=## )", text):
        if section.startswith("## How a verdict is decided"):
            continue
        prose = re.sub(r"```.*?```", "", section, flags=re.S)
        assert verdict_words(prose) == [], section.splitlines()[0]


def test_the_tallies_per_paper_and_kind_are_their_claims_counted():
    claims = _stored_claims()
    tallies = stored_tallies()
    for paper, rows in tallies.items():
        assert sum(row["claims"] for row in rows.values()) == len(claims[paper])
        for kind, row in rows.items():
            decided = sum(row[v] for v in ("holds", "not significant", "reversed", "inconsistent"))
            assert decided + row["by construction"] == row["claims"], (paper, kind)
            assert sum(row["readings"].values()) == row["not significant"], (paper, kind)
    # Fig. 11's privacy losses are identities, never the paper's data.
    renyi = [c for c in claims["dp-fts-de"] if c["claim"].startswith("RDP with a fixed sample")]
    assert len(renyi) == 9 and all(c["data_kind"] == "identity" for c in renyi)
    assert tallies["dp-fts-de"]["paper"]["claims"] == sum(c["data_kind"] == "paper" for c in claims["dp-fts-de"])
    # The stored tallies file is these counts.
    assert json.loads((STORED_DIR / TALLIES_FILE).read_text()) == json.loads(json.dumps(tallies))
    # A claim about two figures is counted once.
    twice = {"claim": "a", "source": "Fig. 1a and Fig. 1b", "verdict": "holds", "data_kind": "generated"}
    assert kind_tally([twice])["generated"]["claims"] == 1
