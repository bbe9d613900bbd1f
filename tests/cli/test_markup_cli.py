"""Text from articles, models, names and ids reaches the terminal as text, never markup.

Each case ran on the simulated model and once ended in a crash or a styled terminal:
Rich read ``[link=...]`` as a hyperlink, ``[conceal]`` as hidden text and an unmatched
closing tag as an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli import terminal
from veriscribe.cli.app import app
from veriscribe.cli.render import abstracts as render
from veriscribe.cli.terminal import SafeConsole

runner = CliRunner()

LINK = "[link=https://evil.example/x]stroke[/link]"
CONCEAL = "[conceal]secret words[/conceal]"


def article(tmp_path: Path, title: str, sentence: str) -> Path:
    """Write a short Markdown article whose title and first sentence are given."""
    path = tmp_path / "article.md"
    path.write_text(
        f"# {title}\n\n## Methods\n\n{sentence} Patients were followed for a year.\n\n"
        "## Results\n\nMortality fell by a third in the treated group.\n",
        "utf-8",
    )
    return path


@pytest.mark.parametrize("markup", [LINK, CONCEAL, "[/INST]"])
def test_markup_in_an_article_is_printed_as_written(
    tmp_path: Path, markup: str
) -> None:
    path = article(
        tmp_path, f"Trial {markup}", f"Patients with {markup} were enrolled."
    )
    result = runner.invoke(app, ["abstract", str(path), "--model", "sim"])
    assert result.exit_code == 0, result.output
    assert f"Abstract: Trial {markup}" in result.stdout
    assert f"Patients with {markup} were enrolled." in result.stdout


def test_an_unmatched_closing_tag_in_a_title_still_writes_the_abstract(
    tmp_path: Path,
) -> None:
    path = article(tmp_path, "Trial of drug [/bold]", "Patients were enrolled.")
    out = tmp_path / "abstract.json"
    result = runner.invoke(
        app, ["abstract", str(path), "--model", "sim", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "Abstract: Trial of drug [/bold]" in result.stdout
    assert json.loads(out.read_text("utf-8"))["title"] == "Trial of drug [/bold]"


def test_abstract_out_is_written_before_it_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("display failed")

    monkeypatch.setattr(render, "abstract_result", broken)
    path = article(tmp_path, "Trial", "Patients were enrolled.")
    out = tmp_path / "abstract.json"
    result = runner.invoke(
        app, ["abstract", str(path), "--model", "sim", "--out", str(out)]
    )
    assert result.exit_code == 1 and "display failed" in result.stderr
    assert json.loads(out.read_text("utf-8"))["title"] == "Trial"


def test_a_run_id_with_a_closing_tag_is_listed_and_shown(tmp_path: Path) -> None:
    path = article(tmp_path, "Trial", "Patients were enrolled.")
    out = tmp_path / "out.jsonl"
    run_id = "nightly[/]"
    batch = runner.invoke(
        app,
        ["batch", str(path), "--out", str(out), "--model", "sim", "--run-id", run_id],
    )
    assert batch.exit_code == 0, batch.output
    assert f"run {run_id}" in batch.stdout or run_id in batch.stdout
    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0, listed.output
    assert run_id in listed.stdout
    shown = runner.invoke(app, ["runs", "show", run_id])
    assert shown.exit_code == 0, shown.output
    assert run_id in shown.stdout


def test_a_heading_with_a_closing_tag_is_shown_in_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Wide enough that the table does not wrap the title.
    monkeypatch.setattr(terminal, "stdout", SafeConsole(width=200))
    doc = tmp_path / "guide.md"
    doc.write_text(
        "# Guide [link=https://evil.example/x]x[/link]\n\n"
        "## Treatment [/red]\n\nStart with a low dose.\n",
        "utf-8",
    )
    added = runner.invoke(app, ["corpus", "add", "g1", str(doc), "--model", "sim"])
    assert added.exit_code == 0, added.output
    shown = runner.invoke(app, ["corpus", "show", "g1"])
    assert shown.exit_code == 0, shown.output
    assert "Treatment [/red]" in shown.stdout
    assert "Guide [link=https://evil.example/x]x[/link]" in shown.stdout
