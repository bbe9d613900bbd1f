"""Every command ends in its result or one line on stderr: never a traceback."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from loopback import echoing_401
from stores import rows
from veriscribe import serve as serve_api
from veriscribe import service
from veriscribe.cli.app import app
from veriscribe.cli.failure import error_log_path
from veriscribe.errors import InputError, NotFound
from veriscribe.eval import abstracts as evaluation
from veriscribe.eval import baselines, labels
from veriscribe.eval import judge as judge_eval
from veriscribe.eval import qa as qa_eval
from veriscribe.eval import questions as questions_service
from veriscribe.eval import retrieval as retrieval_eval
from veriscribe.service import corpora, qa

runner = CliRunner()


class _FailingContext:
    """An async context manager that fails on entry (stands in for ChatSession.open)."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def __aenter__(self) -> Any:
        raise self.exc

    async def __aexit__(self, *_: object) -> bool:
        return False


def failing_like(original: Callable[..., Any], exc: BaseException) -> Any:
    """Return a stand-in for ``original`` (sync or async) that raises ``exc``."""
    if inspect.iscoroutinefunction(original):

        async def async_fail(*_: Any, **__: Any) -> Any:
            raise exc

        return async_fail

    def sync_fail(*_: Any, **__: Any) -> Any:
        raise exc

    return sync_fail


def commands(tmp: Path) -> dict[str, tuple[list[str], Any, str]]:
    """Return every command: its arguments and the service function it calls."""
    article = tmp / "article.txt"
    article.write_text("# Title\n\nA paragraph of an article body.\n", "utf-8")
    results = tmp / "results.jsonl"
    results.write_text("{}\n", "utf-8")
    qs = tmp / "questions.jsonl"
    qs.write_text('{"question": "q?", "passage_id": "p1"}\n', "utf-8")
    answer = tmp / "answer.txt"
    answer.write_text("An answer.", "utf-8")
    out = str(tmp / "out.jsonl")
    return {
        "doctor": (["doctor", "--model", "sim"], service, "doctor"),
        "abstract": (["abstract", str(article)], service, "generate_abstract"),
        "abstract --json": (
            ["abstract", str(article), "--json"],
            service,
            "generate_abstract",
        ),
        "batch": (["batch", str(article), "--out", out], service, "run_batch"),
        "batch --quiet": (
            ["batch", str(article), "--out", out, "--quiet"],
            service,
            "run_batch",
        ),
        "runs list": (["runs", "list"], service, "list_runs"),
        "runs show": (["runs", "show", "r1"], service, "show_run"),
        "runs resume": (["runs", "resume", "r1", "--quiet"], service, "resume_run"),
        "worker": (["worker", "r1", "--quiet"], service, "work_run"),
        "corpus add": (["corpus", "add", "c1", str(article)], corpora, "add_corpus"),
        "corpus list": (["corpus", "list"], corpora, "list_corpora"),
        "corpus show": (["corpus", "show", "c1"], corpora, "show_corpus"),
        "ask": (["ask", "Which dose?", "--corpus", "c1"], qa, "ask"),
        "ask --questions": (
            ["ask", "--questions", str(qs), "--out", out, "--corpus", "c1"],
            qa,
            "ask_questions",
        ),
        "chat": (["chat", "--corpus", "c1"], qa.ChatSession, "open"),
        "verify": (["verify", str(answer), "--corpus", "c1"], qa, "verify_answer"),
        "eval abstracts": (
            ["eval", "abstracts", str(results)],
            evaluation,
            "eval_abstracts",
        ),
        "eval baseline lead": (
            ["eval", "baseline", "lead", str(article), "--out", out],
            baselines,
            "run_lead",
        ),
        "eval baseline naive": (
            ["eval", "baseline", "naive", str(article), "--out", out, "--model", "sim"],
            baselines,
            "run_naive",
        ),
        "eval qa": (["eval", "qa", str(results)], qa_eval, "eval_qa"),
        "eval retrieval": (
            ["eval", "retrieval", "--corpus", "c1", "--questions", str(qs)],
            retrieval_eval,
            "eval_retrieval",
        ),
        "eval make-questions": (
            ["eval", "make-questions", "--corpus", "c1", "--n", "2", "--out", out],
            questions_service,
            "make_questions",
        ),
        "eval labels": (["eval", "labels", str(results)], labels, "eval_labels"),
        "eval judge": (["eval", "judge", "--corpus", "c1"], judge_eval, "eval_judge"),
        "serve": (["serve", "--model", "sim"], serve_api, "create_app"),
    }


