"""One-sentence section summaries, written at ingest for LLM-guided retrieval.

Several sections go into one call (the prompt cost of a call is shared and a small CPU
model spends most of its time on output tokens, so the reply is kept to one short line
per section: ``<n>: Covers ...``). Only an excerpt of each section is shown: the opening
of a guideline section names its topic, and retrieval needs the topic, not the detail.
A line that is missing or unusable falls back to the opening of the section itself,
recorded as ``lead``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from veriscribe.llm.client import LLM
from veriscribe.prompts import load_prompt
from veriscribe.results import Usage
from veriscribe.store.corpora import SectionRow, SummaryUpdate
from veriscribe.text.sentences import lead_sentence

BATCH_SECTIONS = 8
"""Sections summarised per model call."""

EXCERPT_CHARS = 320
"""Characters of each section shown to the model."""

SUMMARY_MAX_CHARS = 300
"""Summaries are cut (at a word) to this length."""

OUTPUT_TOKENS_PER_SECTION = 32

_MIN_SUMMARY_CHARS = 12
_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?(?:section\s*)?"
    r"(?:\[(\d{1,3})\]\s*[:.)\-]?|(\d{1,3})\s*[:.)\-])\s*(.+?)\s*$",
    re.IGNORECASE,
)


@dataclass
class BatchResult:
    """The summaries of one batch and what the call cost."""

    updates: list[SummaryUpdate]
    usage: Usage
    seconds: float


def batches(
    sections: Sequence[SectionRow], size: int = BATCH_SECTIONS
) -> Iterator[list[SectionRow]]:
    """Yield the sections in consecutive batches of at most ``size``."""
    for start in range(0, len(sections), size):
        yield list(sections[start : start + size])


def clip(text: str, limit: int, ellipsis: str = " ...") -> str:
    """Cut a text at a word boundary to at most ``limit`` characters (plus ellipsis)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + ellipsis


def render_batch(sections: Sequence[SectionRow]) -> str:
    """Write the numbered section excerpts of a batch for the prompt."""
    blocks = []
    for number, section in enumerate(sections, start=1):
        title = section.title or section.section_id
        blocks.append(
            f"Section {number} ({title}):\n{clip(section.text, EXCERPT_CHARS)}"
        )
    return "\n\n".join(blocks)


def parse_summary_lines(reply: str, count: int) -> dict[int, str]:
    """Return the summary line for each section number (1-based) found in the reply."""
    found: dict[int, str] = {}
    for line in reply.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        number = int(match.group(1) or match.group(2))
        text = match.group(3).strip().strip("\"'").strip()
        if 1 <= number <= count and number not in found:
            if len(text) >= _MIN_SUMMARY_CHARS:
                found[number] = clip(text, SUMMARY_MAX_CHARS, "...")
    return found


def lead_summary(section: SectionRow) -> str:
    """Return the opening sentence of a section, cut to summary length."""
    flat = " ".join(section.text.split())
    first = lead_sentence(flat) if flat else ""
    return clip(first or section.title or section.section_id, 250, "...")


async def summarize_sections(llm: LLM, sections: Sequence[SectionRow]) -> BatchResult:
    """Summarise one batch of sections; sections the reply misses get one more call.

    Small models sometimes stop after a few lines: the sections left without a
    usable line are then asked for once more, together. A reply cut at the token
    limit is not retried. Sections still missing fall back to their opening sentence
    (``lead``).
    """
    prompt = load_prompt("qa", "summarize_sections")
    lines: dict[str, str] = {}
    usage = Usage()
    seconds = 0.0
    todo = list(sections)
    for _ in range(2):
        limit = OUTPUT_TOKENS_PER_SECTION * len(todo) + 16
        reply = await llm.text(
            prompt.id,
            prompt.render(sections=render_batch(todo), count=str(len(todo))),
            max_tokens=limit,
        )
        usage, seconds = usage + reply.usage, seconds + reply.seconds
        for number, text in parse_summary_lines(reply.value, len(todo)).items():
            lines[todo[number - 1].key] = text
        todo = [section for section in todo if section.key not in lines]
        # Ask again only when the model stopped early; a reply cut at the token limit
        # was copying text, and another call would mostly copy again.
        if not todo or reply.usage.output_tokens >= limit - 4:
            break
    updates = []
    for section in sections:
        if section.key in lines:
            updates.append(
                SummaryUpdate(
                    section.doc_id,
                    section.section_id,
                    lines[section.key],
                    "model",
                    prompt.id,
                )
            )
        else:
            updates.append(
                SummaryUpdate(
                    section.doc_id, section.section_id, lead_summary(section), "lead"
                )
            )
    return BatchResult(updates, usage, seconds)
