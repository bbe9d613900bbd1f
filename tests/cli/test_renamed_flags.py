"""Renamed flags: each old name still works for one release, hidden, with a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qa_helpers import GUIDELINE, cite
from veriscribe.cli.app import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
ARTICLE = ROOT / "examples" / "plos-editorial.xml"


def lead(tmp_path: Path, *flags: str) -> tuple[list[dict[str, object]], str]:
    """Run the Lead-k baseline on one article; return its lines and its stderr."""
    out = tmp_path / f"lead{'-'.join(flags)}.jsonl"
    result = runner.invoke(
        app, ["eval", "baseline", "lead", str(ARTICLE), "--out", str(out), *flags]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return lines, result.stderr


def test_lead_sentences_under_the_old_name(tmp_path: Path) -> None:
    new, quiet = lead(tmp_path, "--sentences", "2")
    old, warned = lead(tmp_path, "--k", "2")
    assert [line["lead"] for line in old] == [line["lead"] for line in new]
    assert "warning: --k is now --sentences" in warned and "warning" not in quiet


def test_verify_window_under_the_old_name(tmp_path: Path) -> None:
    added = runner.invoke(
        app, ["corpus", "add", "htn", str(GUIDELINE), "--model", "sim"]
    )
    assert added.exit_code == 0, added.output
    answer = tmp_path / "answer.md"
    answer.write_text(
        "Measure after rest. Use a validated device. "
        + cite("hypertension:diagnosis", "after five minutes of seated rest")
    )

    def covered(*flags: str) -> tuple[int, str]:
        result = runner.invoke(
            app,
            ["verify", str(answer), "--corpus", "htn", "--no-judge", "--all-claims"]
            + [*flags, "--json"],
        )
        assert result.exit_code == 0, result.output
        return int(json.loads(result.stdout)["funnel"]["covered"]), result.stderr

    by_window = [covered("--window", str(window))[0] for window in (0, 2)]
    assert by_window[0] < by_window[1]  # the window matters for this answer
    assert [covered("--k", str(window))[0] for window in (0, 2)] == by_window
    assert "warning: --k is now --window" in covered("--k", "2")[1]


def test_retrieval_cut_offs_under_the_old_name() -> None:
    """The old name reaches the cut-offs' own check (before any corpus is read)."""
    args = ["eval", "retrieval", "--corpus", "c", "--questions", "q.jsonl"]
    old = runner.invoke(app, [*args, "--k", "0,3"])
    new = runner.invoke(app, [*args, "--cut-offs", "0,3"])
    assert old.exit_code == new.exit_code == 1
    refusal = "error: --cut-offs needs cut-offs of 1 or more"
    assert refusal in old.stderr and refusal in new.stderr
    assert "warning: --k is now --cut-offs" in old.stderr


@pytest.mark.parametrize("command", [["batch"], ["eval", "baseline", "naive"]])
def test_concurrency_under_the_old_short_name(
    command: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    args = [*command, str(ARTICLE), "--out", str(out), "--model", "sim", "--json"]
    result = runner.invoke(app, [*args, "-c", "2"])
    assert result.exit_code == 0, result.output
    assert "warning: -c is now --concurrency" in result.stderr
    assert len(out.read_text("utf-8").splitlines()) == 1


def test_old_names_are_hidden_from_help() -> None:
    for command, old in [
        (["verify"], "--k"),
        (["eval", "retrieval"], "--k"),
        (["eval", "baseline", "lead"], "--k"),
        (["batch"], "-c"),
        (["worker"], "-c"),
    ]:
        shown = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0
        assert f" {old} " not in shown.stdout and f" {old}," not in shown.stdout


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["ask", "Why?", "--corpus", "c", "--k", "51"], "--k must be at most 50"),
        (["verify", "a.md", "--corpus", "c", "--window", "-1"], "--window must be 0"),
        (["verify", "a.md", "--corpus", "c", "--k", "21"], "--k must be at most 20"),
        (["batch", "a.xml", "-o", "o.jsonl", "-c", "0"], "-c must be 1 or more"),
    ],
)
def test_a_value_past_an_options_bound_is_one_line(args: list[str], line: str) -> None:
    """Old name or new, a flag refuses what its options field would, in one line."""
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.stderr.strip().startswith(f"error: {line}")
