"""Question sets with a gold section: the cpgQA layout, and what counts as a hit."""

from __future__ import annotations

from pathlib import Path

from veriscribe.documents.guidelines import section_key
from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError


def read_questions(path: Path, limit: int | None = None) -> list[dict[str, str]]:
    """Read questions with a gold section: cpgQA layout (``passage_id``) or ``section_id``.

    With a ``doc_id`` (as ``eval make-questions`` writes) the gold is that document's
    section; without, any section with the id counts.
    """
    questions = []
    for number, item in json_lines(path):
        try:
            gold = str(item.get("section_id") or item["passage_id"])
            if item.get("doc_id"):
                # Section ids repeat across documents: match the full key.
                gold = section_key(str(item["doc_id"]), gold)
            questions.append(
                {
                    "id": str(item.get("id", number)),
                    "question": item["question"],
                    "gold": str(gold),
                }
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(
                f"{path}:{number}: needs `question` and `passage_id` or `section_id` ({exc})"
            ) from exc
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise InputError(f"{path}: no questions")
    return questions


def is_hit(gold: str, key: str) -> bool:
    """Tell whether a retrieved section key (``doc:section``) is the gold section."""
    return key == gold or key.split(":", 1)[-1] == gold
