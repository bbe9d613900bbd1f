"""Question files: plain text or JSON lines; gold fields only for scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.documents.questions import is_hit, read_questions
from veriscribe.errors import InputError


def test_plain_text_is_one_question_a_line(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text(
        "Can I give my patient with back pain paracetamol?\n\n"
        "  first daily medicine for asthma most days  \n"
    )
    first, second = read_questions(path)
    assert first["question"] == "Can I give my patient with back pain paracetamol?"
    assert second["question"] == "first daily medicine for asthma most days"
    assert (first["id"], second["id"]) == ("1", "3")
    assert first["gold"] is None and first["answer"] is None and first["answerable"]


def test_json_lines_need_only_the_question(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"question": "Is Tylenol safe in pregnancy?"},
        {"id": "x", "question": "Dose?", "doc_id": "d", "section_id": "s"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_questions(path)
    assert (first["question"], first["gold"]) == ("Is Tylenol safe in pregnancy?", None)
    assert (second["id"], second["gold"]) == ("x", "d:s")
    assert not is_hit(first["gold"], "d:s") and is_hit(second["gold"], "d:s")
    with pytest.raises(InputError, match="needs `passage_id` or `section_id`"):
        read_questions(path, require_gold=True)


def test_a_json_line_without_a_question_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"query": "Dose?"}) + "\n")
    with pytest.raises(InputError, match=r"q.jsonl:1: needs `question`"):
        read_questions(path)
    path.write_text("\n\n")
    with pytest.raises(InputError, match="no questions"):
        read_questions(path)
