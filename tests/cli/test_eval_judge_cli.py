"""`eval judge --abstract-pairs`: pairs from articles, judged without a model."""

import json
from pathlib import Path

from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()


def test_abstract_pairs_are_judged_by_the_checks(shared_data: Path) -> None:
    article = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    result = runner.invoke(
        app,
        ["eval", "judge", "--abstract-pairs", str(article), "--method", "checks"]
        + ["--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pairs_from"] == "abstracts" and report["model"] is None
    assert report["labels"]["supported"] == report["pairs"] / 2
    found = report["methods"]["checks"]
    assert found["accuracy_all"] is not None and found["accuracy_all"] > 0.5
    assert report["usage"]["calls"] == 0


def test_one_source_of_pairs_is_required() -> None:
    result = runner.invoke(app, ["eval", "judge"])
    assert result.exit_code == 1
    assert "--corpus" in result.output and "--abstract-pairs" in result.output
    result = runner.invoke(
        app, ["eval", "judge", "--corpus", "c", "--method", "hybrid"]
    )
    assert result.exit_code == 1 and "abstract pairs only" in result.output
