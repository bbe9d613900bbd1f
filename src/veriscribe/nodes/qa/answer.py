"""answer: short prose from the sections read, each claim followed by a quote marker."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.checks.markers import parse_markers, strip_markers
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.sources import fence_all, fit_sources
from veriscribe.nodes.qa.state import NOT_FOUND_ANSWER, QADeps, QAState, Turn
from veriscribe.prompts import load_prompt

HISTORY_TURNS = 2
HISTORY_ANSWER_CHARS = 400

_NOT_FOUND = re.compile(
    r"^\W*(?:not found in the (?:loaded )?guidelines"
    r"|the (?:loaded )?guidelines do not (?:address|answer|cover) this question)",
    re.IGNORECASE,
)


class AnswerReply(BaseModel):
    """The answer model's reply."""

    answer: str


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
            context=context, question=state["question"], sources=sources
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
    text = reply.value.answer.strip()
    if not text:
        notes.append("answer failed: the model returned an empty answer")
    not_found = bool(text) and is_not_found(text)
    return {
        "answer": NOT_FOUND_ANSWER if not_found else text,
        "not_found": not_found,
        "read_set": read,
        "notes": [*state.get("notes", []), *notes],
        "prompt_ids": [*state.get("prompt_ids", []), prompt.id],
    }
