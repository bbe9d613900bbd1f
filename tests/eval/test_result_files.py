"""Result files as the evaluation reads them: older and hand-made lines included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.errors import InputError
from veriscribe.eval.qa import eval_qa
from veriscribe.eval.result_files import (
    AbstractItem,
    read_abstract_items,
    read_answer_items,
)


def test_hand_made_abstract_lines_read_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(
        json.dumps({"id": 7, "abstract": "A.", "words_asked": "many", "extra": 1})
        + "\n{not json\n"
        + json.dumps(["a list"])
        + "\n"
    )
    read = read_abstract_items(path)
    # The line that is not JSON comes first, then the entries in order.
    assert read[0] == (
        "results.jsonl:2",
        "line 2 is not JSON (Expecting property name enclosed in double quotes)",
    )
    where, item = read[1]
    assert where == "results.jsonl:1" and isinstance(item, AbstractItem)
    assert (item.id, item.source, item.abstract, item.reference) == (
        "7",
        "",
        "A.",
        None,
    )
    assert item.words_asked == 0 and item.error is None and item.model is None
    assert item.model_extra == {"extra": 1}
    assert read[2] == ("results.jsonl:3", "not a JSON object")


def test_minimal_checked_answers_are_scored(tmp_path: Path) -> None:
    # An older answer: rates of coverage only, no verbatim-only counts, no tiers.
    old = {
        "funnel": {"sentences": 2, "claims": 2, "covered": 1},
        "claims": [{"text": "a", "verdict": "fully_supported"}, {"text": "b"}],
        "citations": [{}],
        "metrics": {"coverage_by_window": {"1": 0.5}},
    }
    path = tmp_path / "answers.json"
    # Pretty-printed objects one after another, as appended `--json` outputs are.
    path.write_text(json.dumps(old, indent=2) + "\n" + json.dumps(old, indent=2))
    answers = read_answer_items(path)
    assert len(answers) == 2 and answers[0].answerable is None
    report = eval_qa(path)
    assert report.funnel.claims == 4 and report.funnel.covered == 2
    assert report.coverage_by_window["1"].covered == 2
    assert report.coverage_by_window["1"].verbatim_covered is None
    assert report.verdicts["fully_supported"] == 2 and report.verdicts["unjudged"] == 2
    assert report.tiers["None"].count == 2
    dumped = report.model_dump(mode="json")
    assert "gold" not in dumped and "agreement" not in dumped and "plot" not in dumped
    assert dumped["per_question"][0]["id"] == "1"


def test_a_malformed_answer_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"funnel": {}, "claims": ["not a claim"]}) + "\n")
    with pytest.raises(
        InputError, match=r"result 1 is not a checked answer: claims\.0"
    ):
        read_answer_items(path)
    path.write_text(json.dumps({"funnel": {}}) + "\n")
    with pytest.raises(InputError, match="result 1 is not a checked answer"):
        read_answer_items(path)
    path.write_text("\n")
    with pytest.raises(InputError, match="no results"):
        read_answer_items(path)
