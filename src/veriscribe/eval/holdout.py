"""Unanswerable questions, made by leaving passages out (``scripts/hold_out.py``).

Given a cpgQA-layout question set and its passages, ``n`` questions are chosen (seeded)
and their gold passages left out of a new ``passages.jsonl``; the new question set
marks those questions ``answerable: false`` and keeps, in the file's order, every
question whose passage stayed (or the first ``answerable`` of them). Answering the set
from a corpus of the new passages measures how often "not found" is said when it
should be (``eval qa``: not-found recall) and when it should not.

A question whose passage is left out is dropped unless chosen, so the set holds
exactly ``n`` unanswerable questions. A question is not chosen when its gold answer
(lower-cased, spaces folded) is also written in a passage that stays: the corpus would
still answer it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError
from veriscribe.results import Result

__all__ = ["HoldOutSummary", "hold_out", "write_hold_out"]

_SPACE = re.compile(r"\s+")


class HoldOutSummary(Result):
    """What :func:`write_hold_out` wrote: the files, passages left out, questions."""

    passages: str
    questions: str
    passages_kept: int
    passages_left_out: list[str]
    unanswerable: int
    answerable: int
    seed: int


def _folded(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def hold_out(
    passages: Sequence[dict[str, Any]],
    questions: Sequence[dict[str, Any]],
    n: int,
    *,
    seed: int = 0,
    answerable: int | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the passages kept and the question set with ``n`` unanswerable questions.

    Raises:
        InputError: When fewer than ``n`` questions can be made unanswerable.
    """
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    texts = {str(p["passage_id"]): _folded(str(p.get("text", ""))) for p in passages}
    removed: set[str] = set()
    chosen: set[int] = set()
    for index in order:
        if len(chosen) == n:
            break
        gold = str(questions[index]["passage_id"])
        if gold in removed or gold not in texts:
            continue
        answer = _folded(str(questions[index].get("answer") or ""))
        # Left out, the passage must take the answer with it.
        if answer and any(
            answer in text
            for pid, text in texts.items()
            if pid != gold and pid not in removed
        ):
            continue
        removed.add(gold)
        chosen.add(index)
    if len(chosen) < n:
        raise InputError(
            f"only {len(chosen)} questions can be made unanswerable, not {n}"
        )
    kept_questions: list[dict[str, Any]] = []
    answerable_left = answerable
    for index, question in enumerate(questions):
        if index in chosen:
            kept_questions.append({**question, "answerable": False})
        elif str(question["passage_id"]) not in removed and answerable_left != 0:
            kept_questions.append({**question, "answerable": True})
            if answerable_left is not None:
                answerable_left -= 1
    kept_passages = [p for p in passages if str(p["passage_id"]) not in removed]
    return kept_passages, kept_questions


def _read(path: Path, needs: Sequence[str]) -> list[dict[str, Any]]:
    items = []
    for number, item in json_lines(path):
        if not isinstance(item, dict) or any(key not in item for key in needs):
            raise InputError(f"{path}:{number}: needs {', '.join(needs)}")
        items.append(item)
    if not items:
        raise InputError(f"{path}: empty")
    return items


def write_hold_out(
    passages_path: Path,
    questions_path: Path,
    out_dir: Path,
    n: int,
    *,
    seed: int = 0,
    answerable: int | None = None,
) -> HoldOutSummary:
    """Write ``passages.jsonl`` and ``questions.jsonl`` of a hold-out set to a directory.

    Returns:
        What was written: the paths, the passages left out, and question counts.
    """
    passages = _read(passages_path, ("passage_id", "text"))
    questions = _read(questions_path, ("question", "passage_id"))
    kept, asked = hold_out(passages, questions, n, seed=seed, answerable=answerable)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        corpus = out_dir / "passages.jsonl"
        question_file = out_dir / "questions.jsonl"
        for path, rows in ((corpus, kept), (question_file, asked)):
            path.write_text(
                "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                encoding="utf-8",
            )
    except OSError as exc:
        raise InputError(f"cannot write to {out_dir}: {exc.strerror}") from exc
    left_out = sorted(
        {str(p["passage_id"]) for p in passages} - {str(p["passage_id"]) for p in kept}
    )
    return HoldOutSummary(
        passages=str(corpus),
        questions=str(question_file),
        passages_kept=len(kept),
        passages_left_out=left_out,
        unanswerable=sum(not q["answerable"] for q in asked),
        answerable=sum(bool(q["answerable"]) for q in asked),
        seed=seed,
    )
