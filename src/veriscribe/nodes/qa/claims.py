"""filter claims (paper appendix A.7): claim units, then the model's claim filter.

The answer is flattened, its markers stripped with their positions recorded, the prose
split into sentences with pySBD and pieces under 15 characters dropped (all in
:func:`veriscribe.checks.markers.split_claim_units`); the model then marks which
sentences state a checkable clinical claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, create_model

from veriscribe.checks.markers import ClaimSplit, split_claim_units
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.state import Citation, QADeps, QAState, SentenceInfo
from veriscribe.prompts import load_prompt

TOKENS_PER_SENTENCE = 4


class ClaimFlags(BaseModel):
    """The claim filter's reply: one flag per sentence."""

    claims: list[bool]


def flags_model(count: int) -> type[ClaimFlags]:
    """Return a reply schema that fixes the number of flags (constrained decoding)."""
    model: type[ClaimFlags] = create_model(
        "ClaimFlags",
        __base__=ClaimFlags,
        claims=(list[bool], Field(min_length=count, max_length=count)),
    )
    return model


def numbered(sentences: Sequence[str]) -> str:
    """Number sentences one per line for a prompt."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(sentences, start=1))


def units(split: ClaimSplit, flags: Sequence[bool]) -> list[SentenceInfo]:
    """Return the sentences with their claim flags."""
    return [
        SentenceInfo(text=s.text, start=s.start, end=s.end, claim=bool(flag))
        for s, flag in zip(split.sentences, flags, strict=True)
    ]


def citations_of(split: ClaimSplit) -> list[Citation]:
    """Return the markers of an answer as unchecked citations."""
    return [
        Citation(
            index=position.index,
            doc_id=marker.doc_id,
            section_id=marker.section_id,
            quote=marker.quote,
            offset=position.offset,
            tier="unchecked",
            span=None,
            note="",
        )
        for marker, position in zip(split.markers, split.positions, strict=True)
    ]


async def filter_claims(state: QAState, runtime: Runtime[QADeps]) -> dict[str, Any]:
    """Split the answer into sentences and decide which state claims."""
    deps = runtime.context
    split = split_claim_units(state.get("answer", ""))
    texts = [s.text for s in split.sentences]
    notes = list(state.get("notes", []))
    prompt_ids = list(state.get("prompt_ids", []))
    if deps.options.all_claims or not texts:
        flags = [True] * len(texts)
    else:
        prompt = load_prompt("qa", "claims")
        prompt_ids.append(prompt.id)
        try:
            reply = await deps.model().json(
                prompt.id,
                prompt.render(sentences=numbered(texts), count=str(len(texts))),
                flags_model(len(texts)),
                max_tokens=TOKENS_PER_SENTENCE * len(texts) + 16,
            )
            flags = list(reply.value.claims)
            if len(flags) != len(texts):
                raise StructuredOutputError(
                    f"{len(flags)} flags for {len(texts)} sentences"
                )
        except StructuredOutputError as exc:
            # Checking too much is safer than checking too little.
            flags = [True] * len(texts)
            notes.append(f"claim filter failed ({exc}); every sentence is a claim")
    return {
        "sentences": units(split, flags),
        "citations": citations_of(split),
        "notes": notes,
        "prompt_ids": prompt_ids,
    }
