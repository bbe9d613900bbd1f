"""PDF and web-page inputs end to end through the CLI, on the simulated model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"


def test_corpus_add_reads_a_guideline_pdf(tmp_path: Path) -> None:
    folder = tmp_path / "guidelines"
    folder.mkdir()
    shutil.copy(FIXTURES / "ngc-11074-2col.pdf", folder / "urine.pdf")
    cut = (FIXTURES / "ngc-11074-1col.pdf").read_bytes()[:900]
    (folder / "cut.pdf").write_bytes(cut)
    result = runner.invoke(
        app, ["corpus", "add", "pdfs", str(folder), "--model", "sim", "--json"]
    )
    assert result.exit_code == 3, result.output  # some files could not be read
    data = json.loads(result.stdout)
    text = json.dumps(data)
    assert "urine" in text
    # The bad file is reported in one line, and the rest is read.
    reported = text + result.stderr
    assert "cut.pdf" in reported and "truncated" in reported


def test_abstract_of_an_article_pdf(tmp_path: Path) -> None:
    path = FIXTURES / "plos__journal.pone.0008519-2col.pdf"
    result = runner.invoke(app, ["abstract", str(path), "--model", "sim", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["abstract"]
    assert data["reference"] and "chronic fatigue syndrome" in data["reference"]


def test_abstract_of_an_article_web_page() -> None:
    path = FIXTURES / "plos__journal.pone.0008519-1col.html"
    result = runner.invoke(app, ["abstract", str(path), "--model", "sim", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["abstract"]


def test_abstract_of_an_encrypted_pdf_is_one_clear_line() -> None:
    path = FIXTURES / "encrypted.pdf"
    result = runner.invoke(app, ["abstract", str(path), "--model", "sim"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "encrypted" in lines[0] and "encrypted.pdf" in lines[0]


def test_batch_records_bad_pdfs_and_goes_on(tmp_path: Path) -> None:
    good = FIXTURES / "plos__journal.pone.0008519-1col.pdf"
    out = tmp_path / "out.jsonl"
    args = [str(good), str(FIXTURES / "encrypted.pdf"), "--out", str(out)]
    result = runner.invoke(app, ["batch", *args, "--model", "sim", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["done"], summary["failed"]) == (1, 1)
    failed = [json.loads(line) for line in out.read_text().splitlines()]
    assert any("encrypted" in json.dumps(item) for item in failed)


CPGQA = Path(__file__).resolve().parents[1] / "fixtures" / "cpgqa"


def _sections(corpus: str) -> dict[str, Any]:
    shown = runner.invoke(app, ["corpus", "show", corpus, "--json"])
    assert shown.exit_code == 0, shown.output
    listed = json.loads(shown.stdout)["sections"]
    return {f"{s['doc_id']}:{s['section_id']}": s for s in listed}


def test_answers_from_a_pdf_guideline_cite_their_pages(tmp_path: Path) -> None:
    # cpgQA passages printed by Chromium in two columns, a heading per passage.
    for corpus, source in (("pdf", "cpgqa-2col.pdf"), ("jsonl", "passages.jsonl")):
        added = runner.invoke(
            app, ["corpus", "add", corpus, str(CPGQA / source), "--model", "sim"]
        )
        assert added.exit_code == 0, added.output
    sections = {"pdf": _sections("pdf"), "jsonl": _sections("jsonl")}
    assert {s["page"] for s in sections["pdf"].values()} == {1, 2, 3}
    assert {s["page"] for s in sections["jsonl"].values()} == {None}
    out = tmp_path / "answers.jsonl"
    asked = runner.invoke(
        app,
        ["ask", "--corpus", "pdf", "--questions", str(CPGQA / "questions.jsonl")]
        + ["--out", str(out), "--model", "sim"],
    )
    assert asked.exit_code == 0, asked.output
    answers = [json.loads(line) for line in out.read_text().splitlines()]
    cited = [
        citation
        for answer in answers
        for citation in answer["citations"]
        + [c for claim in answer["claims"] for c in claim["citations"]]
    ]
    assert sum(bool(answer["citations"]) for answer in answers) >= 2
    for citation in cited:
        section = sections["pdf"][f"{citation['doc_id']}:{citation['section_id']}"]
        assert citation["page"] == section["page"] is not None
    question = answers[0]["question"]
    for corpus in ("pdf", "jsonl"):
        args = ["ask", question, "--corpus", corpus, "--model", "sim"]
        shown = runner.invoke(app, args)
        assert shown.exit_code == 0, shown.output
        data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
        lines = [line for line in shown.stdout.splitlines() if line.startswith("[1] ")]
        assert lines and data["citations"], shown.stdout
        page = data["citations"][0]["page"]
        if corpus == "pdf":
            assert f" p. {page} (" in lines[0]
        else:
            assert page is None and " p. " not in lines[0]
