"""The decision rule every reproduction's verdicts follow (engine.reproduce.claims.decide), on constructed claims,
and what every stored claim carries: its data kind, whether it holds by construction, and a verdict that follows
from its numbers."""

from __future__ import annotations

import math

import pytest

from engine.reproduce.claims import (ALPHA, DATA_KINDS, DETECTABLE, Z_REPLICATION, benjamini_hochberg, decide,
                                     redecided)
from engine.reproduce.papers import BY_CONSTRUCTION, IDENTITIES, OTHER_DATA, summary_rows
from engine.reproduce.stored_papers import stored_payloads


def _claim(difference, stderr=1.0, replication=None, **numbers):
    claim = {"claim": f"c{difference}", "source": "", "numbers": {"difference": difference, "stderr": stderr,
                                                                  "z": difference / stderr, **numbers}}
    if replication is not None:
        claim["replication"] = {"difference": replication[0], "stderr": replication[1]}
    return claim


def test_both_halves_agree_the_claim_holds_or_is_reversed():
    held, flipped = decide([_claim(5.0, replication=(3.0, 1.0)), _claim(-5.0, replication=(-3.0, 1.0))])
    assert (held["verdict"], flipped["verdict"]) == ("holds", "reversed")
    assert held["why"] == "replicated" and held["holds"] and not flipped["holds"]


def test_decisive_both_ways_is_inconsistent():
    [claim] = decide([_claim(5.0, replication=(-3.0, 1.0))])
    assert claim["verdict"] == "inconsistent" and not claim["holds"]


def test_decisive_in_discovery_only_is_not_significant_and_says_not_replicated():
    [claim] = decide([_claim(5.0, replication=(1.5, 1.0))])     # replication z = 1.5 < 1.645, one-sided
    assert claim["verdict"] == "not significant" and claim["why"].startswith("not replicated")
    # It leaned the paper's way in both seed sets: the reading says so.
    assert claim["reading"] == "leans the paper's way"


def test_the_replication_is_one_sided_in_the_discoverys_direction():
    # z = 1.8 in replication: not two-sided significant (1.96), one-sided it is (1.645).
    held, back = decide([_claim(5.0, replication=(1.8, 1.0)), _claim(-5.0, replication=(1.8, 1.0))])
    assert held["verdict"] == "holds" and held["why"] == "replicated"
    # The other way at 1.8 is neither a confirmation nor (two-sided) a contradiction.
    assert back["verdict"] == "not significant" and back["why"].startswith("not replicated")


def test_an_underpowered_claim_is_not_significant_and_says_what_the_whole_rule_could_detect():
    # A real effect of 1.0 measured with s.e. 1.0: z = 1 in discovery, so it is never replicated.
    [claim] = decide([_claim(0.5, stderr=1.0, replication=(0.0, 1.0))])
    assert claim["verdict"] == "not significant" and claim["why"].startswith("not decisive in discovery")
    assert claim["reading"] == "underpowered"
    # The whole rule (discovery at the BH cut-off, then a one-sided replication) needs more than one test does.
    assert claim["power"]["single_test"] == pytest.approx(DETECTABLE * 1.0) and DETECTABLE > 2.8
    assert claim["discovery"]["detectable"] > claim["power"]["single_test"]


def test_without_a_replication_a_decisive_claim_keeps_its_discovery_verdict_and_says_so():
    [claim] = decide([_claim(5.0)])
    assert claim["verdict"] == "holds" and claim["why"].startswith("discovery only")


def test_an_any_of_claim_whose_best_comparison_is_chance_is_not_significant():
    # Nine comparisons, the best at z = 2.5: alone p = 0.012, but nine tries make p = 0.11 (Bonferroni).
    comparisons = [{"better": f"s{i}", "difference": d, "stderr": 1.0, "z": d}
                   for i, d in enumerate([2.5, 0.3, -0.5, 1.0, 0.0, -1.2, 0.8, 0.1, 1.9])]
    [claim] = decide([{"claim": "any", "source": "", "numbers": {"comparisons": comparisons}}])
    assert claim["test"] == "any-of" and claim["verdict"] == "not significant"
    assert claim["discovery"]["p"] == pytest.approx(9 * math.erfc(2.5 / math.sqrt(2)))
    # The same best comparison with one try only is decisive.
    single = decide([_claim(2.5, replication=(2.5, 1.0))])[0]
    assert single["verdict"] == "holds"


def test_an_any_of_claim_is_replicated_on_the_comparison_discovery_chose():
    comparisons = [{"better": "a", "difference": 6.0, "stderr": 1.0, "z": 6.0},
                   {"better": "b", "difference": 0.5, "stderr": 1.0, "z": 0.5}]
    claim = {"claim": "any", "source": "", "numbers": {"comparisons": comparisons},
             "replication": {"better": "a", "difference": 4.0, "stderr": 1.0}}
    assert decide([claim])[0]["verdict"] == "holds"


def test_an_equivalence_claim_holds_only_inside_its_margin_and_not_for_an_unseen_difference():
    margin = {"equivalence_margin": 0.1}
    tight = _claim(0.01, stderr=0.01, replication=(0.0, 0.01), **margin)      # well inside +-0.1
    blurry = _claim(0.05, stderr=0.04, replication=(0.05, 0.04), **margin)    # z = 1.29 as a difference
    apart = _claim(0.5, stderr=0.05, replication=(0.5, 0.05), **margin)       # far outside
    decide([tight, blurry, apart])
    assert [c["verdict"] for c in (tight, blurry, apart)] == ["holds", "not significant", "differs"]
    assert tight["test"] == "equivalence"


