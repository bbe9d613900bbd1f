"""The batch and runs commands, including a batch process killed and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from stores import scalar
from veriscribe.cli.app import app
from veriscribe.cli.render import batch as render
from veriscribe.cli.render.shared import duration
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import BatchProgress, run_batch
from veriscribe.settings import Settings

runner = CliRunner()


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "a partial line was left"
    return [json.loads(raw) for raw in text.splitlines()]


def start(args: list[str], db: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "VERISCRIBE_DB": str(db)}
    return subprocess.Popen(
        [sys.executable, "-m", "veriscribe.cli.app", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_calls(proc: subprocess.Popen[bytes], db: str, calls: int) -> None:
    deadline = time.monotonic() + 120
    while (
        scalar(db, "SELECT COUNT(*) FROM llm_calls WHERE outcome='ok'") or 0
    ) < calls:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the batch made too few calls"
        time.sleep(0.05)


def test_batch_json_then_runs_list_and_show(shared_data: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_text("<article><body>")
    out = tmp_path / "out.jsonl"
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    result = runner.invoke(
        app,
        ["batch", pcd, str(broken), "--out", str(out), "--model", "sim", "--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["done"], summary["failed"], summary["remaining"]) == (11, 1, 0)
    run_id = summary["run_id"]
    assert len(lines(out)) == 12

    listed = runner.invoke(app, ["runs", "list", "--json"])
    assert listed.exit_code == 0
    (row,) = json.loads(listed.stdout)
    assert row["run_id"] == run_id and row["status"] == "finished"
    assert row["calls"] > 0 and row["prompt_tokens"] > 0 and row["seconds"] > 0

    shown = runner.invoke(app, ["runs", "show", run_id, "--json"])
    detail = json.loads(shown.stdout)
    (failure,) = detail["failures"]
    assert failure["source"] == str(broken) and "malformed XML" in failure["reason"]
    assert detail["call_log"]["ok"] == detail["calls"]

    text = runner.invoke(app, ["runs", "show", run_id])
    assert text.exit_code == 0
    assert "malformed XML" in text.stdout and "11 done" in text.stdout

    listing = runner.invoke(app, ["runs", "list"])
    assert run_id in listing.stdout and "finished" in listing.stdout


def test_unknown_run_is_one_error_line() -> None:
    for args in (["runs", "show", "nope"], ["runs", "resume", "nope"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1
        assert result.stderr.strip().splitlines() == [
            "error: no run 'nope' (see `veriscribe runs list`)"
        ]


def test_quiet_batch_prints_one_line(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    result = runner.invoke(
        app, ["batch", pcd, "--out", str(out), "--model", "sim", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1 and "11 done, 0 failed" in result.stdout


def test_progress_line_and_view_render() -> None:
    progress = BatchProgress(
        "run-abc",
        total=10,
        done=3,
        failed=1,
        articles_in_flight=4,
        calls_in_flight=2,
        call_limit=4,
        prompt_tokens=900,
        output_tokens=100,
        elapsed=10.0,
        finished_now=4,
        stage="working",
    )
    assert render.batch_status(progress) == (
        "done 3 · failed 1 · remaining 6 · in flight: 4 articles, 2/4 calls · "
        "100 tok/s · ETA 15.0s"
    )
    console = Console(width=100, record=True, color_system=None)
    view = render.BatchView(console)
    view.progress = progress
    console.print(view._render())
    text = console.export_text()
    assert "run run-abc" in text and "4/10 articles" in text
    assert duration(3725) == "1h02m" and duration(65) == "1m05s"


def test_killed_batch_resumes_without_repeating_a_finished_call(
    shared_data: Path, tmp_path: Path, default_db: str, new_db: Callable[[], str]
) -> None:
    """SIGKILL a real batch process part way, resume it, count the model calls.

    "Finished" means the response is stored: every stored response is in the response
    cache (a fresh database per test, so the cache holds exactly this run's answers).
    A call whose answer was logged but not yet stored when the process died is one the
    resume must make again; so the exact claim is: calls after the resume = calls an
    uninterrupted run makes - responses stored before the kill.
    """
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    db = default_db
    out = tmp_path / "out.jsonl"
    args = ["batch", pcd, "--out", str(out), "--model", "sim:latency=0.1"]
    args += ["--concurrency", "4"]

    proc = start([*args, "--quiet"], db, tmp_path)
    wait_for_calls(proc, db, 30)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored_before = scalar(db, "SELECT COUNT(*) FROM llm_cache")
    last_call = scalar(db, "SELECT MAX(id) FROM llm_calls")
    finished_before = scalar(db, "SELECT COUNT(*) FROM llm_calls WHERE outcome='ok'")
    assert scalar(db, "SELECT COUNT(*) FROM run_items WHERE status='running'") > 0
    assert 0 <= finished_before - stored_before <= 4  # at most the calls in flight

    run_id = scalar(db, "SELECT run_id FROM runs")
    resumed = start(["runs", "resume", run_id, "--json"], db, tmp_path)
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr.decode()
    summary = json.loads(stdout)
    assert summary["done"] == 11 and summary["remaining"] == 0

    results = lines(out)
    assert sorted(r["source"] for r in results) == sorted(
        f"{pcd}:{n}" for n in range(1, 12)
    )
    assert all(r["abstract"] for r in results)

    calls_after = scalar(
        db, "SELECT COUNT(*) FROM llm_calls WHERE outcome='ok' AND id > ?", last_call
    )
    reference = tmp_path / "clean"
    reference.mkdir()
    import asyncio

    clean = asyncio.run(
        run_batch(
            Settings(db=new_db(), model="sim"),
            [pcd],
            reference / "out.jsonl",
            AbstractOptions(),
            handle_signals=False,
        )
    )
    needed = clean.session.calls
    assert calls_after == needed - stored_before
    assert scalar(db, "SELECT COUNT(*) FROM llm_cache") == needed
    # The resumed run wrote what an uninterrupted run writes.
    clean_abstracts = {
        r["source"]: r["abstract"] for r in lines(reference / "out.jsonl")
    }
    assert {r["source"]: r["abstract"] for r in results} == clean_abstracts


def test_ctrl_c_drains_in_flight_articles_and_exits_cleanly(
    shared_data: Path, tmp_path: Path, default_db: str
) -> None:
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    db = default_db
    out = tmp_path / "out.jsonl"
    args = ["batch", pcd, "--out", str(out), "--model", "sim:latency=0.05"]
    args += ["--concurrency", "2"]
    proc = start([*args, "--quiet"], db, tmp_path)
    wait_for_calls(proc, db, 8)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr.decode()
    assert "resume with: veriscribe runs resume" in stderr.decode()
    assert scalar(db, "SELECT COUNT(*) FROM run_items WHERE status='running'") == 0
    interrupted = lines(out)
    assert len(interrupted) == scalar(
        db, "SELECT COUNT(*) FROM run_items WHERE status='done'"
    )
    assert 0 < len(interrupted) < 11
    assert "abstract" in interrupted[0]

    again = start([*args, "--json"], db, tmp_path)
    stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr.decode()
    assert json.loads(stdout)["session"]["processed"] == 11 - len(interrupted)
    assert len({r["source"] for r in lines(out)}) == len(lines(out)) == 11


@pytest.mark.parametrize("bad", [["--concurrency", "0"], ["--split", "xx"]])
def test_bad_batch_options_are_refused(
    bad: list[str], shared_data: Path, tmp_path: Path
) -> None:
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    result = runner.invoke(
        app, ["batch", pcd, "--out", str(tmp_path / "o.jsonl"), "--model", "sim", *bad]
    )
    assert result.exit_code != 0
    assert not (tmp_path / "o.jsonl").exists()


def test_unwritable_output_is_one_error_line(shared_data: Path, tmp_path: Path) -> None:
    pcd = str(shared_data / "articles" / "pcd.jsonl")
    result = runner.invoke(
        app, ["batch", pcd, "--out", str(tmp_path), "--model", "sim", "--quiet"]
    )
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert (
        line == f"error: {tmp_path} is not a regular file: write to a file with --out"
    )
