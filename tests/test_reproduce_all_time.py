"""The time of `reproduce all` the docs quote is the one stored: docs/paper-comparisons.md's figure equals the
``"reproduce-all"`` entry of data/reproduction/provenance.json, the measured run once there is one
(benchmarks/bench_reproduce_all.py writes it), the estimate until then; a measured entry holds the time of every
paper and part."""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchmarks.bench_reproduce_all import ENTRY, PAPER_CPU_SECONDS, estimate

from engine.reproduce import PAPERS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "paper-comparisons.md"


def _entry() -> dict:
    return json.loads((ROOT / "data" / "reproduction" / "provenance.json").read_text())[ENTRY]


def _section() -> str:
    text = DOCS.read_text()
    start = text.index("### What `reproduce all` costs")
    end = text.find("\n## ", start)
    return text[start:end if end >= 0 else len(text)]


def test_the_docs_quote_the_stored_time_of_reproduce_all():
    entry, section = _entry(), _section()
    measured = entry.get("measured")
    if measured:
        minutes = round(measured["wall_seconds"] / 60)
        assert re.search(rf"\*\*measured at {minutes} minutes\b", section), (minutes, section[:400])
    else:
        minutes = round(entry["estimate"]["wall_seconds"] / 60)
        assert re.search(rf"\*\*estimated at {minutes}\s+minutes\b", section), (minutes, section[:400])
        assert f"{entry['estimate']['cpu_seconds']:,} s of CPU" in section


def test_the_estimate_is_the_one_the_script_makes_from_every_papers_cpu_seconds():
    stored = _entry()["estimate"]
    assert set(PAPER_CPU_SECONDS) == set(PAPERS)
    again = estimate()
    assert {k: v for k, v in stored.items() if k != "date"} == {k: v for k, v in again.items() if k != "date"}


def test_a_measured_run_records_every_papers_and_parts_time():
    measured = _entry().get("measured")
    if not measured:
        return          # not measured yet: the estimate stands (the docs say so, the test above holds them equal)
    assert set(measured["papers"]) == set(PAPERS)
    for paper in measured["papers"].values():
        assert paper["seconds"] > 0 and paper["cpu_seconds"] > 0 and paper["parts"]
    assert measured["wall_seconds"] > 0 and measured["load_average_before"][0] <= 0.5


def test_the_measured_run_ran_the_stored_counts():
    """The figure is of `reproduce all` at the counts the stored results used: DP-FTS-DE's synthetic parts at the
    stored parts' runs, its other parts and every other paper at the paper's."""
    from engine.reproduce.dp_fts_de import PART_SPECS, STORED_SYNTHETIC_RUNS, SYNTHETIC_PARTS

    measured = _entry().get("measured")
    if not measured:
        return
    runs = measured["papers"]["dp-fts-de"]["runs"]
    assert set(runs) == set(PART_SPECS)
    for part, count in runs.items():
        assert count == (STORED_SYNTHETIC_RUNS if part in SYNTHETIC_PARTS else PART_SPECS[part].paper_runs), part
    stored = json.loads((ROOT / "data" / "reproduction" / "provenance.json").read_text())
    assert f"--synthetic-runs {STORED_SYNTHETIC_RUNS}" in stored["synthetic"]["command"]
    assert measured["papers"]["dp-hype"]["runs"]["data"] == stored["dp-hype"]["runs"]