def test_the_false_discovery_rate_is_benjamini_hochbergs():
    # sorted: 0.01, 0.03, 0.04, 0.5 -> 0.04, min(0.06, 0.0533), 0.04 * 4 / 3, 0.5
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    # Twenty claims at z = 2.1 each alone pass 0.05; with nineteen chance ones they do not all survive.
    chance = [_claim(0.1 * i) for i in range(19)]
    lucky = _claim(2.1, replication=(2.1, 1.0))
    decide(chance + [lucky])
    assert lucky["discovery"]["q"] > ALPHA and lucky["verdict"] == "not significant"
    assert Z_REPLICATION == pytest.approx(1.96, abs=1e-3)


def test_exact_claims_are_decided_by_their_sign_outside_the_correction():
    exact = {"claim": "x", "source": "", "numbers": {"difference": 1e-12, "stderr": 0.0, "z": None}}
    assert decide([exact])[0]["verdict"] == "holds" and "discovery" not in exact


# ---------------------------------------------------------------------- the stored files

PAYLOADS = stored_payloads()


@pytest.mark.parametrize("paper", sorted(PAYLOADS))
def test_every_stored_claim_says_its_data_and_whether_it_holds_by_construction(paper):
    for part in PAYLOADS[paper]["parts"].values():
        for claim in part["claims"]:
            assert claim["data_kind"] in DATA_KINDS, claim["claim"]
            assert isinstance(claim["by_construction"], bool), claim["claim"]


@pytest.mark.parametrize("paper", sorted(PAYLOADS))
def test_every_stored_verdict_follows_from_its_numbers_under_the_rule(paper):
    claims = [c for part in PAYLOADS[paper]["parts"].values() for c in part["claims"]]
    assert [c["verdict"] for c in claims] == redecided(claims)


def test_every_summary_rows_counts_add_up_to_its_claims():
    rows = summary_rows(PAYLOADS)
    assert rows
    for row in rows:
        tallied = sum(row[v] for v in ("holds", "not significant", "reversed", "inconsistent"))
        assert tallied + row[BY_CONSTRUCTION] + row[IDENTITIES] + row[OTHER_DATA] == row["claims"], row
        assert sum(row["kinds"].values()) == row["claims"] and sum(row["other"].values()) == row[OTHER_DATA]


def test_the_tallies_keep_other_data_and_identities_apart():
    rows = {(r["paper"], r["figure"]): r for r in summary_rows(PAYLOADS)}
    # DP-HYPE's digits claims are beside the tally; its vector lengths and noise formula are identities.
    assert rows[("dp-hype", "Fig. 5")][OTHER_DATA] > 0
    assert rows[("dp-hype", "Fig. 3")][IDENTITIES] == rows[("dp-hype", "Fig. 3")]["claims"]
    # Fig. 3a counts the landmine claims only; the nine Renyi privacy-loss claims are Fig. 11's, all identities.
    assert rows[("dp-fts-de", "Fig. 3a")]["claims"] == 13 and rows[("dp-fts-de", "Fig. 11")]["claims"] == 9
    assert rows[("dp-fts-de", "Fig. 11")][IDENTITIES] == 9 and rows[("dp-fts-de", "Fig. 11")]["kinds"]["paper"] == 0
    # PO-GP-UCB's loan and property parts say "stand-in" in every claim; their branch claims are by construction.
    for part in ("loan", "property"):
        claims = PAYLOADS["po-gp-ucb"]["parts"][part]["claims"]
        assert all("stand-in" in c["claim"] and c["data_kind"] == "stand-in" for c in claims)
        assert sum(c["by_construction"] for c in claims) == 4
        assert "stand-in" in PAYLOADS["po-gp-ucb"]["parts"][part]["title"]


def test_a_replication_runs_only_the_decisive_claims_and_the_comparison_discovery_chose():
    from engine.reproduce.dp_fts_de import PART_SPECS
    from engine.reproduce.replication import attach, decisive, replication_seed, restrict

    landmine = PART_SPECS["landmine"]
    anyof = next(c for c in landmine.claims if c.any_of)
    # Discovery: the any-of claim decisive through one DP setting, everything else chance.
    best = anyof.better[5]
    comparisons = [{"better": k, "worse": anyof.worse, "difference": 9.0 if k == best else 0.0, "stderr": 1.0,
                    "z": 9.0 if k == best else 0.0, "runs": 100} for k in anyof.better]
    claims = [{"claim": anyof.text, "source": anyof.source, "numbers": {"comparisons": comparisons}}]
    claims += [_claim(0.1 * i) for i in range(5)]
    decide(claims)
    payload = {"parts": {"landmine": {"claims": claims}}}
    wanted = decisive(payload)
    assert wanted == {"landmine": {anyof.text: (best, anyof.worse)}}
    cut = restrict(landmine, wanted["landmine"])
    assert [c.better for c in cut.claims] == [(best,)]
    assert {s.key for s in cut.settings} == {best, anyof.worse}
    # The replication's numbers of that comparison decide it; seeds never meet the discovery's run indices.
    again = {"parts": {"landmine": {"claims": [{"claim": anyof.text, "numbers": {
        "better": best, "worse": anyof.worse, "difference": -5.0, "stderr": 1.0, "runs": 100}}]}}}
    attach(payload, again, replication_seed(0))
    assert claims[0]["replication"]["better"] == best and claims[0]["verdict"] == "inconsistent"
    assert replication_seed(0) > 10_000
