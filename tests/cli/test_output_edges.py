"""Output files at the edges: files that are not ours, replaced whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qa_helpers import GUIDELINE
from veriscribe.cli.app import app
from veriscribe.errors import BackendUnavailable
from veriscribe.service import qa as qa_service

runner = CliRunner()

PARAGRAPHS = [
    "Hypertension affects one adult in three and is often undiagnosed for years.",
    "We measured blood pressure in 412 adults at rest with a validated device.",
    "Home readings were lower than clinic readings by 6 mmHg on average.",
    "Treatment with thiazide diuretics lowered systolic pressure by 12 mmHg.",
]


def jats(title: str = "Blood pressure at home") -> str:
    """Return a small JATS article the sim model can summarise."""
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return (
        "<article><front><article-meta><title-group>"
        f"<article-title>{title}</article-title></title-group></article-meta></front>"
        f"<body><sec><title>Results</title>{body}</sec></body></article>"
    )


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "a partial line was left"
    return [json.loads(raw) for raw in text.splitlines()]


# ----------------------------------------------------------------- item 3: outputs


def test_batch_never_truncates_a_file_that_is_not_its_output(tmp_path: Path) -> None:
    article = tmp_path / "a.xml"
    article.write_text(jats())
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes, with no newline at the end")
    result = runner.invoke(
        app, ["batch", str(article), "--out", str(notes), "--model", "sim", "--quiet"]
    )
    assert result.exit_code == 1
    assert "is not a results file of run" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert notes.read_bytes() == b"my notes, with no newline at the end"


def test_batch_still_cuts_its_own_torn_first_line(tmp_path: Path) -> None:
    article = tmp_path / "a.xml"
    article.write_text(jats())
    out = tmp_path / "out.jsonl"
    out.write_bytes(b'{"id":"x","source":"' + str(article).encode() + b'","tit')
    result = runner.invoke(
        app, ["batch", str(article), "--out", str(out), "--model", "sim", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert [line["source"] for line in lines(out)] == [str(article)]


def test_abstract_out_replaces_the_file_instead_of_overwriting_it(
    tmp_path: Path,
) -> None:
    article = tmp_path / "a.xml"
    article.write_text(jats())
    out = tmp_path / "abstract.json"
    out.write_text("the previous abstract\n")
    reader = tmp_path / "held-open.json"  # what a reader of the old file holds
    os.link(out, reader)
    result = runner.invoke(
        app, ["abstract", str(article), "--model", "sim", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["abstract"]
    assert reader.read_text() == "the previous abstract\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_ask_questions_keeps_the_old_file_until_every_answer_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    added = runner.invoke(
        app, ["corpus", "add", "htn", str(GUIDELINE), "--model", "sim", "--json"]
    )
    assert added.exit_code == 0, added.output
    questions = tmp_path / "questions.jsonl"
    asked = [
        {"id": "a", "question": "How is BP measured?", "passage_id": "diagnosis"},
        {"id": "b", "question": "How much sodium?", "passage_id": "lifestyle"},
    ]
    questions.write_text("".join(json.dumps(q) + "\n" for q in asked))
    out = tmp_path / "answers.jsonl"
    out.write_bytes(b"answers of yesterday, no newline")
    real_ask = qa_service.ask
    calls = 0

    async def failing_second(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise BackendUnavailable("the server went away")
        return await real_ask(*args, **kwargs)

    args = ["ask", "--corpus", "htn", "--questions", str(questions), "--out", str(out)]
    monkeypatch.setattr(qa_service, "ask", failing_second)
    broken = runner.invoke(app, [*args, "--model", "sim", "--json"])
    assert broken.exit_code == 1 and "went away" in broken.output
    assert out.read_bytes() == b"answers of yesterday, no newline"

    monkeypatch.setattr(qa_service, "ask", real_ask)
    again = runner.invoke(app, [*args, "--model", "sim", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["reused"] == 1  # the first answer's thread
    assert [line["id"] for line in lines(out)] == ["a", "b"]
    assert not list(tmp_path.glob(".*.partial"))
