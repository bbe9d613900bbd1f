"""Bad inputs get one clear error or a recorded failed item, and lose nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.documents.articles import (
    ARTICLE_SUFFIXES,
    Article,
    ReadFailure,
    expand_inputs,
    read_articles,
)
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.documents.safexml import parse_xml
from veriscribe.errors import InputError
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import run_batch
from veriscribe.service.corpora import _check_name
from veriscribe.settings import DEFAULT_MAX_INPUT_BYTES, Settings

runner = CliRunner()

# A quoted ">" ends the DOCTYPE for a naive pattern, which then misses the internal
# subset and lets the parser expand the entity.
TRICKY_DOCTYPE = '<!DOCTYPE x SYSTEM "x>y" [<!ENTITY e "boom">]>'
TRICKY = (
    f'<?xml version="1.0"?>\n{TRICKY_DOCTYPE}\n'
    "<article><front><article-meta><title-group><article-title>T&e;</article-title>"
    "</title-group></article-meta></front><body><sec><title>Intro</title>"
    "<p>Body &e; text that is long enough to be a paragraph.</p></sec></body></article>"
)
PARAMETER_ENTITY = (
    '<?xml version="1.0"?>\n<!DOCTYPE article [<!ENTITY % p "x"> %p;]>\n'
    "<article><body><p>text</p></body></article>"
)
PLAIN_JATS = (
    '<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) '
    'Journal Publishing DTD v1.2//EN" "JATS-journalpublishing1.dtd">\n'
    "<article><body><sec><title>Methods</title><p>We measured&nbsp;it.</p></sec>"
    "</body></article>"
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, "utf-8")
    return path


# ------------------------------------------------------------------ entities


@pytest.mark.parametrize("document", [TRICKY, PARAMETER_ENTITY])
def test_both_readers_refuse_declared_entities(tmp_path: Path, document: str) -> None:
    article = write(tmp_path, "a.xml", document)
    guideline = write(tmp_path, "g/g.xml", document)
    with pytest.raises(InputError, match="declares entities") as first:
        list(read_articles(article))
    with pytest.raises(InputError, match="declares entities") as second:
        read_guideline_path(guideline)
    for error in (first.value, second.value):
        assert "boom" not in error.user_message


def test_the_tricky_doctype_fools_a_pattern_but_not_the_parser() -> None:
    naive = re.compile(r"<!DOCTYPE[^>\[]*\[[^\]]*<!ENTITY", re.IGNORECASE)
    assert naive.search(TRICKY) is None
    with pytest.raises(InputError, match="declares entities"):
        parse_xml(TRICKY, "tricky.xml")


def test_an_external_dtd_is_not_refused_nor_read(tmp_path: Path) -> None:
    [article] = list(read_articles(write(tmp_path, "a.xml", PLAIN_JATS)))
    assert isinstance(article, Article)
    # The undeclared &nbsp; is resolved from the HTML table (and spaces collapsed).
    assert article.paragraphs[0].text == "We measured it."
    [doc] = read_guideline_path(write(tmp_path, "g.xml", PLAIN_JATS))
    assert any("We measured" in s.text for s in doc.sections)


# ------------------------------------------------------------------ sizes


def test_the_default_limit_fits_every_development_file(shared_data: Path) -> None:
    largest = max(
        p.stat().st_size
        for folder in ("articles", "guidelines")
        for p in (shared_data / folder).rglob("*")
        if p.is_file()
    )
    assert largest * 5 < DEFAULT_MAX_INPUT_BYTES


def test_an_oversized_article_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, "big.txt", "word " * 3000)
    with pytest.raises(InputError) as info:
        list(read_articles(path, max_bytes=10_000))
    message = info.value.user_message
    assert message == (
        f"{path}: 15.0 kB, over the 10.0 kB limit for one input (raise it with "
        "`veriscribe --max-bytes N ...` or VERISCRIBE_MAX_INPUT_BYTES)"
    )
    assert list(read_articles(path, max_bytes=20_000))  # under the limit: read


def test_an_oversized_dataset_record_is_a_failed_item(tmp_path: Path) -> None:
    small = {"article_id": "a", "sections": [{"heading": "Methods", "text": "x " * 30}]}
    big = {"article_id": "b", "sections": [{"heading": "Methods", "text": "y " * 900}]}
    path = write(tmp_path, "d.jsonl", json.dumps(small) + "\n" + json.dumps(big))
    items = list(read_articles(path, max_bytes=1000))
    assert isinstance(items[0], Article) and items[0].id == "a"
    failure = items[1]
    assert isinstance(failure, ReadFailure) and failure.source == f"{path}:2"
    assert failure.reason.startswith("record of 1.9 kB, over the 1.0 kB limit")


def test_an_oversized_guideline_is_refused_or_skipped(tmp_path: Path) -> None:
    big = write(tmp_path, "dir/big.md", "# Big\n\n" + "text " * 400)
    write(tmp_path, "dir/small.md", "# Small\n\nShort guideline text.\n")
    with pytest.raises(InputError, match="2.0 kB, over the 1.0 kB limit"):
        read_guideline_path(big, max_bytes=1000)
    skipped: list[tuple[Path, str]] = []
    docs = read_guideline_path(
        tmp_path / "dir",
        on_error=lambda p, e: skipped.append((p, e.user_message)),
        max_bytes=1000,
    )
    assert [d.doc_id for d in docs] == ["small"]
    assert skipped[0][0] == big and "--max-bytes" in skipped[0][1]


def test_max_bytes_is_a_global_option_and_a_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    article = write(tmp_path, "a.txt", "# T\n\n" + "A sentence of the body. " * 100)
    result = runner.invoke(app, ["--max-bytes", "1000", "abstract", str(article)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: {article}: 2.4 kB, over the 1.0 kB limit for one input (raise it "
        "with `veriscribe --max-bytes N ...` or VERISCRIBE_MAX_INPUT_BYTES)"
    )
    monkeypatch.setenv("VERISCRIBE_MAX_INPUT_BYTES", "1000")
    assert Settings().max_input_bytes == 1000
    result = runner.invoke(app, ["corpus", "add", "c", str(article), "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "2.4 kB, over the 1.0 kB limit" in result.stderr


# ------------------------------------------------------------------ batches


async def test_batch_records_oversized_files_and_empty_directories(
    shared_data: Path,
    tmp_path: Path,
    default_db: str,
) -> None:
    good = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    big = write(tmp_path, "big.txt", "# Big\n\n" + "A long paragraph. " * 4000)
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "unknown").mkdir()
    write(tmp_path, "unknown/notes.docx", b"PK")
    out = tmp_path / "out.jsonl"
    summary = await run_batch(
        Settings(db=default_db, max_input_bytes=good.stat().st_size + 1, model="sim"),
        [str(good), str(big), str(empty), str(tmp_path / "unknown")],
        out,
        AbstractOptions(),
        handle_signals=False,
    )
    results = {
        r["source"]: r for r in map(json.loads, out.read_text("utf-8").splitlines())
    }
    assert summary.done == 1 and summary.failed == 3
    assert results[str(good)]["abstract"]
    assert "over the" in results[str(big)]["error"]
    assert "--max-bytes" in results[str(big)]["error"]
    for directory in (empty, tmp_path / "unknown"):
        error = results[str(directory)]["error"]
        assert "the directory holds no article file" in error
        assert all(suffix in error for suffix in ARTICLE_SUFFIXES)


def test_expand_inputs_names_an_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the directory holds no article file"):
        expand_inputs([str(tmp_path)])


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    "name", ["cpgqa", "ngc.2024", "VA_DoD-opioids", "a", "9lives", "x" * 64]
)
def test_names_that_follow_the_stated_rule_are_accepted(name: str) -> None:
    _check_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "-rf",
        ".hidden",
        "_x",
        "two words",
        "tab\tname",
        "évidence",
        "a/b",
        "a:b",
        "x" * 65,
        "evil\x1b[2J",
        "name\n",
    ],
)
def test_names_that_break_the_stated_rule_are_refused(name: str) -> None:
    with pytest.raises(InputError) as info:
        _check_name(name)
    assert "1 to 64 ASCII letters, digits, '-', '_' or '.'" in info.value.user_message
    assert "starting with a letter or digit" in info.value.user_message
