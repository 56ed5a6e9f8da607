"""The advisor's stored evidence: the cases are the protocol's, their verdicts are what the project's rule gives the
stored numbers today, docs/advisor.md shows exactly that table; and the judging itself on a tiny case.

About 5 s (one tiny search and 2 x 2 x 3 paired runs in this process)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.advise import AdviceRequest, advise_now
from engine.advise.evidence import (CASES, EPSILONS, RUNS, case_id, case_requests, evidence_markdown, judge,
                                    verdicts_hold)
from engine.executor import Executor, use
from engine.reproduce.claims import decide

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "data" / "advise" / "evidence.json"


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(STORED.read_text())


def test_the_stored_cases_are_the_protocols_every_one(stored):
    cases = stored["cases"]
    assert [case["case"] for case in cases] == [case_id(r) for r in case_requests()]
    assert len(cases) == sum(len(sizes) for _, _, sizes in CASES) * len(EPSILONS) == 12
    for case, request in zip(cases, case_requests()):
        assert case["request"] == request.to_dict()
        assert all(len(values) == RUNS for values in case["losses"].values())
        made = case["made"]
        assert made["engine_commit"] and not made["engine_uncommitted_changes"]
        # The claim's numbers are the stored losses' (paired, pick against the paper's setting).
        diff = np.array(case["losses"]["paper/discovery"]) - np.array(case["losses"]["pick/discovery"])
        assert case["claim"]["numbers"]["difference"] == pytest.approx(diff.mean(), abs=1e-12)


def test_the_stored_verdicts_and_the_docs_tables_are_what_the_numbers_give(stored):
    docs = (ROOT / "docs" / "advisor.md").read_text()
    assert verdicts_hold(stored["cases"]) and evidence_markdown(stored["cases"]) in docs
    first = stored["first_protocol"]["cases"]           # the first protocol's cases, judged apart
    assert verdicts_hold(first) and evidence_markdown(first) in docs


def test_a_case_is_judged_paired_on_streams_the_search_never_used():
    request = AdviceRequest(agents=6, iterations=3, epsilon=4.0, sensitivity=False)
    local = Executor("local")
    advice = advise_now(request, executor=local).to_json()
    with use(local):
        case = judge(request, advice, runs=3)
    pick, paper = case["losses"]["pick/discovery"], case["losses"]["paper/discovery"]
    assert len(pick) == len(paper) == 3 and case["losses"]["pick/replication"] != pick
    claim = decide([case["claim"]])[0]
    assert claim["numbers"]["paired"] and claim["verdict"] in ("holds", "not significant", "reversed")
    assert case["calibration"]["runs"] == 6 and case["calibration"]["predicted"] == advice["recommended"]["utility"]
