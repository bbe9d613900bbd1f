"""Inputs at the edges: symbolic link loops, Ctrl-C while expanding, deep nesting."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import veriscribe
from veriscribe.cli.app import app
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import register as batch_service
from veriscribe.service.batch import run_batch
from veriscribe.settings import Settings

runner = CliRunner()
SOURCE = str(Path(veriscribe.__file__).resolve().parents[1])  # the code under test

PARAGRAPHS = [
    "Hypertension affects one adult in three and is often undiagnosed for years.",
    "We measured blood pressure in 412 adults at rest with a validated device.",
    "Home readings were lower than clinic readings by 6 mmHg on average.",
    "Treatment with thiazide diuretics lowered systolic pressure by 12 mmHg.",
]


def jats(title: str = "Blood pressure at home") -> str:
    """Return a small JATS article the sim model can summarise."""
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return (
        "<article><front><article-meta><title-group>"
        f"<article-title>{title}</article-title></title-group></article-meta></front>"
        f"<body><sec><title>Results</title>{body}</sec></body></article>"
    )


def deep_xml(levels: int = 20_000) -> str:
    """Return an article whose one paragraph nests ``levels`` italics."""
    inner = "<italic>" * levels + "deep" + "</italic>" * levels
    return f"<article><body><p>{inner}</p></body></article>"


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "a partial line was left"
    return [json.loads(raw) for raw in text.splitlines()]


def by_source(path: Path) -> dict[str, dict[str, Any]]:
    return {Path(line["source"]).name: line for line in lines(path)}


# ------------------------------------------------------------ item 4: link loops


def test_a_glob_over_symlink_loops_ends_and_reads_each_file_once(
    tmp_path: Path, default_db: str
) -> None:
    tree = tmp_path / "d"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "good.xml").write_text(jats())
    for name in ("l1", "l2"):
        (tree / name).symlink_to(".")  # back into the tree
    (tree / "sub" / "up").symlink_to("..")
    (tree / "out").symlink_to(tmp_path)  # out of the tree
    outside = tmp_path / "elsewhere.xml"
    outside.write_text(jats("Read only when named"))
    (tree / "sub" / "link.xml").symlink_to(outside)  # a file link leading out
    (tree / "sub" / "same.xml").symlink_to(tree / "sub" / "good.xml")  # stays in
    out = tmp_path / "out.jsonl"
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "veriscribe.cli.app",
            "batch",
            "d/**/*.xml",
            "--out",
            str(out),
            "--model",
            "sim",
            "--json",
        ],  # fmt: skip
        cwd=tmp_path,
        env={**os.environ, "VERISCRIBE_DB": default_db, "PYTHONPATH": SOURCE},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert time.monotonic() - started < 60
    got = by_source(out)
    assert sorted(got) == ["good.xml", "link.xml", "same.xml"]
    assert "abstract" in got["good.xml"] and "abstract" in got["same.xml"]
    assert "outside" in got["link.xml"]["error"]
    assert all("/l1/" not in line["source"] for line in lines(out))


@pytest.mark.sqlite_only(reason="one process, its own SQLite file")
def test_ctrl_c_stops_a_batch_still_expanding_its_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veriscribe.documents.tree import WalkStopped

    seen_stop: list[bool] = []

    def endless_walk(text: str, *, should_stop: Any) -> Any:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if should_stop():
                seen_stop.append(True)
                raise WalkStopped
            time.sleep(0.01)
        raise AssertionError("the walk was never asked to stop")

    monkeypatch.setattr(batch_service, "expand_input", endless_walk)

    async def interrupted() -> Any:
        loop = asyncio.get_running_loop()
        loop.call_later(0.5, os.kill, os.getpid(), signal.SIGINT)
        return await run_batch(
            Settings(model="sim"),
            [str(tmp_path / "huge" / "**" / "*.xml")],
            tmp_path / "out.jsonl",
            AbstractOptions(),
        )

    started = time.monotonic()
    summary = asyncio.run(interrupted())
    assert time.monotonic() - started < 15
    assert summary.interrupted and seen_stop == [True]
    shown = runner.invoke(app, ["runs", "list", "--json"])
    (row,) = json.loads(shown.stdout)
    assert row["status"] != "finished"


# --------------------------------------------------------- item 5: deep nesting


def test_deeply_nested_xml_is_a_failed_item_beside_a_good_article(
    tmp_path: Path,
) -> None:
    good = tmp_path / "good.xml"
    good.write_text(jats())
    deep = tmp_path / "deep.xml"
    deep.write_text(deep_xml())
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app,
        ["batch", str(deep), str(good), "--out", str(out), "--model", "sim", "--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["done"], summary["failed"]) == (1, 1)
    got = by_source(out)
    assert "abstract" in got["good.xml"]
    assert "nested more than 500 deep" in got["deep.xml"]["error"]


def test_an_unexpected_reader_error_is_a_failed_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good.xml"
    good.write_text(jats())
    odd = tmp_path / "odd.xml"
    odd.write_text(jats("Odd"))
    real_read = batch_service.read_articles

    def read(path: Path, **kwargs: Any) -> Any:
        if path.name == "odd.xml":
            raise ZeroDivisionError("a reader bug")
        return real_read(path, **kwargs)

    monkeypatch.setattr(batch_service, "read_articles", read)
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app,
        ["batch", str(odd), str(good), "--out", str(out), "--model", "sim", "--json"],
    )
    assert result.exit_code == 0, result.output
    got = by_source(out)
    assert "abstract" in got["good.xml"]
    assert "ZeroDivisionError: a reader bug" in got["odd.xml"]["error"]


def test_deeply_nested_json_lines_are_failed_items(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    good = {
        "id": "g1",
        "title": "T",
        "sections": [{"heading": "R", "text": " ".join(PARAGRAPHS)}],
    }
    data.write_text(json.dumps(good) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["batch", str(data), "--out", str(out), "--model", "sim", "--json"]
    )
    assert result.exit_code == 0, result.output
    got = {line["source"].rsplit(":", 1)[-1]: line for line in lines(out)}
    assert "abstract" in got["1"] and "nested too deeply" in got["2"]["error"]
