"""Question sets: plain text or JSON lines, a gold section if scored, and what counts as a hit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

from veriscribe.documents.guidelines import section_key
from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError


class GoldQuestion(TypedDict):
    """A question of a set, with what the set says its answer is."""

    id: str
    question: str
    gold: str | None
    """The gold section: ``doc:section``, or a section id that any document may hold;
    None when the set gives none (the question is answered, not scored by section)."""
    answer: str | None
    """The gold answer (cpgQA: an exact span of the gold section), when the set has one."""
    answerable: bool
    """False when the set says the corpus does not hold the answer."""


def read_questions(
    path: Path, limit: int | None = None, *, require_gold: bool = False
) -> list[GoldQuestion]:
    """Read a question set: plain text (one question a line) or JSON lines.

    A JSON line needs only ``question``; its gold fields are for scoring. A gold
    section is ``section_id`` or ``passage_id`` (the cpgQA layout); with a ``doc_id``
    (as ``eval make-questions`` writes) it is that document's section, without, any
    section with the id counts. An ``answer`` field is the gold answer;
    ``answerable: false`` marks a question whose answer the corpus lacks (its gold
    section was left out, as ``scripts/hold_out.py`` writes). A file whose first
    non-blank line does not open a JSON object is read as plain text. With
    ``require_gold`` (scoring retrieval) every question must name its gold section.
    """
    if not _is_json_lines(path):
        items: Iterator[tuple[int, Any]] = _text_lines(path)
    else:
        items = json_lines(path)
    questions: list[GoldQuestion] = []
    for number, item in items:
        if not isinstance(item, dict):
            raise InputError(f"{path}:{number}: not a JSON object with `question`")
        question = item.get("question")
        if not isinstance(question, str):
            # An empty question is answered as ask answers it: counted as failed.
            raise InputError(f"{path}:{number}: needs `question` (a string)")
        raw_gold = item.get("section_id") or item.get("passage_id")
        gold = None if raw_gold is None else str(raw_gold)
        if gold is not None and item.get("doc_id"):
            # Section ids repeat across documents: match the full key.
            gold = section_key(str(item["doc_id"]), gold)
        if gold is None and require_gold:
            raise InputError(
                f"{path}:{number}: needs `passage_id` or `section_id` to score retrieval"
            )
        answerable = item.get("answerable", True)
        if not isinstance(answerable, bool):
            raise InputError(
                f"{path}:{number}: `answerable` is true or false, not {answerable!r}"
            )
        answer = item.get("answer")
        questions.append(
            GoldQuestion(
                id=str(item.get("id", number)),
                question=question,
                gold=gold,
                answer=None if answer is None else str(answer),
                answerable=answerable,
            )
        )
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise InputError(f"{path}: no questions")
    return questions


def _is_json_lines(path: Path) -> bool:
    """Tell whether a question file is JSON lines: its first non-blank line opens ``{``."""
    for _, item in _text_lines(path):
        return str(item["question"]).lstrip().startswith("{")
    return False


def _text_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, ``{"question": line}``) for each non-blank line of a text file."""
    try:
        with path.open(encoding="utf-8-sig") as stream:
            for number, line in enumerate(stream, 1):
                if line.strip():
                    yield number, {"question": line.strip()}
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def is_hit(gold: str | None, key: str) -> bool:
    """Tell whether a retrieved section key (``doc:section``) is the gold section."""
    return gold is not None and (key == gold or key.split(":", 1)[-1] == gold)
