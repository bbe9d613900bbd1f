"""The verdict lead: read from a certified claim's compliant quote, and from no other
(with the strength label shown after it); the answer's lead is its first claim's."""

from __future__ import annotations

from veriscribe.nodes.qa.present import answer_lead, claim_lead
from veriscribe.nodes.qa.state import ClaimInfo, MarkedCitation
from veriscribe.nodes.qa.verify import check_citations
from veriscribe.results import Claim, Lead
from veriscribe.store.corpora import SectionRow

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


# ngc-10359: the USPSTF grade stands after the sentence, on the same line.
GRADED_SECTION = (
    "The USPSTF recommends that primary care clinicians apply fluoride varnish to the "
    "primary teeth of all infants and children starting at the age of primary tooth "
    "eruption. ( **B recommendation** ) \n\n\nSee the Clinical Considerations section."
)
GRADED_QUOTE = GRADED_SECTION.split(" ( **")[0]


def test_the_grade_after_the_quote_is_shown_in_its_source_and_read() -> None:
    row = SectionRow(
        doc_id="ngc-10359",
        section_id="summary",
        position=0,
        number="",
        title="Summary",
        parent=None,
        children=[],
        level=1,
        chars=len(GRADED_SECTION),
        summary=None,
        summary_source=None,
        text=GRADED_SECTION,
    )
    marked = cited("unchecked", GRADED_QUOTE)
    [checked] = check_citations(
        [{**marked[0], "doc_id": "ngc-10359", "section_id": "summary"}],
        {row.key: row},
    )
    assert checked["source"].endswith("eruption. ( **B recommendation** )")
    lead = claim_lead(claim("certified"), {0: checked})
    assert lead is not None
    assert (lead.text, lead.direction, lead.strength) == (
        "Recommends for (grade B)",
        "for",
        "B",
    )
    # Without the label shown, the quote alone names no grade.
    bare = claim_lead(claim("certified"), cited("exact", GRADED_QUOTE))
    assert bare is not None and bare.text == "Recommends for"
