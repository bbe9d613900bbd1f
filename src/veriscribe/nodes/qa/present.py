"""present: the checked answer with numbered citations, claim statuses and the funnel.

A claim is ``certified`` (a verbatim quote fully supports it), ``recovered`` (partly
supported, and the missing support was found verbatim in a section read), ``partial``,
``unsupported`` (no compliant quote, or the quotes do not support or contradict it),
``uncited`` (no marker credits it) or ``unjudged`` (it has a compliant quote but was not
judged: ``--no-judge``, or the judge gave no usable verdict).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from veriscribe.checks.markers import (
    MARKER_RE,
    MarkerPosition,
    coverage_by_window,
)
from veriscribe.checks.verbatim import is_compliant
from veriscribe.metrics.qa import (
    ClaimRecord,
    ReportedRates,
    claim_funnel,
    reported_rates,
)
from veriscribe.nodes.qa.answer import plain_answer, prose
from veriscribe.nodes.qa.state import (
    AnswerSentence,
    ClaimInfo,
    MarkedCitation,
    QAState,
    RecoveryResult,
    Turn,
)
from veriscribe.prompts import load_prompt
from veriscribe.results import (
    COMPLIANT_TIERS,
    TIERS,
    Citation,
    Claim,
    ClaimCitation,
    ClaimStatus,
    GraphAnswer,
    Lead,
    NearestSection,
    RecoveredFrom,
    Retrieval,
    Tier,
)
from veriscribe.text.recommendations import (
    asks_for_verdict,
    label_closing,
    read_recommendation,
)
from veriscribe.text.sentences import Sentence

_SPACED_MARKER = re.compile(r"[ \t]*" + MARKER_RE.pattern, re.DOTALL)


def merge_recoveries(
    claims: Sequence[ClaimInfo], recoveries: Sequence[RecoveryResult]
) -> list[ClaimInfo]:
    """Mark the partial claims whose missing support was recovered."""
    by_sentence = {r["sentence"]: r for r in recoveries}
    merged = []
    for claim in claims:
        found = by_sentence.get(claim["sentence"])
        if found is None or claim["status"] != "partial":
            merged.append(claim)
            continue
        note = "; ".join(n for n in (claim["note"], found["note"]) if n)
        status: ClaimStatus = (
            "recovered" if found["recovered"] is not None else "partial"
        )
        merged.append(
            ClaimInfo(
                **{
                    **claim,
                    "recovered": found["recovered"],
                    "status": status,
                    "note": note,
                }
            )
        )
    return merged


def number_citations(citations: Sequence[MarkedCitation]) -> dict[int, int]:
    """Number citations [1], [2], ... by first appearance; a repeated quote keeps its number."""
    numbers: dict[tuple[str, str, str], int] = {}
    by_index: dict[int, int] = {}
    for citation in citations:
        key = (citation["doc_id"], citation["section_id"], citation["quote"])
        numbers.setdefault(key, len(numbers) + 1)
        by_index[citation["index"]] = numbers[key]
    return by_index


def number_sentences(
    sentences: Sequence[AnswerSentence], numbers: Mapping[int, int]
) -> str:
    """Write the answer's sentences with numbered references ``[n]`` after each."""
    parts = []
    index = 0
    for item in sentences:
        text = item["text"]
        for _ in item["citations"]:
            text += f" [{numbers.get(index, index + 1)}]"
            index += 1
        parts.append(text)
    return " ".join(parts)


def render_numbers(answer: str, numbers: Mapping[int, int]) -> str:
    """Replace the citation markers of an answer's text with ``[n]``."""
    index = 0

    def swap(_: re.Match[str]) -> str:
        nonlocal index
        number = numbers.get(index, index + 1)
        index += 1
        return f" [{number}]"

    return _SPACED_MARKER.sub(swap, answer)


def claim_record(claim: ClaimInfo, tiers: Mapping[int, str]) -> ClaimRecord:
    """Return the funnel record of a claim."""
    verbatim = any(is_compliant(tiers[i]) for i in claim["citations"])
    verdict = claim["verdict"] if verbatim else None
    return ClaimRecord(
        covered=bool(claim["citations"]),
        verbatim_ok=verbatim,
        verdict=verdict,
        recovered=claim["status"] == "recovered",
    )


