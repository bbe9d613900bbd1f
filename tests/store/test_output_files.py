"""Output files: replaced whole, and a results file never cut unless it is ours."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from veriscribe.errors import InputError
from veriscribe.store.files import replacing, write_atomically
from veriscribe.store.output import ResultsFile


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("old")
    with pytest.raises(RuntimeError), replacing(out) as handle:
        handle.write("half of the new")
        raise RuntimeError("disk full")
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_replaced_file_keeps_its_mode_and_a_link_keeps_pointing(
    tmp_path: Path,
) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomically(link, ["new"])
    assert link.is_symlink() and target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640


def test_a_lone_line_without_newline_is_cut_only_when_it_is_ours(
    tmp_path: Path,
) -> None:
    run = "r1"
    path = tmp_path / "out.jsonl"
    cases = {
        b"notes without a newline": False,
        b'{"id": "x", "run_id": "r1"': False,  # not how our lines are written
        b'{"id":"x","source":"s","abstract":"torn': True,
        b'{"id":"x","source":"s","run_id":"r1"}': True,
        b'{"id":"x","source":"s","run_id":"r1': True,
        b'{"id":"x","source":"s","run_id":"other"}': False,
        b'{"id":"x","source":"s","run_id":"r2': False,
    }
    for content, ours in cases.items():
        path.write_bytes(content)
        results = ResultsFile(path, run)
        if ours:
            assert results.sync(set(), {}).cut_bytes == len(content), content
            assert path.read_bytes() == b""
        else:
            with pytest.raises(InputError, match="is not a results file"):
                results.sync(set(), {})
            assert path.read_bytes() == content
    os.remove(path)
