"""verify: citation coverage under the attribution window, and verbatim tiers.

Both checks are deterministic code (paper appendices A.6 and A.8): nothing a model
writes, and nothing inside a guideline section, can change their outcome.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langgraph.runtime import Runtime

from veriscribe.checks.markers import MarkerPosition, attribute
from veriscribe.checks.verbatim import check_quote, is_compliant
from veriscribe.documents.guidelines import section_key
from veriscribe.nodes.qa.state import (
    ClaimInfo,
    MarkedCitation,
    QADeps,
    QAState,
    SentenceInfo,
)
from veriscribe.results import ClaimStatus
from veriscribe.store.corpora import SectionRow
from veriscribe.text.recommendations import label_end
from veriscribe.text.sentences import Sentence, quote_text


def check_citations(
    citations: Sequence[MarkedCitation], sections: Mapping[str, SectionRow]
) -> list[MarkedCitation]:
    """Check each citation's quote against the text of the section it names."""
    checked = []
    for citation in citations:
        row = sections.get(section_key(citation["doc_id"], citation["section_id"]))
        result = check_quote(citation["quote"], row.text if row else None)
        source = ""
        if row is not None and (around := result.context_span or result.span):
            # A strength label right after the sentence ("(B recommendation)", "[A]")
            # is shown with it: the verdict lead reads it there.
            source = quote_text(row.text, around[0], label_end(row.text, around[1]))
        checked.append(
            MarkedCitation(
                **{
                    **citation,
                    "tier": result.tier,
                    "span": list(result.span) if result.span else None,
                    "note": result.note,
                    "source": source,
                    "page": row.page if row else None,
                }
            )
        )
    return checked


def credit(
    sentences: Sequence[SentenceInfo], citations: Sequence[MarkedCitation], window: int
) -> list[list[int]]:
    """Return, per sentence, the indices of the citations that credit it."""
    return attribute(
        [Sentence(s["text"], s["start"], s["end"]) for s in sentences],
        [MarkerPosition(c["index"], c["offset"], "") for c in citations],
        window,
        is_claim=[s["claim"] for s in sentences],
    )


def claims_of(
    sentences: Sequence[SentenceInfo],
    citations: Sequence[MarkedCitation],
    credits: Sequence[Sequence[int]],
) -> list[ClaimInfo]:
    """Return one record per claim sentence with the status the checks so far give."""
    tiers = {c["index"]: c["tier"] for c in citations}
    claims = []
    status: ClaimStatus
    for index, (sentence, cited) in enumerate(zip(sentences, credits, strict=True)):
        if not sentence["claim"]:
            continue
        if not cited:
            status, note = "uncited", "no citation marker credits this claim"
        elif not any(is_compliant(tiers[i]) for i in cited):
            status, note = (
                "unsupported",
                "no quote cited for it passed the verbatim check",
            )
        else:
            status, note = "unjudged", ""
        claims.append(
            ClaimInfo(
                sentence=index,
                text=sentence["text"],
                citations=list(cited),
                status=status,
                verdict=None,
                votes=[],
                shortfall=None,
                recovered=None,
                judged_by=None,
                score=None,
                note=note,
            )
        )
    return claims


def compliant_quotes(
    claim: ClaimInfo, citations: Sequence[MarkedCitation]
) -> list[str]:
    """Return the distinct verbatim-compliant quotes cited for a claim."""
    return [quote for quote, _ in compliant_sources(claim, citations)]


def compliant_sources(
    claim: ClaimInfo, citations: Sequence[MarkedCitation]
) -> list[tuple[str, str]]:
    """Return the distinct (quote, source passage) pairs of a claim's compliant quotes."""
    by_index = {c["index"]: c for c in citations}
    pairs = [
        (by_index[i]["quote"], by_index[i]["source"] or by_index[i]["quote"])
        for i in claim["citations"]
        if is_compliant(by_index[i]["tier"])
    ]
    return list(dict.fromkeys(pairs))


async def verify(state: QAState, runtime: Runtime[QADeps]) -> QAState:
    """Attribute citations to claims and check every quote against its section."""
    deps = runtime.context
    citations = state.get("citations", [])
    keys = [section_key(c["doc_id"], c["section_id"]) for c in citations]
    sections = await deps.sections(state["corpus"], keys)
    checked = check_citations(citations, sections)
    sentences = state.get("sentences", [])
    credits = credit(sentences, checked, deps.options.window)
    return {"citations": checked, "claims": claims_of(sentences, checked, credits)}
