"""Every shell example of the tutorials runs, so a tutorial that stops working fails.

Each page of ``docs/tutorials/`` is one script: its ``sh`` blocks in order, run by bash
with ``set -euo pipefail`` in an empty folder (``examples/`` linked in, as in a checkout),
on the simulated model with a fresh database. A block the test cannot run carries
``<!-- not run: why -->`` on the line before it; a page that needs PostgreSQL says
``<!-- needs: postgresql -->`` and runs on a fresh PostgreSQL database.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
FENCE = re.compile(r"^```(\S*)\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (.+?) -->$")
NEEDS = re.compile(r"^<!-- needs: ([a-z]+) -->$", re.MULTILINE)
# The HTTP tutorial's port, replaced by a free one so that runs cannot collide.
DOC_PORT = "8000"
TIMEOUT_S = 240


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page: its language, text, line and why it is not run."""

    lang: str
    text: str
    line: int
    not_run: str | None


def blocks(markdown: str) -> list[Block]:
    """Return the fenced code blocks of a Markdown page, in order."""
    found: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        previous = next((s for s in reversed(lines[:i]) if s.strip()), "")
        skip = NOT_RUN.match(previous.strip())
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            raise ValueError(f"unclosed code block at line {i + 1}")
        found.append(
            Block(
                lang=opening.group(1),
                text="\n".join(lines[i + 1 : end]),
                line=i + 1,
                not_run=skip.group(1) if skip else None,
            )
        )
        i = end + 1
    return found


def script(markdown: str, port: str) -> str:
    """Return the bash script of a page: its runnable ``sh`` blocks, in order."""
    parts = ["set -euo pipefail"]
    for block in blocks(markdown):
        if block.lang != "sh" or block.not_run:
            continue
        text = block.text.replace(f"localhost:{DOC_PORT}", f"localhost:{port}")
        text = text.replace(f"--port {DOC_PORT}", f"--port {port}")
        parts.append(f"echo '>>> block at line {block.line}' >&2\n{text}")
    return "\n".join(parts) + "\n"


def free_port() -> str:
    """Return a TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def pages() -> list[Path]:
    """Return the tutorial pages (the section's index has no commands)."""
    return sorted(p for p in TUTORIALS.glob("*.md") if p.name != "index.md")


def test_every_tutorial_has_runnable_commands() -> None:
    """Each tutorial runs something, and every skipped block says why."""
    assert pages(), "no tutorials found"
    for page in pages():
        found = blocks(page.read_text(encoding="utf-8"))
        runnable = [b for b in found if b.lang == "sh" and not b.not_run]
        assert runnable, f"{page.name} has no sh block that runs"
        for block in found:
            assert block.lang, (
                f"{page.name}:{block.line}: a code block names no language"
            )


def test_blocks_marks_skipped_blocks() -> None:
    """A block after a not-run comment is kept with its reason; others run."""
    page = (
        "text\n\n```sh\necho one\n```\n\n<!-- not run: a server -->\n"
        "```sh\necho two\n```\n\n```text\nout\n```\n"
    )
    found = blocks(page)
    assert [(b.lang, b.text, b.not_run) for b in found] == [
        ("sh", "echo one", None),
        ("sh", "echo two", "a server"),
        ("text", "out", None),
    ]
    assert "echo two" not in script(page, "1") and "echo one" in script(page, "1")


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.stem)
def test_tutorial_runs(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Run a tutorial's commands on the simulated model in a fresh folder."""
    markdown = page.read_text(encoding="utf-8")
    needs = set(NEEDS.findall(markdown))
    assert needs <= {"postgresql"}, f"unknown needs: {needs}"
    store = os.environ.get("VERISCRIBE_TEST_STORE", "").strip().lower()
    if store == "postgres" and "postgresql" not in needs:
        # The tutorials keep their own database; the SQLite pass runs them.
        pytest.skip("runs in the default (SQLite) pass")
    if "curl " in markdown and shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    if "postgresql" in needs:
        db = request.getfixturevalue("pg_dsn")
    else:
        db = str(tmp_path / "db.sqlite")
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        # The commands of this tree, whatever the environment installed.
        "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "VERISCRIBE_MODEL": "sim",
        "VERISCRIBE_DB": db,
        "HOME": str(tmp_path / "home"),
        "COLUMNS": "100",
    }
    env.pop("VERISCRIBE_SERVE_TOKEN", None)
    code = script(markdown, free_port())
    proc = subprocess.Popen(
        ["bash", "-c", code],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"{page.name} took over {TIMEOUT_S} s:\n{output[-4000:]}")
    finally:
        # A server a tutorial starts in the background ends with the page.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, f"{page.name} failed:\n{output[-6000:]}"