COMMANDS = [
    "doctor",
    "abstract",
    "abstract --json",
    "batch",
    "batch --quiet",
    "runs list",
    "runs show",
    "runs resume",
    "worker",
    "corpus add",
    "corpus list",
    "corpus show",
    "ask",
    "ask --questions",
    "chat",
    "verify",
    "eval abstracts",
    "eval baseline lead",
    "eval baseline naive",
    "eval qa",
    "eval retrieval",
    "eval make-questions",
    "eval labels",
    "eval judge",
    "serve",
]


def test_every_command_is_driven(tmp_path: Path) -> None:
    import typer.main

    def paths(group: Any, prefix: tuple[str, ...] = ()) -> set[str]:
        found: set[str] = set()
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                found |= paths(command, (*prefix, name))
            else:
                found.add(" ".join((*prefix, name)))
        return found

    driven = {c.split(" --")[0] for c in COMMANDS}
    assert paths(typer.main.get_command(app)) == driven
    assert set(commands(tmp_path)) == set(COMMANDS)


def inject(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, exc: BaseException
) -> None:
    if owner is qa.ChatSession:
        monkeypatch.setattr(owner, name, lambda *a, **k: _FailingContext(exc))
    else:
        monkeypatch.setattr(owner, name, failing_like(getattr(owner, name), exc))


