import json

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()


def test_doctor_json_on_sim() -> None:
    result = runner.invoke(app, ["doctor", "--model", "sim", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in (
        "backend",
        "model",
        "context_tokens",
        "ok",
        "prompt_tokens_per_second",
        "output_tokens_per_second",
        "free_output_tokens_per_second",
        "constrained_output_tokens_per_second",
    ):
        assert key in report
    assert report["free_output_tokens_per_second"] > 0
    assert (
        report["constrained_output_tokens_per_second"]
        == report["output_tokens_per_second"]
    )
    assert report["backend"] == "sim" and report["ok"] is True


def test_doctor_unreachable_ollama_is_one_line_naming_the_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    result = runner.invoke(app, ["doctor", "--model", "ollama:llama3.2:3b"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "http://127.0.0.1:9" in lines[0]


def test_doctor_missing_local_model_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERISCRIBE_LOCAL_MODEL", "/nonexistent")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "error: model file not found: /nonexistent (set by VERISCRIBE_LOCAL_MODEL)"
    ]


def test_doctor_rejects_unknown_spec() -> None:
    result = runner.invoke(app, ["doctor", "--model", "gpt4"])
    assert result.exit_code == 1 and "unknown model SPEC" in result.stderr
