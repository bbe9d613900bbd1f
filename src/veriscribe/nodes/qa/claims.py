"""filter claims (paper appendix A.7): claim units, then the model's claim filter.

An answer veriscribe wrote is laid out from its structured sentences (each one a unit,
its citations at its end); an answer from outside (``verify``) is flattened, its
markers stripped with their positions recorded, the prose split into sentences with
pySBD and pieces under 15 characters dropped (all in
:func:`veriscribe.checks.markers.split_claim_units`). A sentence that carries a
citation is always a claim; the model names, among the others, the sentences that
state no checkable clinical claim. Sentences it exempts are reported as not checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from veriscribe.checks.markers import (
    ClaimSplit,
    Marker,
    anchor_of,
    split_claim_units,
    split_structured,
)
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.state import (
    AnswerSentence,
    MarkedCitation,
    QADeps,
    QAState,
    SentenceInfo,
)
from veriscribe.prompts import load_prompt

TOKENS_PER_SENTENCE = 4


class NonClaims(BaseModel):
    """The claim filter's reply: the numbers of the sentences that state no claim.

    Asking for the exceptions (most sentences of an answer are claims) keeps the reply
    short and errs towards checking a sentence rather than dropping it.
    """

    not_claims: list[int] = Field(default_factory=list)


def flags_from(reply: NonClaims, count: int) -> list[bool]:
    """Return one claim flag per sentence; numbers out of range are ignored."""
    excluded = {n for n in reply.not_claims if 1 <= n <= count}
    return [number not in excluded for number in range(1, count + 1)]


def numbered(sentences: Sequence[str]) -> str:
    """Number sentences one per line for a prompt."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(sentences, start=1))


def units(split: ClaimSplit, flags: Sequence[bool]) -> list[SentenceInfo]:
    """Return the sentences with their claim flags."""
    return [
        SentenceInfo(text=s.text, start=s.start, end=s.end, claim=bool(flag))
        for s, flag in zip(split.sentences, flags, strict=True)
    ]


def citations_of(split: ClaimSplit) -> list[MarkedCitation]:
    """Return the markers of an answer as unchecked citations."""
    return [
        MarkedCitation(
            index=position.index,
            doc_id=marker.doc_id,
            section_id=marker.section_id,
            quote=marker.quote,
            offset=position.offset,
            tier="unchecked",
            span=None,
            note="",
            source="",
        )
        for marker, position in zip(split.markers, split.positions, strict=True)
    ]


def split_answer(state: QAState) -> ClaimSplit:
    """Return the answer's claim units: from its structure, or parsed from its text."""
    structured: list[AnswerSentence] = state.get("answer_sentences", [])
    if structured:
        return split_structured(
            [
                (
                    item["text"],
                    [
                        Marker(ref["doc_id"], ref["section_id"], ref["quote"], 0, 0)
                        for ref in item["citations"]
                    ],
                )
                for item in structured
            ]
        )
    return split_claim_units(state.get("answer", ""))


def cited_flags(split: ClaimSplit) -> list[bool]:
    """Return, per sentence, whether a citation marker sits in or right after it."""
    flags = [False] * len(split.sentences)
    for position in split.positions:
        anchor = anchor_of(position.offset, split.sentences)
        if anchor >= 0:
            flags[anchor] = True
    return flags


async def filter_claims(state: QAState, runtime: Runtime[QADeps]) -> QAState:
    """Split the answer into sentences and decide which state claims."""
    deps = runtime.context
    split = split_answer(state)
    texts = [s.text for s in split.sentences]
    cited = cited_flags(split)
    notes = list(state.get("notes", []))
    prompt_ids = list(state.get("prompt_ids", []))
    if deps.options.all_claims or all(cited):
        # Every sentence carries a citation: every one is a claim, no model needed.
        flags = [True] * len(texts)
    else:
        prompt = load_prompt("qa", "claims")
        prompt_ids.append(prompt.id)
        try:
            reply = await deps.model().json(
                prompt.id,
                prompt.render(sentences=numbered(texts), count=str(len(texts))),
                NonClaims,
                max_tokens=TOKENS_PER_SENTENCE * len(texts) + 16,
            )
            flags = flags_from(reply.value, len(texts))
            if len(texts) > 1 and not any(flags):
                # An answer of several sentences with no claim at all contradicts the
                # filter's premise; small models reply so by listing every number.
                flags = [True] * len(texts)
                notes.append(
                    "claim filter called every sentence a non-claim; ignored: every "
                    "sentence is a claim"
                )
        except StructuredOutputError as exc:
            # Checking too much is safer than checking too little.
            flags = [True] * len(texts)
            notes.append(f"claim filter failed ({exc}); every sentence is a claim")
        # A sentence that carries a citation is a claim, whatever the filter said.
        flags = [flag or mark for flag, mark in zip(flags, cited, strict=True)]
    return {
        "sentences": units(split, flags),
        "citations": citations_of(split),
        "notes": notes,
        "prompt_ids": prompt_ids,
    }
