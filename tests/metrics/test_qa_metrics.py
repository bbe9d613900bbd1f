import math

import pytest

from veriscribe.metrics.qa import (
    ClaimFunnel,
    ClaimRecord,
    Tier,
    certified_claim_rate,
    citation_coverage,
    claim_funnel,
    claim_support_rate,
    supported_claim_rate,
    verbatim_compliance_by_tier,
    verbatim_compliance_rate,
)

UNCITED = ClaimRecord(covered=False, verbatim_ok=False)
BAD_QUOTE = ClaimRecord(covered=True, verbatim_ok=False)
FULL = ClaimRecord(True, True, "fully_supported")
PARTIAL = ClaimRecord(True, True, "partially_supported")
RECOVERED = ClaimRecord(True, True, "partially_supported", recovered=True)
NONE = ClaimRecord(True, True, "not_supported")
CONTRA = ClaimRecord(True, True, "contradicted")
UNJUDGED = ClaimRecord(True, True, None)

# Ten hand-made claims: 8 covered, 7 with a compliant quote (cited), of which
# 2 fully, 3 partially (1 recovered), 1 not supported, 1 contradicted.
CLAIMS = [UNCITED, UNCITED, BAD_QUOTE, FULL, FULL, PARTIAL, PARTIAL, RECOVERED]
CLAIMS += [NONE, CONTRA]


def test_hand_worked_rates() -> None:
    assert citation_coverage(CLAIMS) == 8 / 10
    assert claim_support_rate(CLAIMS) == 2 / 7
    assert claim_support_rate(CLAIMS, lenient=True) == 5 / 7
    assert certified_claim_rate(CLAIMS) == 2 / 10
    assert supported_claim_rate(CLAIMS) == 3 / 10


def test_hand_worked_funnel() -> None:
    funnel = claim_funnel(CLAIMS, sentences=12)
    assert funnel.as_dict() == {
        "sentences": 12,
        "claims": 10,
        "covered": 8,
        "verbatim": 7,
        "lenient": 5,
        "strict": 2,
        "recovered": 1,
    }
    assert funnel.stage_rates() == {
        "covered": 0.8,
        "verbatim": 0.7,
        "lenient": 0.5,
        "strict": 0.2,
    }
    assert funnel.ccr == 0.2
    assert funnel.scr == 0.3


def test_unjudged_cited_claim_counts_against_support() -> None:
    assert claim_support_rate([FULL, UNJUDGED]) == 0.5
    assert claim_support_rate([FULL, UNJUDGED], lenient=True) == 0.5


def test_verbatim_compliance_counts_citations_not_claims() -> None:
    tiers: list[Tier] = ["exact", "exact", "normalized", "elided", "fail"]
    tiers += ["unresolved", "exact", "fail"]
    assert verbatim_compliance_rate(tiers) == 5 / 8
    by_tier = verbatim_compliance_by_tier(tiers)
    assert by_tier == {
        "exact": 3 / 8,
        "normalized": 1 / 8,
        "elided": 1 / 8,
        "elided_risky": 0.0,
        "fail": 2 / 8,
        "unresolved": 1 / 8,
    }
    assert sum(by_tier[t] for t in ("exact", "normalized", "elided")) == 5 / 8


def test_a_risky_elision_is_a_tier_of_its_own_and_not_compliant() -> None:
    # The verbatim check assigns it; the metrics once rejected it as unknown.
    tiers: list[Tier] = ["exact", "elided_risky"]
    assert verbatim_compliance_rate(tiers) == 0.5
    assert verbatim_compliance_by_tier(tiers)["elided_risky"] == 0.5


def test_paper_gpt_4_1_mini_row() -> None:
    # Tables 1-3 of the verifiable-by-construction paper for gpt-4.1-mini: 625
    # sentences, 570 claims, 283 covered, 207 cited (75 full, 106 partial,
    # 26 none), 92 recovered; 450 citations: 251 exact, 14 normalized, 33 elided.
    claims = [UNCITED] * (570 - 283) + [BAD_QUOTE] * (283 - 207)
    claims += [FULL] * 75 + [RECOVERED] * 92 + [PARTIAL] * (106 - 92) + [NONE] * 26
    funnel = claim_funnel(claims, sentences=625)
    percent = {k: round(100 * v, 1) for k, v in funnel.stage_rates().items()}
    assert percent == {
        "covered": 49.6,
        "verbatim": 36.3,
        "lenient": 31.8,
        "strict": 13.2,
    }
    assert round(100 * funnel.scr, 1) == 29.3
    assert round(100 * claim_support_rate(claims), 1) == 36.2
    assert round(100 * claim_support_rate(claims, lenient=True), 1) == 87.4

    counts: dict[Tier, int] = {"exact": 251, "normalized": 14, "elided": 33}
    counts["fail"] = 450 - sum(counts.values())
    tiers = [tier for tier, count in counts.items() for _ in range(count)]
    by_tier = {
        k: round(100 * v, 1) for k, v in verbatim_compliance_by_tier(tiers).items()
    }
    assert (by_tier["exact"], by_tier["normalized"], by_tier["elided"]) == (
        55.8,
        3.1,
        7.3,
    )
    assert round(100 * verbatim_compliance_rate(tiers), 1) == 66.2


def test_funnels_pool_by_addition() -> None:
    first = claim_funnel([FULL, UNCITED], sentences=3)
    second = claim_funnel([RECOVERED], sentences=1)
    assert first + second == claim_funnel([FULL, UNCITED, RECOVERED], sentences=4)


def test_empty_denominators_are_nan() -> None:
    assert math.isnan(citation_coverage([]))
    assert math.isnan(claim_support_rate([UNCITED]))
    assert math.isnan(verbatim_compliance_rate([]))
    empty = ClaimFunnel(0, 0, 0, 0, 0, 0, 0)
    assert math.isnan(empty.ccr) and math.isnan(empty.scr)


def test_records_that_break_the_stage_order_are_rejected() -> None:
    with pytest.raises(ValueError, match="citation"):
        ClaimRecord(covered=False, verbatim_ok=True)
    with pytest.raises(ValueError, match="judged"):
        ClaimRecord(covered=True, verbatim_ok=False, verdict="fully_supported")
    with pytest.raises(ValueError, match="recovered"):
        ClaimRecord(True, True, "fully_supported", recovered=True)
    with pytest.raises(ValueError, match="verdict"):
        ClaimRecord(True, True, "mostly")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tiers"):
        verbatim_compliance_rate(["exact", "close"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="sentences"):
        claim_funnel([FULL, FULL], sentences=1)
