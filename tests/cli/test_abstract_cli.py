import json
from pathlib import Path

from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()

SPEC_FIELDS = {
    "id",
    "source",
    "abstract",
    "reference",
    "facets",
    "fallbacks",
    "model",
    "prompt",
    "split",
    "usage",
    "seconds",
}


def test_abstract_json_on_a_real_article(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    out = tmp_path / "result.json"
    result = runner.invoke(
        app, ["abstract", str(path), "--model", "sim", "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert SPEC_FIELDS <= set(data)
    assert data["abstract"] and data["reference"]
    assert {"calls", "prompt_tokens", "output_tokens"} <= set(data["usage"])
    assert {"name", "paragraphs", "summary"} <= set(data["facets"][0])
    assigned = sorted(i for f in data["facets"] for i in f["paragraphs"])
    assert assigned == list(range(data["paragraph_count"]))
    assert json.loads(out.read_text()) == data


def test_malformed_xml_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.xml"
    bad.write_text("<article><body><sec><p>Unclosed paragraph</sec></body>")
    result = runner.invoke(app, ["abstract", str(bad), "--model", "sim"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "broken.xml" in lines[0]


def test_empty_document_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("\n\n")
    result = runner.invoke(app, ["abstract", str(empty), "--model", "sim"])
    assert result.exit_code == 1 and "empty.md" in result.stderr


def test_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["abstract", str(tmp_path / "nope.xml"), "--model", "sim"]
    )
    assert result.exit_code == 1 and "nope.xml" in result.stderr


def test_bad_option_value() -> None:
    result = runner.invoke(
        app, ["abstract", "x.xml", "--split", "zz", "--model", "sim"]
    )
    assert result.exit_code == 1 and "--split" in result.stderr


def test_rich_output_shows_abstract_and_facets(shared_data: Path) -> None:
    path = shared_data / "articles" / "no_abstract" / "plos__journal.pmed.0030205.xml"
    result = runner.invoke(app, ["abstract", str(path), "--model", "sim"])
    assert result.exit_code == 0, result.output
    assert "Abstract: Mischievous Odds Ratios" in result.stdout
    assert "facet" in result.stdout and "paragraphs" in result.stdout


def test_words_sets_the_length_the_abstract_is_held_to(
    shared_data: Path,
) -> None:
    path = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    result = runner.invoke(
        app, ["abstract", str(path), "--model", "sim", "--json", "--words", "120"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["words_asked"] == 120
    checks = data["checks"]
    assert checks["words"] == len(data["abstract"].split()) <= 144
    assert checks["length"] in ("ok", "trimmed", "padded")


def test_words_too_small_is_refused_and_batch_takes_it_too() -> None:
    result = runner.invoke(
        app, ["abstract", "x.xml", "--words", "10", "--model", "sim"]
    )
    assert result.exit_code == 1 and "--words" in result.stderr
    assert "--words" in runner.invoke(app, ["batch", "--help"]).stdout


def test_counts_out_of_bounds_are_one_line_naming_the_flag(tmp_path: Path) -> None:
    article = tmp_path / "a.md"
    article.write_text("# Title\n\nOne paragraph of text.\n")
    for flags, line in [
        (["--entities", "-1"], "--entities must be 0 or more"),
        (["--copy-limit", "-2"], "--copy-limit must be 0 or more"),
        (["--words", "-5"], "--words must be 0 or more"),
        (["--words", "12"], "--words must be 0 (not held) or at least 30"),
    ]:
        result = runner.invoke(
            app, ["abstract", str(article), "--model", "sim", *flags]
        )
        assert result.exit_code == 1, result.output
        assert result.stderr.strip().endswith(line), result.stderr
