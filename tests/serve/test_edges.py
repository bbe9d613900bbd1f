"""Uploads stored apart, nothing of the server shown, and a clear stop at start."""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from loopback import free_port
from problems import problem_detail
from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.cli.app import app as cli_app
from veriscribe.errors import InputError
from veriscribe.serve.app import UPLOAD_NAME_CHARS, safe_name

ARTICLE = """# Walking and blood pressure

## Background

High blood pressure is common in older adults.

## Methods

We enrolled 120 adults aged 65 to 80 years in a trial of supervised walking.

## Results

Systolic blood pressure fell by 8 mmHg after twelve weeks.

## Conclusions

Supervised walking lowers blood pressure in older adults.
"""


def guideline(title: str, advice: str) -> bytes:
    return f"# {title}\n\n## Advice\n\n{advice}\n".encode()


# -------------------------------------------------------------------------- uploads


async def test_two_uploads_of_one_name_are_both_kept(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    files = [
        ("files", ("a.md", guideline("First", "Walk every day."))),
        ("files", ("a.md", guideline("Second", "Swim every week."))),
    ]
    added = await http.post("/v1/corpora/two/documents", files=files)
    assert added.status_code == 200, added.text
    assert added.json()["added"] == ["a", "a-2"]
    shown = (await http.get("/v1/corpora/two")).json()
    titles = sorted(document["title"] for document in shown["documents"])
    assert titles == ["First", "Second"]  # neither replaced the other
    stored = sorted((tmp_path / "serve" / "corpora" / "two").glob("*/a.md"))
    assert [path.read_bytes() for path in stored] != 2 * [stored[0].read_bytes()]
    assert len(stored) == 2


async def test_two_requests_at_once_each_keep_their_file(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    async def upload(title: str) -> dict[str, Any]:
        files = {"files": ("a.md", guideline(title, f"Advice of {title}."))}
        answer = await http.post("/v1/corpora/same/documents", files=files)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    titles = [f"Title {n}" for n in range(4)]
    await asyncio.gather(*(upload(title) for title in titles))
    stored = (tmp_path / "serve" / "corpora" / "same").glob("*/a.md")
    contents = sorted(path.read_bytes() for path in stored)
    assert contents == sorted(guideline(t, f"Advice of {t}.") for t in titles)


def test_a_long_upload_name_keeps_its_extension() -> None:
    name = safe_name("x" * 296 + ".md", "upload-1.txt")
    assert len(name) == UPLOAD_NAME_CHARS and name.endswith("x.md")
    assert safe_name("y" * 300, "f") == "y" * UPLOAD_NAME_CHARS
    assert safe_name("a b/../../c d.md", "f") == "c_d.md"
    assert safe_name("..", "upload-2.txt") == "upload-2.txt"


async def test_a_long_upload_name_is_read_by_its_extension(
    http: httpx.AsyncClient,
) -> None:
    files = {"files": ("n" * 296 + ".md", guideline("Long", "A long name."))}
    added = await http.post("/v1/corpora/long/documents", files=files)
    assert added.status_code == 200, added.text
    report = added.json()
    assert report["skipped"] == [] and len(report["added"]) == 1


# ------------------------------------------------------------ what clients are shown


async def test_reports_show_no_server_path_or_process(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    files = [
        ("files", ("hypertension.md", GUIDELINE.read_bytes())),
        ("files", ("broken.pdf", b"%PDF-1.4 not really a PDF")),
    ]
    broken = await http.post("/v1/corpora/htn/documents", files=files[1:])
    assert problem_detail(broken, 400).startswith("broken.pdf: the PDF is truncated")
    added = await http.post("/v1/corpora/htn/documents", files=files)
    assert added.status_code == 200, added.text
    assert [s["path"] for s in added.json()["skipped"]] == ["broken.pdf"]
    shown = await http.get("/v1/corpora/htn")
    assert [d["source"] for d in shown.json()["documents"]] == ["hypertension.md"]

    started = await http.post("/v1/abstracts", files={"files": ("w.md", ARTICLE)})
    run_id = started.json()["run_id"]
    events = await http.get(f"/v1/runs/{run_id}/events")  # until the run ends
    summary = await http.get(f"/v1/runs/{run_id}")
    results = await http.get(f"/v1/runs/{run_id}/results")
    assert summary.json()["inputs"] == ["w.md"]
    assert summary.json()["out"] == f"{run_id}.jsonl"
    workers = [session["worker"] for session in summary.json()["sessions"]]
    assert workers and all(re.fullmatch(r"worker-[0-9a-f]+", w) for w in workers)
    assert [line["source"] for line in results.json()] == ["w.md"]

    host = socket.gethostname()
    for answer in (broken, added, shown, events, summary, results):
        assert str(tmp_path) not in answer.text
        assert host not in answer.text, answer.text


async def test_a_problem_detail_shows_no_server_path(
    app: FastAPI, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = app.state.server.config.files

    async def fails(*args: Any, **kwargs: Any) -> Any:
        raise InputError(f"cannot read {folder}/corpora/x/0123/a.md: bad")

    monkeypatch.setattr(service, "add_corpus", fails)
    answer = await http.post("/v1/corpora/x/documents", files={"files": ("a", "")})
    assert problem_detail(answer, 400) == "cannot read a.md: bad"


def test_serve_against_a_database_that_does_not_answer_says_so_in_one_line() -> None:
    dsn = f"postgresql://veriscribe@127.0.0.1:{free_port()}/veriscribe"
    result = CliRunner().invoke(cli_app, ["serve", "--model", "sim", "--db", dsn])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