class AnswerRates(ReportedRates):
    """The answer's rates (paper section 3.2), its tiers and its coverage by window."""

    tiers: dict[Tier, int]
    coverage_by_window: dict[str, float | None]
    covered_by_window: dict[str, int]
    verbatim_covered_by_window: dict[str, int]


def metrics(
    state: QAState, claims: Sequence[ClaimInfo], citations: Sequence[MarkedCitation]
) -> tuple[dict[str, int], AnswerRates]:
    """Return the claim funnel and the answer's rates (paper section 3.2)."""
    tiers = {c["index"]: c["tier"] for c in citations}
    records = [claim_record(claim, tiers) for claim in claims]
    sentences = state.get("sentences", [])
    funnel = claim_funnel(records, sentences=len(sentences))
    units = [Sentence(s["text"], s["start"], s["end"]) for s in sentences]
    flags = [s["claim"] for s in sentences]
    positions = [MarkerPosition(c["index"], c["offset"], "") for c in citations]
    windows = coverage_by_window(units, positions, is_claim=flags)
    # The same, counting only citations whose quote passed the verbatim check.
    verbatim_windows = coverage_by_window(
        units,
        [
            p
            for p, c in zip(positions, citations, strict=True)
            if is_compliant(c["tier"])
        ],
        is_claim=flags,
    )
    tier_counts = {tier: sum(c["tier"] == tier for c in citations) for tier in TIERS}
    compliant = sum(tier_counts[t] for t in COMPLIANT_TIERS)

    values: AnswerRates = {
        **reported_rates(funnel, compliant, len(citations)),
        "tiers": tier_counts,
        "coverage_by_window": {
            str(k): round(v, 4) if funnel.claims else None for k, v in windows.items()
        },
        # Claim counts, so that answers can be pooled exactly.
        "covered_by_window": {
            str(k): round(v * funnel.claims) for k, v in windows.items()
        },
        "verbatim_covered_by_window": {
            str(k): round(v * funnel.claims) for k, v in verbatim_windows.items()
        },
    }
    return funnel.as_dict(), values


def branch_prompts(state: QAState) -> set[str]:
    """Return the ids of the prompts the judge and recovery branches used."""
    used = set()
    if state.get("judgements"):
        used.add(load_prompt("qa", "judge").id)
    if state.get("recoveries"):
        used.add(load_prompt("qa", "recover").id)
    return used


def _shown(citation: MarkedCitation, number: int) -> ClaimCitation:
    """Return a citation as the reader sees it, numbered ``number``."""
    return ClaimCitation(
        n=number,
        doc_id=citation["doc_id"],
        section_id=citation["section_id"],
        quote=citation["quote"],
        tier=citation["tier"],
        source=citation["source"],
        page=citation.get("page"),
    )


def claim_lead(claim: ClaimInfo, by_index: Mapping[int, MarkedCitation]) -> Lead | None:
    """Return what a certified claim's quote recommends, read from its words.

    A strength label that stands right after the quote's sentence ("(B
    recommendation)", "[A]") is read with it: the verbatim check shows it at the end
    of the citation's source.

    Only a certified claim has a lead: it is the quote's own recommendation, so it is
    shown only where the checks proved the quote says the claim.
    """
    if claim["status"] != "certified":
        return None
    for index in claim["citations"]:
        citation = by_index[index]
        if not is_compliant(citation["tier"]):
            continue
        found = read_recommendation(
            citation["quote"], label_closing(citation["source"])
        )
        if found is not None:
            return Lead(
                direction=found.direction,
                strength=found.strength,
                text=found.lead,
                phrase=found.phrase,
            )
    return None


def answer_lead(question: str, claims: Sequence[Claim]) -> Lead | None:
    """Return the answer's verdict lead: its first claim's, when the question asks one.

    The first claim is the answer's best sentence; a recommendation further down may
    be about something else (another drug, the hip for the knee), so none is shown
    when the first claim states none.
    """
    if not claims or not asks_for_verdict(question):
        return None
    return claims[0].lead