def stderr_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bug_is_one_line_naming_the_log(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args, owner, name = commands(tmp_path)[command]
    inject(monkeypatch, owner, name, RuntimeError(f"boom in {name}"))
    result = runner.invoke(app, args, input="a question\n")
    log = error_log_path()  # beside a SQLite file, else in the data directory
    lines = stderr_lines(result)
    assert result.exit_code == 1, result.output
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: unexpected error, a bug in veriscribe")
    assert f"RuntimeError: boom in {name}" in lines[0]
    assert str(log) in lines[0] and "--debug" in lines[0]
    assert "Traceback" not in result.output
    logged = log.read_text("utf-8")
    assert "Traceback (most recent call last)" in logged and f"boom in {name}" in logged


@pytest.mark.parametrize("command", COMMANDS)
def test_an_error_the_user_can_act_on_is_its_own_line(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args, owner, name = commands(tmp_path)[command]
    inject(monkeypatch, owner, name, NotFound(f"no corpus 'c1' ({name})"))
    result = runner.invoke(app, args, input="a question\n")
    assert result.exit_code == 1, result.output
    assert stderr_lines(result) == [f"error: no corpus 'c1' ({name})"]
    assert "Traceback" not in result.output
    assert not error_log_path().exists()


def test_debug_prints_the_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    inject(monkeypatch, service, "list_runs", RuntimeError("boom"))
    result = runner.invoke(app, ["--debug", "runs", "list"])
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert (
        result.stderr.rstrip()
        .splitlines()[-1]
        .startswith("error: unexpected error, a bug in veriscribe (RuntimeError: boom)")
    )


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    args, owner, name = commands(tmp_path)["corpus list"]
    inject(monkeypatch, owner, name, KeyboardInterrupt())
    result = runner.invoke(app, args)
    assert result.exit_code == 130
    assert stderr_lines(result) == ["error: interrupted"]


def test_a_bug_outside_the_service_call_is_caught_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from veriscribe.cli.render import corpus as render

    async def rows(*_: Any) -> list[Any]:
        return []

    monkeypatch.setattr(corpora, "list_corpora", rows)
    monkeypatch.setattr(
        render, "corpora_table", failing_like(render.corpora_table, KeyError("x"))
    )
    result = runner.invoke(app, ["corpus", "list"])
    assert result.exit_code == 1
    assert len(stderr_lines(result)) == 1 and "KeyError" in result.stderr


def test_bad_setting_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VERISCRIBE_LLM__TIMEOUT_S", "-1")
    result = runner.invoke(app, ["runs", "list"])
    assert result.exit_code == 1
    lines = stderr_lines(result)
    assert len(lines) == 1 and lines[0].startswith(
        "error: bad setting: VERISCRIBE_LLM__TIMEOUT_S: Input should be greater than 0"
    )


def test_a_log_record_goes_to_the_log_file_not_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import logging

    async def noisy(*_: Any, **__: Any) -> Any:
        try:
            raise ValueError("inner")
        except ValueError:
            logging.getLogger("veriscribe.service.batch").exception("article x failed")
        raise InputError("x.txt: unreadable")

    monkeypatch.setattr(service, "list_runs", noisy)
    result = runner.invoke(app, ["runs", "list"])
    assert stderr_lines(result) == ["error: x.txt: unreadable"]
    logged = error_log_path().read_text("utf-8")
    assert "article x failed" in logged and "ValueError: inner" in logged


def test_the_installed_entry_point_prints_no_traceback() -> None:
    code = (
        "import veriscribe.service as s\n"
        "async def boom(*a, **k):\n"
        "    raise RuntimeError('boom')\n"
        "s.list_runs = boom\n"
        "from veriscribe.cli.app import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "runs", "list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "a bug in veriscribe" in proc.stderr
    assert "RuntimeError: boom" in error_log_path().read_text("utf-8")


def test_a_reader_that_leaves_early_ends_the_command_quietly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # `veriscribe runs list | head`: the pipe breaks while the command writes.
    args, owner, name = commands(tmp_path)["runs list"]
    inject(monkeypatch, owner, name, BrokenPipeError(32, "Broken pipe"))
    result = runner.invoke(app, args)
    assert result.exit_code == 141
    assert stderr_lines(result) == []
    assert not error_log_path().exists()


# ------------------------------------------------------------------ secrets


def test_a_401_echoing_the_key_reaches_neither_stderr_nor_the_call_log(
    monkeypatch: pytest.MonkeyPatch, default_db: str
) -> None:
    key = "sk-proj-abcdefghijklmnop0123456789"
    token = "tok-0123456789-secret"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("SERVICE_TOKEN", token)
    with echoing_401([token]) as (url, seen):
        result = runner.invoke(
            app, ["doctor", "--model", "openai:gpt-x", "--base-url", url]
        )
    assert seen and seen[0]["authorization"] == f"Bearer {key}"
    assert result.exit_code == 1
    lines = stderr_lines(result)
    assert len(lines) == 1 and "HTTP 401" in lines[0] and "[REDACTED]" in lines[0]
    assert key not in result.output and token not in result.output
    logged = asyncio.run(rows(default_db, "SELECT outcome, detail FROM llm_calls"))
    assert logged
    for outcome, detail in logged:
        assert outcome == "error" and "HTTP 401" in detail
        assert key not in detail and token not in detail


# ------------------------------------------------------------------ terminal control


CLEAR = "\x1b[2J"


def test_control_characters_in_a_name_are_shown_escaped(tmp_path: Path) -> None:
    doc = tmp_path / "g.md"
    doc.write_text("# Guide\n\nShort text.\n", "utf-8")
    result = runner.invoke(app, ["corpus", "add", f"evil{CLEAR}", str(doc)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output
    assert "invalid corpus name" in result.stderr and "\\x1b[2J" in result.stderr


def test_control_characters_in_titles_and_paths_are_shown_escaped(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        f"# Evil {CLEAR}title\x07\x9b31m\n\n## Dosing {CLEAR}\n\nStart low.\n", "utf-8"
    )
    added = runner.invoke(app, ["corpus", "add", "g1", str(doc), "--model", "sim"])
    assert added.exit_code == 0, added.output
    shown = runner.invoke(app, ["corpus", "show", "g1"])
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "\x9b" not in shown.output
    assert "\\x1b[2Jtitle\\x07" in shown.output  # the title, wrapped or not
    assert "Dosing \\x1b[2J" in shown.output
    as_json = runner.invoke(app, ["corpus", "show", "g1", "--json"])
    assert "\x1b" not in as_json.stdout and "\x9b" not in as_json.stdout
    data = json.loads(as_json.stdout)  # the escaped JSON means the same text
    assert data["documents"][0]["title"] == f"Evil {CLEAR}title\x07\x9b31m"
    missing = runner.invoke(app, ["abstract", str(tmp_path / f"a{CLEAR}.txt")])
    assert missing.exit_code == 1
    assert "\x1b" not in missing.output and "a\\x1b[2J.txt" in missing.stderr
