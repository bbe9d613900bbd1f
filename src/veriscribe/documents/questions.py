"""Question sets with a gold section: the cpgQA layout, and what counts as a hit."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from veriscribe.documents.guidelines import section_key
from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError


class GoldQuestion(TypedDict):
    """A question of a set, with what the set says its answer is."""

    id: str
    question: str
    gold: str
    """The gold section: ``doc:section``, or a section id that any document may hold."""
    answer: str | None
    """The gold answer (cpgQA: an exact span of the gold section), when the set has one."""
    answerable: bool
    """False when the set says the corpus does not hold the answer."""


def read_questions(path: Path, limit: int | None = None) -> list[GoldQuestion]:
    """Read questions with a gold section: cpgQA layout (``passage_id``) or ``section_id``.

    With a ``doc_id`` (as ``eval make-questions`` writes) the gold is that document's
    section; without, any section with the id counts. An ``answer`` field is the gold
    answer; ``answerable: false`` marks a question whose answer the corpus lacks (its
    gold section was left out, as ``scripts/hold_out.py`` writes).
    """
    questions: list[GoldQuestion] = []
    for number, item in json_lines(path):
        try:
            gold = str(item.get("section_id") or item["passage_id"])
            if item.get("doc_id"):
                # Section ids repeat across documents: match the full key.
                gold = section_key(str(item["doc_id"]), gold)
            answer = item.get("answer")
            answerable = item.get("answerable", True)
            questions.append(
                GoldQuestion(
                    id=str(item.get("id", number)),
                    question=item["question"],
                    gold=gold,
                    answer=None if answer is None else str(answer),
                    answerable=answerable,
                )
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(
                f"{path}:{number}: needs `question` and `passage_id` or `section_id` ({exc})"
            ) from exc
        if not isinstance(answerable, bool):
            raise InputError(
                f"{path}:{number}: `answerable` is true or false, not {answerable!r}"
            )
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise InputError(f"{path}: no questions")
    return questions


def is_hit(gold: str, key: str) -> bool:
    """Tell whether a retrieved section key (``doc:section``) is the gold section."""
    return key == gold or key.split(":", 1)[-1] == gold
