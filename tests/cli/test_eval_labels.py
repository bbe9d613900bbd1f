import json
from pathlib import Path

from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()


def test_classifier_scores_on_biorc800_dev(shared_data: Path) -> None:
    data = shared_data / "biorc800" / "dev.jsonl"
    result = runner.invoke(app, ["eval", "labels", str(data), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sentences"] == 1590
    assert report["classifier"]["micro_f1"] >= 0.80
    assert set(report["classifier"]["labels"]) >= {"background", "methods", "results"}


def test_llm_labeller_runs_through_the_same_scorer(shared_data: Path) -> None:
    data = shared_data / "biorc800" / "dev.jsonl"
    result = runner.invoke(
        app,
        [
            "eval",
            "labels",
            str(data),
            "--labeller",
            "llm",
            "--limit",
            "3",
            "--model",
            "sim",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["abstracts"] == 3
    assert (
        report["llm"]["usage"]["calls"] >= 3
    )  # at least one batched call per abstract
    assert 0.0 <= report["llm"]["micro_f1"] <= 1.0


def test_bad_label_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sentences": ["a"]}\n')
    result = runner.invoke(app, ["eval", "labels", str(bad)])
    assert result.exit_code == 1 and "bad.jsonl:1" in result.stderr


def test_label_report_renders_a_table(shared_data: Path) -> None:
    data = shared_data / "biorc800" / "dev.jsonl"
    result = runner.invoke(app, ["eval", "labels", str(data), "--limit", "5"])
    assert result.exit_code == 0, result.output
    assert "classifier labeller" in result.stdout and "micro_f1" in result.stdout


def test_plot_of_per_label_f1(shared_data: Path, tmp_path: Path) -> None:
    data = shared_data / "biorc800" / "dev.jsonl"
    png = tmp_path / "labels.png"
    result = runner.invoke(
        app, ["eval", "labels", str(data), "--limit", "20", "--plot", str(png)]
    )
    assert result.exit_code == 0, result.output
    assert f"plot: {png}" in result.output.replace("\n", "")
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 10_000
    unwritable = runner.invoke(
        app,
        ["eval", "labels", str(data), "--limit", "2", "--plot", "/nonexistent/x.png"],
    )
    assert unwritable.exit_code == 1 and "cannot write the plot" in unwritable.output
