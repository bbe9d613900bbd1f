"""answer: short prose from the sections read, each claim followed by a quote marker."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from veriscribe.checks.markers import format_marker, parse_markers, strip_markers
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.sources import (
    fence_all,
    fence_tag,
    fit_sources,
    resolve_section,
)
from veriscribe.nodes.qa.state import NOT_FOUND_ANSWER, QADeps, QAState, Turn
from veriscribe.prompts import load_prompt

MAX_SENTENCES = 6
HISTORY_TURNS = 2
HISTORY_ANSWER_CHARS = 400

_UNSAFE = re.compile(r"[\s:|{}\[\]]")
_NOT_FOUND = re.compile(
    r"^\W*(?:not found in the (?:loaded )?guidelines"
    r"|the (?:loaded )?guidelines do not (?:address|answer|cover) this question)",
    re.IGNORECASE,
)


class CitedSentence(BaseModel):
    """One sentence of the answer with the section and the quote that support it."""

    sentence: str
    section_id: str = ""
    quote: str = ""


class AnswerReply(BaseModel):
    """The answer model's reply: cited sentences (none when nothing answers)."""

    # A bound for constrained decoding (small models loop), not a validation rule:
    # a longer answer from another backend is still checked in full.
    sentences: list[CitedSentence] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_SENTENCES}
    )


def compose(
    sentences: Sequence[CitedSentence],
    keys: Sequence[str],
    tags: Mapping[str, str] | None = None,
) -> str:
    """Write the answer prose: each sentence followed by its citation marker.

    The model gives each sentence, its section and its quote as separate fields (a small
    model fills fields far more reliably than it writes inline markup); the markers are
    then written here. An id that names no section read is kept as written, so that
    the check reports it as unresolved instead of hiding it.
    """
    parts = []
    seen: set[str] = set()
    for item in sentences:
        text = " ".join(item.sentence.split())
        # Small models loop; a sentence said twice is said once.
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        if text[-1] not in ".!?":
            text += "."
        quote = " ".join(item.quote.replace("}}", "} }").split()).strip()
        key = (
            resolve_section(item.section_id, keys, tags=tags) or item.section_id.strip()
        )
        doc_id, _, section_id = key.partition(":")
        doc_id = _UNSAFE.sub("", doc_id) or "unknown"
        section_id = _UNSAFE.sub("", section_id) or "unknown"
        if quote:
            text += " " + format_marker(doc_id, section_id, quote)
        parts.append(text)
    return " ".join(parts)


def history_block(history: Sequence[Turn]) -> str:
    """Return the last turns of a chat as context for a follow-up question."""
    if not history:
        return ""
    lines = ["Earlier in this conversation:"]
    for turn in history[-HISTORY_TURNS:]:
        answer = turn["answer"]
        if len(answer) > HISTORY_ANSWER_CHARS:
            answer = answer[:HISTORY_ANSWER_CHARS].rsplit(" ", 1)[0] + " ..."
        lines.append(f"Q: {turn['question']}\nA: {answer}")
    return "\n".join(lines) + "\n\n"


def is_not_found(answer: str) -> bool:
    """Tell whether an answer says the guidelines do not answer the question."""
    return not parse_markers(answer) and bool(_NOT_FOUND.match(answer.strip()))


def plain_answer(answer: str) -> str:
    """Return the answer without its citation markers."""
    return strip_markers(answer)[0].strip()


async def answer(state: QAState, runtime: Runtime[QADeps]) -> dict[str, Any]:
    """Write the cited answer, or say that the sections read do not answer."""
    deps = runtime.context
    corpus = state["corpus"]
    keys = state.get("read_set", [])
    rows = await deps.sections(corpus, keys)
    if not rows:
        return {"answer": NOT_FOUND_ANSWER, "not_found": True, "read_set": []}
    llm = deps.model()
    prompt = load_prompt("qa", "answer")
    context = history_block(state.get("history", []))

    def build(sources: str) -> list[BaseMessage]:
        return prompt.render(
            context=context,
            question=state["question"],
            sources=sources,
            example_id=next(iter(rows)),
        )

    ordered = [rows[key] for key in keys if key in rows]
    chosen, notes = fit_sources(llm, build, ordered, deps.options.answer_tokens)
    read = [section.key for section, _ in chosen]
    if not chosen:
        return {
            "answer": NOT_FOUND_ANSWER,
            "not_found": True,
            "read_set": [],
            "notes": [*state.get("notes", []), *notes],
        }
    try:
        reply = await llm.json(
            prompt.id,
            build(fence_all(chosen)),
            AnswerReply,
            max_tokens=deps.options.answer_tokens,
        )
    except StructuredOutputError as exc:
        # Recorded and routed to present, which reports it; nothing is made up.
        return {
            "answer": "",
            "not_found": False,
            "read_set": read,
            "notes": [*state.get("notes", []), *notes, f"answer failed: {exc}"],
            "prompt_ids": [*state.get("prompt_ids", []), prompt.id],
        }
    tags = {fence_tag(part or section.text): section.key for section, part in chosen}
    text = compose(reply.value.sentences, read, tags)
    not_found = not text or is_not_found(text)
    return {
        "answer": NOT_FOUND_ANSWER if not_found else text,
        "not_found": not_found,
        "read_set": read,
        "notes": [*state.get("notes", []), *notes],
        "prompt_ids": [*state.get("prompt_ids", []), prompt.id],
    }
