"""What the terminal shows of control characters, and what --json escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.cli.render.shared import print_json
from veriscribe.cli.terminal import json_safe, sanitize


def test_bidirectional_controls_are_shown_as_escapes() -> None:
    assert sanitize("abc\u202edcba\u2066x\u2069\u200e\u200f\u061c") == (
        "abc\\u202edcba\\u2066x\\u2069\\u200e\\u200f\\u061c"
    )
    assert sanitize("\x1b[2J\x9b") == "\\x1b[2J\\x9b"


def test_json_output_escapes_what_a_terminal_acts_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = "a\u202eb\x9bc\x1bd[/]"
    print_json({"title": value})
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\x9b" not in out and "\x1b" not in out
    assert '"a\\u202eb\\u009bc\\u001bd[/]"' in out
    assert json_safe('"\u2067"') == '"\\u2067"'


def test_a_title_that_reorders_itself_is_shown_escaped(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Trial \u202eexe.daolnwod\u202c\n\nPatients were enrolled.\n")
    result = CliRunner().invoke(app, ["abstract", str(doc), "--model", "sim"])
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.output and "\u202c" not in result.output
    assert "Trial \\u202eexe.daolnwod\\u202c" in result.stdout
