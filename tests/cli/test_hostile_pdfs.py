"""Every crafted PDF class beside a good file, through `corpus add` and `batch`: each
hostile file ends fast in one line, and the good file is added."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crafted_pdfs import PDF_CLASSES, REFUSED, good
from pdf_fuzz import malformed_pdf
from veriscribe.cli.app import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
BUDGET_S = 90.0  # every class together (each alone takes a few seconds at most)

ARTICLE = """# Home blood pressure readings

## Methods

We measured blood pressure in 412 adults at rest with a validated device.

## Results

Home readings were lower than clinic readings by 6 mmHg on average.
"""


def _hostile(folder: Path) -> dict[str, str]:
    """Write every refused class into ``folder``; return file name -> reason."""
    folder.mkdir(exist_ok=True)
    refused = {}
    for name, build in PDF_CLASSES.items():
        reason = REFUSED[name]
        if reason is not None:
            (folder / f"{name}.pdf").write_bytes(build())
            refused[f"{name}.pdf"] = reason
    return refused


def test_corpus_add_refuses_each_hostile_pdf_in_one_line_and_adds_the_good_one(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "guidelines"
    refused = _hostile(folder)
    (folder / "fine.pdf").write_bytes(good("The good guideline text."))
    (folder / "notes.md").write_text("# Notes\n\n## Part\n\nGood Markdown text.\n")
    started = time.monotonic()
    result = runner.invoke(
        app, ["corpus", "add", "h", str(folder), "--model", "sim", "--json"]
    )
    assert time.monotonic() - started < BUDGET_S
    assert result.exit_code == 3, result.output  # done in part
    report = json.loads(result.stdout)
    assert sorted(report["added"]) == ["fine", "notes"]
    skipped = {Path(item["path"]).name: item["reason"] for item in report["skipped"]}
    assert set(skipped) == set(refused)
    for name, reason in skipped.items():
        assert refused[name] in reason and "\n" not in reason, (name, reason)


def test_batch_fails_each_hostile_pdf_in_one_line_and_writes_the_good_article(
    tmp_path: Path,
) -> None:
    refused = _hostile(tmp_path / "in")
    (tmp_path / "in" / "good.md").write_text(ARTICLE)
    out = tmp_path / "out.jsonl"
    started = time.monotonic()
    result = runner.invoke(
        app,
        ["batch", str(tmp_path / "in"), "--out", str(out), "--model", "sim", "--json"],
    )
    assert time.monotonic() - started < BUDGET_S
    assert result.exit_code == 0, result.output
    got: dict[str, dict[str, Any]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        got[Path(item["source"]).name] = item
    assert "abstract" in got["good.md"], got["good.md"]
    for name, reason in refused.items():
        error = got[name]["error"]
        assert reason in error and "\n" not in error, (name, error)


def test_a_file_over_the_time_budget_is_one_line_and_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real PDF of five pages takes far longer to read than the budget set here; a
    # Markdown file takes milliseconds.
    folder = tmp_path / "guidelines"
    folder.mkdir()
    (folder / "article.pdf").write_bytes(
        (FIXTURES / "plos__journal.pone.0008519-2col.pdf").read_bytes()
    )
    (folder / "notes.md").write_text("# Notes\n\n## Part\n\nGood Markdown text.\n")
    monkeypatch.setenv("VERISCRIBE_READ_TIMEOUT_S", "0.05")
    result = runner.invoke(
        app, ["corpus", "add", "t", str(folder), "--model", "sim", "--json"]
    )
    assert result.exit_code == 3, result.output  # done in part
    report = json.loads(result.stdout)
    assert report["added"] == ["notes"]
    (skipped,) = report["skipped"]
    assert skipped["path"].endswith("article.pdf")
    assert "0.05 s limit per file" in skipped["reason"]
    assert "VERISCRIBE_READ_TIMEOUT_S" in skipped["reason"]


FUZZ_SAMPLE = range(0, 1500, 25)  # 60 of the fuzz test's files


def test_fuzzed_pdfs_beside_a_good_file_in_corpus_add_and_batch(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for seed in FUZZ_SAMPLE:
        (folder / f"seed-{seed}.pdf").write_bytes(malformed_pdf(seed))
    (folder / "good.md").write_text(ARTICLE)
    added = runner.invoke(
        app, ["corpus", "add", "f", str(folder), "--model", "sim", "--json"]
    )
    report = json.loads(added.stdout)
    assert added.exit_code == (3 if report["skipped"] else 0), added.output
    assert "good" in report["added"]
    assert len(report["added"]) + len(report["skipped"]) == len(FUZZ_SAMPLE) + 1
    for item in report["skipped"]:
        assert "\n" not in item["reason"] and "VERISCRIBE_READ_" not in item["reason"]
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["batch", str(folder), "--out", str(out), "--model", "sim", "--json"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(lines) == len(FUZZ_SAMPLE) + 1
    by_name = {Path(line["source"]).name: line for line in lines}
    assert "abstract" in by_name["good.md"]
    for line in lines:
        error = line.get("error") or ""
        assert "\n" not in error and "VERISCRIBE_READ_" not in error, line


def test_a_stopped_batch_stops_reading_a_slow_file(tmp_path: Path) -> None:
    import asyncio

    from crafted_pdfs import bad_checksum
    from veriscribe.options import AbstractOptions
    from veriscribe.service.batch import run_batch
    from veriscribe.settings import Settings

    # 190 MB of spaces after the text: seconds of parsing, within every limit.
    slow = tmp_path / "slow.pdf"
    slow.write_bytes(bad_checksum(inflated=190 << 20))

    async def stopped() -> Any:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.5, stop.set)
        return await run_batch(
            Settings(model="sim"),
            [str(slow)],
            tmp_path / "out.jsonl",
            AbstractOptions(),
            handle_signals=False,
            stop=stop,
        )

    started = time.monotonic()
    summary = asyncio.run(stopped())
    assert time.monotonic() - started < 3
    assert summary.interrupted
    # Not a failure: the file is read again when the run resumes.
    assert (tmp_path / "out.jsonl").read_text("utf-8") == ""
