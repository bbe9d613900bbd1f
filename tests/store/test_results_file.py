"""The batch output file: no partial line, no duplicate, repaired from the database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.errors import InputError
from veriscribe.store.output import ResultsFile

RUN = "run-x"


def line(source: str, **extra: object) -> str:
    return json.dumps({"source": source, "run_id": RUN, **extra})


def sources(path: Path) -> list[str]:
    return [json.loads(raw)["source"] for raw in path.read_text().splitlines()]


def test_append_skips_lines_already_written(tmp_path: Path) -> None:
    out = ResultsFile(tmp_path / "out.jsonl", RUN)
    out.sync(set(), {})
    assert out.append([("a", line("a")), ("b", line("b"))]) == 2
    assert out.append([("a", line("a")), ("c", line("c"))]) == 1
    assert sources(out.path) == ["a", "b", "c"]


def test_sync_cuts_a_partial_tail_and_appends_missing(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(line("a") + "\n" + line("b")[:17])
    report = ResultsFile(path, RUN).sync(
        {"a", "b", "c"}, {"b": line("b"), "c": line("c")}
    )
    assert report.cut_bytes == 17 and report.appended == 2 and report.dropped == 0
    assert sources(path) == ["a", "b", "c"]
    assert path.read_bytes().endswith(b"\n")


def test_sync_drops_duplicates_and_items_no_longer_final(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(
        "\n".join([line("a"), line("b", error="x"), line("a"), line("c")]) + "\n"
    )
    out = ResultsFile(path, RUN)
    report = out.sync({"a", "c"}, {})
    assert report.dropped == 2 and report.kept == 2
    assert sources(path) == ["a", "c"]
    assert out.append([("b", line("b", abstract="y"))]) == 1
    assert sources(path) == ["a", "c", "b"]


def test_a_file_of_another_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"source": "a", "run_id": "other"}) + "\n")
    with pytest.raises(InputError, match="not a result of run run-x"):
        ResultsFile(path, RUN).sync({"a"}, {})
    path.write_text("hello\n")
    with pytest.raises(InputError):
        ResultsFile(path, RUN).scan()
    assert path.read_text() == "hello\n"


def test_missing_file_is_created_from_the_database(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "out.jsonl"
    ResultsFile(path, RUN).sync({"a"}, {"a": line("a")})
    assert sources(path) == ["a"]


def test_two_writers_never_write_a_line_twice(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    first, second = ResultsFile(path, RUN), ResultsFile(path, RUN)
    first.sync(set(), {})
    second.sync(set(), {})
    assert first.append([("a", line("a"))]) == 1
    assert second.append([("a", line("a")), ("b", line("b"))]) == 1
    # A writer that died mid-line leaves a partial tail; the next append cuts it.
    with path.open("ab") as handle:
        handle.write(line("c").encode()[:10])
    assert first.append([("b", line("b")), ("d", line("d"))]) == 1
    assert sources(path) == ["a", "b", "d"]


def test_a_writer_follows_a_file_replaced_by_a_repair(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    writer, repairer = ResultsFile(path, RUN), ResultsFile(path, RUN)
    writer.sync(set(), {})
    writer.append([("a", line("a")), ("b", line("b"))])
    repairer.sync({"b"}, {})  # "a" is no longer final: the file is rewritten
    assert writer.append([("c", line("c"))]) == 1
    assert sources(path) == ["b", "c"]
