"""Hold-out question sets: unanswerable questions made by leaving passages out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from veriscribe.errors import InputError
from veriscribe.eval.holdout import hold_out, write_hold_out

PASSAGES = [
    {"passage_id": "p1", "title": "A", "text": "Start with the lowest dose."},
    {"passage_id": "p2", "title": "B", "text": "Review benefits and risks."},
    {"passage_id": "p3", "title": "C", "text": "Taper over weeks."},
    {"passage_id": "p4", "title": "D", "text": "Also: taper over weeks or months."},
]
QUESTIONS = [
    {"id": 1, "question": "Dose?", "answer": "lowest", "passage_id": "p1"},
    {
        "id": 2,
        "question": "Review?",
        "answer": "benefits and risks",
        "passage_id": "p2",
    },
    {"id": 3, "question": "Which dose?", "answer": "lowest dose", "passage_id": "p1"},
    # Its answer is written in p4 too: leaving p3 out would not make it unanswerable.
    {"id": 4, "question": "How fast?", "answer": "over weeks", "passage_id": "p3"},
    {"id": 5, "question": "Or?", "answer": "months", "passage_id": "p4"},
]


@pytest.mark.parametrize("seed", range(6))
def test_the_chosen_questions_lose_their_passage(seed: int) -> None:
    passages, questions = hold_out(PASSAGES, QUESTIONS, 2, seed=seed)
    kept = {p["passage_id"] for p in passages}
    unanswerable = [q for q in questions if not q["answerable"]]
    assert len(unanswerable) == 2
    assert all(q["passage_id"] not in kept for q in unanswerable)
    # Every other question is answerable from the passages kept.
    assert all(q["passage_id"] in kept for q in questions if q["answerable"])
    assert len(passages) == len(PASSAGES) - 2
    # No passage kept holds the answer of a question made unanswerable.
    texts = [p["text"].lower() for p in passages]
    assert not any(q["answer"] in t for q in unanswerable for t in texts)
    # The file's order is kept.
    ids = [q["id"] for q in questions]
    assert ids == sorted(ids)


def test_same_seed_same_set_and_a_cap_on_answerable_questions() -> None:
    assert hold_out(PASSAGES, QUESTIONS, 1, seed=3) == hold_out(
        PASSAGES, QUESTIONS, 1, seed=3
    )
    _, questions = hold_out(PASSAGES, QUESTIONS, 1, seed=3, answerable=1)
    assert [q["answerable"] for q in questions].count(True) == 1


def test_a_question_answered_elsewhere_is_not_chosen() -> None:
    # Four passages, but p3's answer is written in p4 while p4 stays: asked for
    # every passage, the chooser takes question 4 only once p4 is gone.
    made = 0
    for seed in range(20):
        try:
            _, questions = hold_out(PASSAGES, QUESTIONS, 4, seed=seed)
        except InputError as exc:
            assert "only 3 questions" in exc.user_message
            continue
        made += 1
        chosen = [q["id"] for q in questions if not q["answerable"]]
        assert 4 in chosen and 5 in chosen
    assert 0 < made < 20  # both orders occur among the seeds


def test_too_many_unanswerable_questions_are_refused() -> None:
    # p1 has two questions, but one passage makes one unanswerable question.
    with pytest.raises(InputError, match="can be made unanswerable, not 5"):
        hold_out(PASSAGES, QUESTIONS, 5)


def test_the_script_writes_a_corpus_and_a_question_set(tmp_path: Path) -> None:
    passages = tmp_path / "passages.jsonl"
    questions = tmp_path / "questions.jsonl"
    passages.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    script = Path(__file__).parents[2] / "scripts" / "hold_out.py"
    out = tmp_path / "holdout"
    args = ["--passages", str(passages), "--questions", str(questions)]
    done = subprocess.run(
        [sys.executable, str(script), *args, "--n", "2", "--out-dir", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    written = json.loads(done.stdout)
    assert written["unanswerable"] == 2 and written["passages_kept"] == 2
    rows = [json.loads(x) for x in (out / "questions.jsonl").read_text().splitlines()]
    assert sum(not r["answerable"] for r in rows) == 2
    kept = [json.loads(x) for x in (out / "passages.jsonl").read_text().splitlines()]
    assert sorted(p["passage_id"] for p in kept) == sorted(
        set(p["passage_id"] for p in PASSAGES) - set(written["passages_left_out"])
    )
    refused = subprocess.run(
        [sys.executable, str(script), *args, "--n", "9", "--out-dir", str(out)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and "unanswerable, not 9" in refused.stderr
    assert write_hold_out(passages, questions, out, 1).unanswerable == 1
