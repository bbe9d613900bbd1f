"""A batch's --out at the edges: a huge foreign file, a device, a full disk."""

from __future__ import annotations

import errno
import json
import os
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.errors import InputError
from veriscribe.store.output import MAX_LINE_BYTES, ResultsFile

RUN = "run-x"
runner = CliRunner()


def peak_bytes_of_scan(path: Path) -> tuple[int, str]:
    """Scan ``path``; return the most memory it took and why it was refused."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            ResultsFile(path, RUN).scan()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, caught.value.user_message


def test_a_huge_foreign_file_is_refused_after_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.write(b"2026-12-07 started\n")
        out.truncate(3_000_000_000)  # sparse: 3 GB that take no disk
    peak, message = peak_bytes_of_scan(path)
    assert "line 1 is not a result of run run-x" in message
    assert peak < 1_000_000, peak


def test_a_file_of_one_huge_line_is_refused_after_a_bounded_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "blob.bin"
    with open(path, "wb") as out:
        out.truncate(MAX_LINE_BYTES * 16)
    peak, message = peak_bytes_of_scan(path)
    assert "line 1 is longer than any result line" in message
    # The line is read once and joined once: twice its cap at most.
    assert peak < MAX_LINE_BYTES * 2.5, peak


@pytest.mark.parametrize("device", ["/dev/full", "/dev/zero"])
def test_a_device_as_out_is_one_clear_line(tmp_path: Path, device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    article = tmp_path / "a.md"
    article.write_text("# Note\n\nA short note on blood pressure at home.\n")
    result = runner.invoke(
        app, ["batch", str(article), "--out", device, "--model", "sim"]
    )
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert f"{device} is not a regular file" in line and "bug" not in line


def articles(folder: Path, count: int) -> list[str]:
    folder.mkdir()
    paths = []
    for number in range(count):
        path = folder / f"note-{number}.md"
        path.write_text(
            f"# Note {number}\n\nPatient {number} measured blood pressure at home "
            "twice a day for a week.\n\nReadings fell by 6 mmHg on average.\n"
        )
        paths.append(str(path))
    return paths


def test_a_full_disk_stops_the_batch_in_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = articles(tmp_path / "notes", 40)
    out = tmp_path / "out.jsonl"
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(self: ResultsFile, lines: Sequence[tuple[str, str]]) -> int:
        raise full

    monkeypatch.setattr(ResultsFile, "append", no_space)
    args = ["batch", *inputs, "--out", str(out), "--model", "sim", "--concurrency", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert f"cannot write {out}: No space left on device" in line
    assert "kept in the database" in line and "bug" not in line
    shown = runner.invoke(app, ["runs", "list", "--json"])
    (run,) = json.loads(shown.stdout)
    # No new article was started once the file could take no line.
    assert run["status"] == "interrupted" and run["done"] < 40, run

    monkeypatch.undo()
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    written: list[dict[str, Any]] = [
        json.loads(raw) for raw in out.read_text().splitlines()
    ]
    assert sorted(item["source"] for item in written) == sorted(inputs)
