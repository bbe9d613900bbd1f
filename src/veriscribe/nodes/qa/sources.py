"""Guideline text in prompts: fenced as data, fitted to the model's context.

Section text is data, never instructions. In every prompt it sits between a line
``=== SOURCE <tag> ...`` and a line ``=== END <tag> ===``, where the tag is a hash of
the text itself, so a section cannot forge the line that closes its own fence; the
system message of each prompt says that fenced text is material to quote, not
instructions to follow. The checks that decide a claim's status (coverage, verbatim
tiers) are code, so no text inside a section can change them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from veriscribe.documents.guidelines import section_key
from veriscribe.llm.client import LLM
from veriscribe.store.corpora import SectionRow
from veriscribe.text.sentences import quotable_units


def numbered_text(text: str, start: int = 1) -> str:
    """Write a section's units one per line, each after its id ``[S<n>]``."""
    return "\n".join(
        f"[S{number}] {unit.text}"
        for number, unit in enumerate(quotable_units(text), start=start)
    )


MIN_PARTIAL_TOKENS = 200
"""A section is shown in part only if at least this many tokens of room remain."""

_ID_CHARS = re.compile(r"^[\s\[\(\"'`]+|[\s\]\)\"'`.,;]+$")


def fence_tag(text: str) -> str:
    """Return the fence tag of a text: a short hash of it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def fence(section: SectionRow, text: str | None = None, *, first_unit: int = 0) -> str:
    """Write one section for a prompt: fenced, with its key on the line before the text.

    Args:
        section: The section.
        text: The text to show, when only part of the section fits (default: all).
        first_unit: When positive, show the section as its quotable units, one per
            line after their ids ``[S<n>]``, numbered from this value.
    """
    body = section.text if text is None else text
    if first_unit > 0:
        body = numbered_text(body, first_unit)
    tag = fence_tag(body)
    return f"=== SOURCE {tag} ===\n[{section.key}]\n{body}\n=== END {tag} ==="


def fence_all(
    parts: Iterable[tuple[SectionRow, str | None]], *, numbered: bool = False
) -> str:
    """Fence several sections, separated by blank lines; units numbered across them."""
    out = []
    next_unit = 1
    for section, text in parts:
        out.append(fence(section, text, first_unit=next_unit if numbered else 0))
        if numbered:
            next_unit += len(quotable_units(section.text if text is None else text))
    return "\n\n".join(out)


def fit_sources(
    llm: LLM,
    build: Callable[[str], Sequence[BaseMessage]],
    sections: Sequence[SectionRow],
    max_output: int,
    *,
    numbered: bool = False,
) -> tuple[list[tuple[SectionRow, str | None]], list[str]]:
    """Choose how much of each section fits into one prompt, in the given order.

    Args:
        llm: The model whose context and tokenizer count.
        build: Renders the prompt messages given the fenced sources.
        sections: The sections to include, most important first.
        max_output: Output tokens reserved.
        numbered: The sections are shown as numbered units (see `fence`).

    Returns:
        The sections included, each with ``None`` (whole) or the part shown, and notes
        on what was left out or cut.
    """
    budget = llm.prompt_budget(max_output)
    remaining = budget - llm.count_tokens(list(build("")))
    chosen: list[tuple[SectionRow, str | None]] = []
    notes: list[str] = []
    for index, section in enumerate(sections):
        # Unit ids are counted as if two digits long; the whole is checked below.
        cost = _tokens(llm, fence(section, first_unit=10 if numbered else 0)) + 2
        if cost <= remaining:
            chosen.append((section, None))
            remaining -= cost
            continue
        rest = index
        if remaining >= MIN_PARTIAL_TOKENS:
            share = (remaining - 40) / cost
            part = _cut(section.text, int(len(section.text) * share * 0.95))
            chosen.append((section, part))
            notes.append(
                f"{section.key}: only the first {len(part)} of {len(section.text)} "
                "characters fit the model's context"
            )
            rest = index + 1
        left = [s.key for s in sections[rest:]]
        if left:
            notes.append(
                f"left out (no room in the model's context): {', '.join(left)}"
            )
        break
    # The per-part counts are estimates; check the whole and drop from the end.
    while (
        chosen
        and llm.count_tokens(list(build(fence_all(chosen, numbered=numbered)))) > budget
    ):
        dropped, _ = chosen.pop()
        notes.append(f"left out (no room in the model's context): {dropped.key}")
    return chosen, notes


def _tokens(llm: LLM, text: str) -> int:
    return llm.count_tokens([HumanMessage(text)])


def _cut(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    cut = text[:limit]
    if " " in cut[-40:]:
        cut = cut.rsplit(" ", 1)[0]
    return cut


def resolve_section(
    raw: str,
    keys: Sequence[str],
    *,
    doc_hint: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> str | None:
    """Map an id a model wrote to a section key, or None if it names none.

    Accepts ``doc:section`` keys, bare section ids when they are unambiguous (or the
    hinted document has them), ids wrapped in brackets or quotes, and the fence tags
    of the sections shown (``tags`` maps tag to key).
    """
    text = _ID_CHARS.sub("", raw.strip())
    if not text:
        return None
    known = set(keys)
    if text in known:
        return text
    if tags:
        # A model sometimes names a section by its fence tag.
        for part in (text, *text.split(":")):
            if part in tags:
                return tags[part]
    by_section: dict[str, list[str]] = {}
    for key in keys:
        _, _, section_id = key.partition(":")
        by_section.setdefault(section_id, []).append(key)
    matches = by_section.get(text, [])
    if len(matches) == 1:
        return matches[0]
    if doc_hint is not None and section_key(doc_hint, text) in known:
        return section_key(doc_hint, text)
    lowered = {key.lower(): key for key in keys}
    return lowered.get(text.lower())