def _claim_result(
    claim: ClaimInfo, by_index: Mapping[int, MarkedCitation], numbers: Mapping[int, int]
) -> Claim:
    recovered = claim["recovered"]
    return Claim(
        text=claim["text"],
        status=claim["status"],
        verdict=claim["verdict"],
        votes=claim["votes"],
        shortfall=claim["shortfall"],
        judged_by=claim["judged_by"],
        score=claim["score"],
        citations=[_shown(by_index[i], numbers[i]) for i in claim["citations"]],
        recovered_quote=recovered["quote"] if recovered else None,
        recovered_from=(
            RecoveredFrom(
                doc_id=recovered["doc_id"],
                section_id=recovered["section_id"],
                tier=recovered["tier"],
                page=recovered.get("page"),
            )
            if recovered
            else None
        ),
        note=claim["note"],
        lead=claim_lead(claim, by_index),
    )


def assemble(state: QAState, claims: Sequence[ClaimInfo]) -> GraphAnswer:
    """Return the checked answer of a finished run (SPEC ``ask`` fields)."""
    citations = state.get("citations", [])
    numbers = number_citations(citations)
    by_index = {c["index"]: c for c in citations}
    funnel, values = metrics(state, claims, citations)
    answer = state.get("answer", "")
    # The answer veriscribe wrote is numbered from its sentences; one from outside
    # (verify) has only its text.
    written = state.get("answer_sentences", [])
    numbered = (
        number_sentences(written, numbers)
        if written
        else render_numbers(answer, numbers)
    )
    notes = list(state.get("notes", []))
    failed = state.get("failure") or None
    sentences = state.get("sentences", [])
    not_checked = [s["text"] for s in sentences if not s["claim"]]
    if not claims and not state.get("not_found") and not failed:
        notes.append("no claim of this answer was checked")
    funnel["not_checked"] = len(not_checked)
    retrieval = state.get("retrieval") or {"method": "", "candidates": 0, "notes": []}
    shown = [_claim_result(claim, by_index, numbers) for claim in claims]
    lead = answer_lead(state.get("question", ""), shown)
    return GraphAnswer(
        question=state.get("question", ""),
        answer=answer,
        answer_numbered=numbered,
        not_found=bool(state.get("not_found", False)),
        error=failed,
        claims=shown,
        citations=[
            Citation(
                **dict(_shown(c, numbers[c["index"]])), span=c["span"], note=c["note"]
            )
            for c in citations
        ],
        not_checked=not_checked,
        checked_claims=len(claims),
        read_set=list(state.get("read_set", [])),
        retrieval=Retrieval.model_validate(dict(retrieval)),
        funnel=funnel,
        metrics=values,
        sentences=len(sentences),
        notes=notes,
        prompt_ids=sorted(set(state.get("prompt_ids", [])) | branch_prompts(state)),
        lead=lead,
        nearest=[
            NearestSection(key=n["key"], title=n["title"], page=n["page"])
            for n in state.get("nearest", [])
        ]
        if state.get("not_found")
        else [],
    )


def result_of(values: Mapping[str, Any]) -> GraphAnswer | None:
    """Return the checked answer a thread's state holds, or None before it has one."""
    stored = values.get("result")
    return GraphAnswer.model_validate(stored) if stored else None


async def present(state: QAState) -> QAState:
    """Assemble the checked answer; a chat turn also goes into the history."""
    claims = merge_recoveries(state.get("claims", []), state.get("recoveries", []))
    result = assemble(state, claims)
    # The state keeps the result as its JSON object: checkpoints hold plain data.
    update: QAState = {
        "claims": claims,
        "result": result.model_dump(mode="json"),
    }
    if state.get("mode", "ask") == "ask":
        written = state.get("answer_sentences", [])
        text = prose(written) if written else plain_answer(result.answer)
        turn = Turn(question=state.get("question", ""), answer=text)
        update["history"] = [*state.get("history", []), turn]
    return update
