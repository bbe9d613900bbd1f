"""The cited-QA commands: corpus, ask, verify, chat (sim model, fixture corpus)."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from qa_helpers import GUIDELINE, cite
from veriscribe.cli import terminal
from veriscribe.cli.app import app
from veriscribe.cli.render import answers as render
from veriscribe.results import CheckedAnswer

runner = CliRunner()

EXACT = "Blood pressure is measured after rest. " + cite(
    "hypertension:diagnosis",
    "measured with a validated device after five minutes of seated",
)
NORMALIZED = " A diagnosis needs two occasions. " + cite(
    "hypertension:diagnosis",
    "A diagnosis of hypertension requires elevated readings on at least two separate "
    "occasions",
)
ELIDED = " Diuretics and calcium blockers are first-line. " + cite(
    "hypertension:drug-treatment",
    "Thiazide diuretics, calcium channel blockers ... are first-line agents",
)
RISKY = " ACE inhibitors should be combined with ARBs. " + cite(
    "hypertension:drug-treatment",
    "ACE inhibitors should ... be combined with angiotensin receptor",
)
FAIL = " Sodium must stay below 1000 mg a day. " + cite(
    "hypertension:lifestyle", "sodium must stay below 1000 mg"
)
UNRESOLVED = " Potassium supplements help most adults. " + cite(
    "hypertension:potassium", "potassium supplements help"
)
UNCITED = " Home monitoring is useful for every patient."
HAND_WRITTEN = EXACT + NORMALIZED + ELIDED + RISKY + FAIL + UNRESOLVED + UNCITED


def invoke(*args: str, input: str | None = None) -> Any:
    result = runner.invoke(app, list(args), input=input)
    return result


@pytest.fixture
def corpus() -> str:
    result = invoke("corpus", "add", "htn", str(GUIDELINE), "--model", "sim", "--json")
    assert result.exit_code == 0, result.output
    return "htn"


def test_corpus_add_list_show(corpus: str) -> None:
    again = invoke("corpus", "add", corpus, str(GUIDELINE), "--json")
    report = json.loads(again.stdout)
    assert report["unchanged"] == ["hypertension"] and report["added"] == []
    assert report["usage"]["calls"] == 0 and report["model"] is None
    listed = json.loads(invoke("corpus", "list", "--json").stdout)
    assert [(c["name"], c["documents"], c["sections"]) for c in listed] == [
        ("htn", 1, 5)
    ]
    shown = json.loads(invoke("corpus", "show", corpus, "--json").stdout)
    assert shown["name"] == "htn"
    (doc,) = shown["documents"]
    assert {"doc_id", "title", "source"} <= set(doc)
    assert doc["title"] == "Hypertension guideline"
    for section in shown["sections"]:
        assert {
            "doc_id",
            "section_id",
            "number",
            "title",
            "parent",
            "chars",
            "summary",
        } <= set(section)
    lifestyle = next(s for s in shown["sections"] if s["section_id"] == "lifestyle")
    assert (
        lifestyle["number"] == "2" and lifestyle["parent"] == "hypertension-guideline"
    )
    plain = invoke("corpus", "show", corpus)
    assert plain.exit_code == 0 and "Lifestyle" in plain.stdout


def test_unknown_corpus_is_one_error_line() -> None:
    result = invoke("ask", "Why?", "--corpus", "nope", "--model", "sim")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: no corpus named 'nope'; add documents with "
        "`veriscribe corpus add nope PATH...`"
    ]


def test_ask_json_has_the_spec_fields(corpus: str) -> None:
    result = invoke(
        "ask",
        "How much sodium per day?",
        "--corpus",
        corpus,
        "--model",
        "sim",
        "--retriever",
        "bm25",
        "--k",
        "2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("question", "answer", "claims", "read_set", "funnel"):
        assert key in data
    assert data["read_set"][0] == "hypertension:lifestyle"
    assert data["options"]["retriever"] == "bm25"
    assert data["options"]["select"] == "semantic"
    assert data["options"]["max_sentences"] == 3
    assert "{{cite:" in data["answer"]
    assert data["claims"]
    for claim in data["claims"]:
        assert claim["status"] in {
            "certified",
            "recovered",
            "partial",
            "unsupported",
            "uncited",
            "unjudged",
        }
        assert {"text", "verdict", "citations", "recovered_quote"} <= set(claim)
        for citation in claim["citations"]:
            assert {"doc_id", "section_id", "quote", "tier"} <= set(citation)
    assert set(data["funnel"]) == {
        "sentences",
        "claims",
        "covered",
        "verbatim",
        "lenient",
        "strict",
        "recovered",
        "not_checked",
    }


def test_verify_reports_each_tier_and_coverage_without_any_model(
    corpus: str, tmp_path: Path
) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text(HAND_WRITTEN)
    # A model that cannot be reached: any call would fail the command.
    started = time.perf_counter()
    result = invoke(
        "verify",
        str(answer),
        "--corpus",
        corpus,
        "--no-judge",
        "--all-claims",
        "--model",
        "ollama:unreachable",
        "--json",
    )
    wall = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["model"] is None and data["usage"]["calls"] == 0
    assert [c["tier"] for c in data["citations"]] == [
        "exact",
        "normalized",
        "elided",
        "elided_risky",
        "fail",
        "unresolved",
    ]
    assert [c["status"] for c in data["claims"]] == [
        "unjudged",
        "unjudged",
        "unjudged",
        "unsupported",
        "unsupported",
        "unsupported",
        "uncited",
    ]
    assert data["funnel"] == {
        "sentences": 7,
        "claims": 7,
        "covered": 6,
        "verbatim": 3,
        "lenient": 0,
        "strict": 0,
        "recovered": 0,
        "not_checked": 0,
    }
    assert data["metrics"]["vcr"] == 0.5
    assert data["seconds"] < 1.0 and wall < 5.0


def test_verify_attribution_window(corpus: str, tmp_path: Path) -> None:
    text = (
        "Blood pressure needs a validated device. Readings follow five minutes of rest. "
        + cite("hypertension:diagnosis", "after five minutes of seated")
    )
    answer = tmp_path / "window.txt"
    answer.write_text(text)

    def covered(k: int) -> int:
        result = invoke(
            "verify",
            str(answer),
            "--corpus",
            corpus,
            "--no-judge",
            "--all-claims",
            "--window",
            str(k),
            "--json",
        )
        return int(json.loads(result.stdout)["funnel"]["covered"])

    assert [covered(k) for k in (0, 1, 2)] == [1, 1, 2]


def test_verify_of_an_ask_answer_equals_what_ask_reported(
    corpus: str, tmp_path: Path
) -> None:
    asked = invoke(
        "ask",
        "How is hypertension diagnosed?",
        "--corpus",
        corpus,
        "--model",
        "sim",
        "--json",
    )
    assert asked.exit_code == 0, asked.output
    path = tmp_path / "ask.json"
    path.write_text(asked.stdout)
    checked = invoke(
        "verify", str(path), "--corpus", corpus, "--model", "sim", "--json"
    )
    assert checked.exit_code == 0, checked.output
    a, v = json.loads(asked.stdout), json.loads(checked.stdout)
    for key in ("answer", "claims", "citations", "funnel", "read_set", "question"):
        assert v[key] == a[key], key
    # From standard input, text only: the deterministic checks agree too.
    piped = invoke(
        "verify",
        "-",
        "--corpus",
        corpus,
        "--no-judge",
        "--all-claims",
        "--json",
        input=a["answer"],
    )
    p = json.loads(piped.stdout)
    assert [c["tier"] for c in p["citations"]] == [c["tier"] for c in a["citations"]]


def test_ask_renders_badges_quotes_and_funnel(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(terminal, "stdout", Console(file=buffer, width=100))
    result = invoke(
        "verify",
        "-",
        "--corpus",
        corpus,
        "--no-judge",
        "--all-claims",
        input=EXACT + FAIL + UNCITED,
    )
    assert result.exit_code == 0, result.output
    out = buffer.getvalue()
    assert "Blood pressure is measured after rest. [1]" in out
    assert "? unjudged" in out and "✘ unsupported" in out and "○ uncited" in out
    assert '[1] hypertension:diagnosis (exact) "measured with a validated device' in out
    assert "[2] hypertension:lifestyle (fail)" in out
    assert "funnel: 3 sentences > 3 claims > 2 covered > 1 verbatim" in out


def test_chat_from_standard_input(corpus: str) -> None:
    result = invoke(
        "chat",
        "--corpus",
        corpus,
        "--model",
        "sim",
        "--session",
        "s1",
        input="How much sodium?\n/sources\n/nonsense\n/quit\n",
    )
    assert result.exit_code == 0, result.output
    assert "veriscribe chat over corpus htn (session s1)" in result.stdout
    assert "funnel:" in result.stdout
    assert "hypertension:" in result.stdout
    assert "unknown command /nonsense" in result.stderr
    assert "resume with --session s1" in result.stdout
    again = invoke(
        "chat", "--corpus", corpus, "--model", "sim", "--session", "s1", input="/quit\n"
    )
    assert "1 earlier turns" in again.stdout


def _read_until(fd: int, marker: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {marker!r} in {seen[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_chat_in_a_real_terminal(corpus: str, tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    script = (
        "from veriscribe.cli.app import main; import sys; "
        "sys.argv = ['veriscribe', 'chat', '--corpus', 'htn', '--model', 'sim']; main()"
    )
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    try:
        _read_until(leader, b"you> ", 60)
        os.write(leader, b"How is hypertension diagnosed?\n")
        screen = _read_until(leader, b"you> ", 60)
        assert b"funnel:" in screen and b"[1]" in screen
        os.write(leader, b"/sources\n")
        screen = _read_until(leader, b"you> ", 30)
        assert b"hypertension:" in screen
        os.write(leader, b"/quit\n")
        _read_until(leader, b"resume with --session", 30)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


def test_the_display_shows_source_passages_and_unchecked_sentences() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200)
    quote = "aspirin in children under 16 years"
    citation = {
        "n": 1,
        "doc_id": "g",
        "section_id": "s",
        "tier": "exact",
        "quote": quote,
        "source": "Avoid aspirin in children under 16 years.",
    }
    fields: dict[str, Any] = {
        "question": "Is aspirin fine?",
        "answer": "Aspirin is fine.",
        "answer_numbered": "Aspirin is fine. [1]",
        "not_found": False,
        "error": None,
        "claims": [
            {
                "text": "Aspirin is fine.",
                "status": "unsupported",
                "verdict": "not_supported",
                "votes": [],
                "shortfall": None,
                "judged_by": "model",
                "score": None,
                "citations": [citation],
                "recovered_quote": None,
                "recovered_from": None,
                "note": "not certified: the source says 'avoid' where the claim does not",
            }
        ],
        "citations": [citation | {"span": None, "note": ""}],
        "not_checked": ["Here is what the guideline says."],
        "checked_claims": 1,
        "read_set": ["g:s"],
        "retrieval": {"method": "given", "candidates": 1, "notes": []},
        "funnel": {
            "sentences": 2,
            "claims": 1,
            "covered": 1,
            "verbatim": 1,
            "lenient": 0,
            "strict": 0,
            "recovered": 0,
            "not_checked": 1,
        },
        "metrics": {"ccr": 0.0, "scr": 0.0},
        "sentences": 2,
        "notes": [],
        "prompt_ids": [],
        "thread_id": "t",
        "reused": False,
        "usage": {},
        "seconds": 0.0,
        "corpus": "c",
        "model": None,
        "options": {
            "retriever": "bm25",
            "k": 3,
            "window": 1,
            "judge": True,
            "all_claims": False,
            "samples": 3,
            "citations": "free",
            "cite_by": "quote",
            "wording": "free",
            "judge_method": "scored",
        },
    }
    result = CheckedAnswer.model_validate(fields)
    render.qa_result(console, result, show_usage=False, errors=console)
    out = buffer.getvalue()
    assert 'in the source: "Avoid aspirin in children under 16 years."' in out
    assert "not checked" in out and "Here is what the guideline says." in out
    assert "1 not checked" in out
    fields.update(claims=[], not_checked=["Hello."], citations=[])
    fields["funnel"].update(claims=0, covered=0, verbatim=0)
    buffer.truncate(0)
    render.qa_result(
        console, CheckedAnswer.model_validate(fields), show_usage=False, errors=console
    )
    assert "No claim of this answer was checked" in buffer.getvalue()
    assert "(no claim checked)" in buffer.getvalue()


@pytest.mark.parametrize("command", [["ask", "Which dose?"], ["chat"]])
def test_a_choice_outside_its_options_is_one_error_line(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--corpus", "c", "--retriever", "bm42"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert "--retriever must be one of fused, llm, bm25, dense, not 'bm42'" in line
