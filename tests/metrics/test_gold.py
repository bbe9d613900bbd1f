"""Answers against gold answers: content-word recall, hit, and not-found scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.documents.questions import read_questions
from veriscribe.errors import InputError
from veriscribe.metrics.gold import content_words, gold_recall, not_found_scores
from veriscribe.text.tokens import alnum_words


def test_stop_words_do_not_count_towards_recall() -> None:
    # "of" and "the" are in any answer: only "benefits" and "risks" count.
    assert content_words("the benefits and risks of") == {"benefits", "risks"}
    assert gold_recall("benefits and risks", "Weigh the benefits first.") == 0.5
    assert gold_recall("benefits and risks", "Review risks and benefits.") == 1.0
    # A repeated gold word counts once; case and punctuation do not matter.
    assert gold_recall("Risks, risks", "RISKS!") == 1.0


def test_a_gold_answer_of_stop_words_only_is_scored_on_all_its_words() -> None:
    assert content_words("over it") == {"over", "it"}
    assert gold_recall("over it", "Get over it.") == 1.0
    assert gold_recall("", "anything") == 0.0


def test_words_are_lowercased_alphanumeric_tokens() -> None:
    assert alnum_words("Age < 30, SUD (AUD)") == ["age", "30", "sud", "aud"]
    assert gold_recall("age < 30", "patients aged 30") == 0.5


def test_not_found_precision_and_recall() -> None:
    # (answerable, said not found): 3 answerable (1 wrongly not found),
    # 2 unanswerable (1 rightly not found).
    scores = not_found_scores(
        [(True, False), (True, True), (True, False), (False, True), (False, False)]
    )
    assert (scores.answerable, scores.unanswerable) == (3, 2)
    assert scores.precision == 0.5
    assert scores.recall == 0.5
    assert scores.answerable_rate == pytest.approx(1 / 3)
    none = not_found_scores([(True, False)])
    assert none.precision is None and none.recall is None and none.answerable_rate == 0


def test_question_sets_carry_answer_and_answerability(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": 1, "question": "Dose?", "answer": "lowest", "passage_id": "p1"},
        {"question": "Gone?", "passage_id": "p2", "answerable": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_questions(path)
    assert (first["answer"], first["answerable"]) == ("lowest", True)
    assert (second["answer"], second["answerable"]) == (None, False)
    path.write_text(json.dumps({**rows[1], "answerable": "no"}) + "\n")
    with pytest.raises(InputError, match="`answerable` is true or false"):
        read_questions(path)
