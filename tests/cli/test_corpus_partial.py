"""``corpus add`` with bad files among good ones: the good ones are added."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qa_helpers import GUIDELINE
from veriscribe.cli.app import app
from veriscribe.cli.failure import SOME_FAILED
from veriscribe.errors import InputError
from veriscribe.service import corpora
from veriscribe.settings import DEFAULT_MAX_SECTIONS, Settings

runner = CliRunner(env={"COLUMNS": "400"})  # a line is never wrapped


def skipped_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("skipped ")]


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"


def bad_files(folder: Path) -> dict[str, str]:
    """Write unreadable guideline files; return each name and what its line says."""
    folder.mkdir(exist_ok=True)
    cut = (FIXTURES / "ngc-11074-1col.pdf").read_bytes()[:900]
    (folder / "bad.pdf").write_bytes(cut)
    (folder / "empty.md").write_text("\n\n")
    return {"bad.pdf": "truncated", "empty.md": "no usable text"}


def test_one_bad_file_among_good_ones_adds_the_good_ones(tmp_path: Path) -> None:
    reasons = bad_files(tmp_path)
    good = tmp_path / "good.md"
    shutil.copy(GUIDELINE, good)
    named = [str(tmp_path / "bad.pdf"), str(good), str(tmp_path / "empty.md")]
    result = runner.invoke(app, ["corpus", "add", "htn", *named, "--model", "sim"])
    assert result.exit_code == SOME_FAILED == 3, result.output
    assert "1 added" in result.stdout
    lines = skipped_lines(result.stderr)
    assert len(lines) == 2, result.stderr
    for line, (name, reason) in zip(lines, reasons.items(), strict=True):
        assert line.startswith(f"skipped {tmp_path / name}: ") and reason in line
        assert line.count(name) == 1  # the path is not said twice
    shown = runner.invoke(app, ["corpus", "list", "--json"])
    (listed,) = json.loads(shown.stdout)
    assert (listed["name"], listed["documents"]) == ("htn", 1)


def test_json_lists_the_skipped_files_and_the_exit_code_says_so(
    tmp_path: Path,
) -> None:
    bad_files(tmp_path)
    args = [str(GUIDELINE), str(tmp_path / "bad.pdf"), str(tmp_path / "missing.md")]
    result = runner.invoke(app, ["corpus", "add", "htn", *args, "-m", "sim", "--json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert report["added"] == ["hypertension"]
    skipped = {Path(item["path"]).name: item["reason"] for item in report["skipped"]}
    assert set(skipped) == {"bad.pdf", "missing.md"}
    assert "no such file" in skipped["missing.md"]


def test_a_directory_with_a_bad_file_says_so_in_its_exit_code(tmp_path: Path) -> None:
    folder = tmp_path / "guidelines"
    bad_files(folder)
    shutil.copy(GUIDELINE, folder / "good.md")
    result = runner.invoke(app, ["corpus", "add", "htn", str(folder), "--model", "sim"])
    assert result.exit_code == 3, result.output
    assert len(skipped_lines(result.stderr)) == 2, result.stderr


def test_only_bad_files_add_nothing_in_one_line(tmp_path: Path) -> None:
    bad_files(tmp_path)
    named = [str(tmp_path / "bad.pdf"), str(tmp_path / "empty.md")]
    result = runner.invoke(app, ["corpus", "add", "htn", *named, "--model", "sim"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: no document could be read: ")
    assert "truncated" in line and "no usable text" in line
    one = runner.invoke(app, ["corpus", "add", "htn", named[0], "--model", "sim"])
    assert one.exit_code == 1
    (line,) = one.stderr.strip().splitlines()
    assert line.startswith(f"error: {named[0]}: ") and "truncated" in line
    listed = runner.invoke(app, ["corpus", "list", "--json"])
    assert json.loads(listed.stdout) == []  # no corpus was made


def headings(path: Path, count: int) -> Path:
    path.write_text(
        "# Guideline\n\n"
        + "".join(f"## Step {i}\n\nDo step {i} with care.\n\n" for i in range(count))
    )
    return path


async def test_a_document_over_the_section_limit_is_skipped(tmp_path: Path) -> None:
    settings = Settings(model="sim", max_sections=50)
    over = headings(tmp_path / "over.md", 50)  # 51 sections with its title
    under = headings(tmp_path / "under.md", 49)
    report = await corpora.add_corpus(settings, "steps", [over, under])
    assert report.added == ["under"] and report.sections == 50
    ((skipped),) = report.skipped
    assert skipped["path"] == str(over)
    assert "51 sections, over the 50 limit" in skipped["reason"]
    assert "VERISCRIBE_MAX_SECTIONS" in skipped["reason"]
    with pytest.raises(InputError, match="over the 50 limit"):
        await corpora.add_corpus(settings, "steps", [over])


def test_the_section_limit_is_far_above_real_guidelines(shared_data: Path) -> None:
    most = 0
    for sub in ("ngc", "vadod", "cpgqa"):
        skipped: list[dict[str, str]] = []
        docs = corpora.read_documents([shared_data / "guidelines" / sub], skipped)
        assert skipped == []
        most = max(most, *(len(doc.sections) for doc in docs))
    assert most == 190  # cpgQA's passages
    assert DEFAULT_MAX_SECTIONS >= 25 * most
