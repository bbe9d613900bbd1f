"""A batch over several model servers, and what `runs show` says each one did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fake_server import FakeServer
from veriscribe.cli.app import app

pytestmark = pytest.mark.network_model

runner = CliRunner()


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeServer]]:
    # The fake servers answer structured calls from the schema the request carries.
    monkeypatch.setenv("VERISCRIBE_LLM__OPENAI_SCHEMA", "json_schema")
    started = [FakeServer(latency=0.05, max_in_flight=3).start() for _ in range(3)]
    yield started
    for server in started:
        server.kill()


def test_batch_over_three_servers_reports_each(
    servers: list[FakeServer], shared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    flags = [arg for s in servers for arg in ("--endpoint", s.url)]
    result = runner.invoke(
        app,
        ["batch", pcd, "--out", str(out), "-m", "openai:fake", *flags]
        + ["--concurrency", "3"]
        + ["--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["done"], summary["failed"]) == (11, 0)
    assert all(s.stats.served > 0 and s.stats.rejected == 0 for s in servers)
    assert all(s.stats.peak_in_flight <= 3 for s in servers)

    shown = runner.invoke(app, ["runs", "show", summary["run_id"], "--json"])
    detail = json.loads(shown.stdout)
    by_url = {e["endpoint"]: e for e in detail["endpoints"]}
    assert set(by_url) == {s.url for s in servers}
    for server in servers:
        row = by_url[server.url]
        assert row["calls"] == server.stats.served and row["errors"] == 0
        assert row["prompt_tokens"] > 0 and row["latency_p50_s"] >= 0.05
    assert sum(e["calls"] for e in detail["endpoints"]) == detail["calls"]

    text = runner.invoke(app, ["runs", "show", summary["run_id"]])
    assert text.exit_code == 0
    assert all(s.url in text.stdout for s in servers)
    assert "p95 s" in text.stdout


def test_endpoint_with_the_simulated_model_is_one_error_line(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["batch", str(tmp_path), "--out", str(tmp_path / "o.jsonl"), "-m", "sim"]
        + ["--endpoint", "http://127.0.0.1:9/v1"],
    )
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: --endpoint needs an ollama:<model> or openai:<model> SPEC, not sim"
    ]


def test_a_bad_endpoints_file_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "endpoints.toml"
    bad.write_text("[[endpoint]]\nkind = 'openai'\n")
    result = runner.invoke(app, ["doctor", "-m", "openai:m", "--endpoints", str(bad)])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: endpoints file") and "url: Field required" in line
