"""The result models are the commands' JSON, field for field (sim model, real graphs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from qa_helpers import GUIDELINE, cite
from veriscribe.cli.app import app
from veriscribe.results import (
    AbstractResult,
    BatchLine,
    BatchSummary,
    CheckedAnswer,
    FailedLine,
    QuestionSetAnswer,
    RunListing,
    RunSummary,
)

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plos-editorial.xml"
ANSWER = "Blood pressure is measured after rest. " + cite(
    "hypertension:diagnosis",
    "measured with a validated device after five minutes of seated",
)


def run_json(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def same(model: type[BaseModel], data: dict[str, Any]) -> None:
    """Assert that ``data`` is exactly an instance of ``model``, dumped."""
    assert model.model_validate(data).model_dump() == data


def test_abstract_json_is_an_abstract_result() -> None:
    same(AbstractResult, run_json("abstract", str(EXAMPLE), "--model", "sim"))


def test_batch_lines_are_batch_or_failed_lines(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_text("<article><body><p>cut off", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    summary = run_json(
        "batch", str(EXAMPLE), str(broken), "-o", str(out), "--model", "sim"
    )
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sorted("error" in line for line in lines) == [False, True]
    for line in lines:
        same(FailedLine if "error" in line else BatchLine, line)
    same(BatchSummary, summary)
    assert (summary["done"], summary["failed"]) == (1, 1)
    (listed,) = run_json("runs", "list")
    same(RunListing, listed)
    shown = run_json("runs", "show", summary["run_id"])
    same(RunSummary, shown)
    assert [f["reason"] for f in shown["failures"]] == [
        f["reason"] for f in summary["failures"]
    ]


def test_checked_answers_are_checked_answers(tmp_path: Path) -> None:
    run_json("corpus", "add", "htn", str(GUIDELINE), "--model", "sim")
    asked = run_json(
        "ask", "How is blood pressure measured?", "--corpus", "htn", "--model", "sim"
    )
    same(CheckedAnswer, asked)
    given = tmp_path / "answer.txt"
    given.write_text(ANSWER, encoding="utf-8")
    checked = run_json("verify", str(given), "--corpus", "htn", "--model", "sim")
    assert checked["claims"], "the answer's claim was checked"
    same(CheckedAnswer, checked)
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "q1", "question": "How is it measured?", "passage_id": "x"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "answers.jsonl"
    run_json(
        "ask",
        "--questions",
        str(questions),
        "-o",
        str(out),
        "--corpus",
        "htn",
        "--model",
        "sim",
    )
    (line,) = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    same(QuestionSetAnswer, line)


def test_a_field_the_model_does_not_know_is_refused() -> None:
    data = run_json("abstract", str(EXAMPLE), "--model", "sim")
    with pytest.raises(ValidationError):
        AbstractResult.model_validate({**data, "abstarct": data["abstract"]})
