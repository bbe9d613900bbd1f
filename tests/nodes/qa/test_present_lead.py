"""The verdict lead: read from a certified claim's compliant quote, and from no other;
the answer's lead is its first claim's."""

from __future__ import annotations

from veriscribe.nodes.qa.present import answer_lead, claim_lead
from veriscribe.nodes.qa.state import ClaimInfo, MarkedCitation
from veriscribe.results import Claim, Lead

QUOTE = (
    "We suggest against initiating opioids (including tramadol) for pain associated "
    "with osteoarthritis of the hip and knee."
)


def claim(status: str) -> ClaimInfo:
    return ClaimInfo(
        sentence=0,
        text=QUOTE,
        citations=[0],
        status=status,  # type: ignore[typeddict-item]
        verdict=None,
        votes=[],
        shortfall=None,
        recovered=None,
        judged_by="lexical",
        score=None,
        note="",
    )


def cited(tier: str, quote: str = QUOTE) -> dict[int, MarkedCitation]:
    return {
        0: MarkedCitation(
            index=0,
            doc_id="oa",
            section_id="opioids",
            quote=quote,
            offset=0,
            tier=tier,  # type: ignore[typeddict-item]
            span=[0, len(quote)],
            note="",
            source=quote,
        )
    }


def test_a_certified_quote_gives_its_lead() -> None:
    lead = claim_lead(claim("certified"), cited("exact"))
    assert lead is not None
    assert (lead.text, lead.direction, lead.strength) == (
        "Suggests against (weak)",
        "against",
        "weak",
    )


def test_no_lead_without_certification_or_a_recommendation() -> None:
    assert claim_lead(claim("partial"), cited("exact")) is None
    assert claim_lead(claim("certified"), cited("fail")) is None
    plain = "Opioids carry a risk of overdose and dependence."
    assert claim_lead(claim("certified"), cited("exact", plain)) is None


def shown(text: str, lead: Lead | None) -> Claim:
    return Claim(
        text=text,
        status="certified",
        verdict=None,
        votes=[],
        shortfall=None,
        judged_by="lexical",
        score=None,
        citations=[],
        recovered_quote=None,
        recovered_from=None,
        note="",
        lead=lead,
    )


def test_the_answer_leads_with_its_first_claim_only() -> None:
    against = claim_lead(claim("certified"), cited("exact"))
    table_row = shown("Topical agents for OA of the knee (e.g., NSAIDs)", None)
    later = shown(QUOTE, against)
    question = "Is tramadol recommended for knee osteoarthritis?"
    assert answer_lead(question, [later, table_row]) == against
    # A recommendation further down may be about something else: no lead.
    assert answer_lead(question, [table_row, later]) is None
    # A question that asks for no verdict has none.
    assert answer_lead("What dose of tramadol is used?", [later]) is None
    assert answer_lead(question, []) is None
