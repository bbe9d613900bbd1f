from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app

runner = CliRunner()

ARTICLE_MD = """# Tiny

## Abstract

The cat sat. A bird sang.

## Body

The cat sat on the mat. The dog ran to the park.
"""


@pytest.fixture
def articles(tmp_path: Path) -> list[Path]:
    paths = []
    for i in range(3):
        path = tmp_path / f"tiny{i}.md"
        path.write_text(ARTICLE_MD)
        paths.append(path)
    return paths


def _results(path: Path, articles: list[Path], abstract: str) -> Path:
    lines = [
        {"id": p.stem, "source": str(p), "abstract": abstract, "model": "test:a"}
        for p in articles
    ]
    lines.append({"id": "lost", "source": str(articles[0]), "error": "timed out"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_json_report_uses_the_papers_metric_names(
    tmp_path: Path, articles: list[Path]
) -> None:
    results = _results(
        tmp_path / "r.jsonl", articles, "The dog ran to the park. The cat sat down."
    )
    out = runner.invoke(
        app, ["eval", "abstracts", str(results), "--reference", str(tmp_path), "--json"]
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    for name in (
        "bigram_novelty",
        "trigram_novelty",
        "coverage",
        "density",
        "compression",
        "rouge_l",
        "keyphrase_recall",
    ):
        assert report["metrics"][name]["n"] == 3
    assert report["metrics"]["density"]["mean"] == pytest.approx(59 / 12)
    assert report["metrics"]["density"]["human"] == pytest.approx(11 / 8)
    assert report["metrics"]["alignscore"]["mean"] is None
    assert report["scored"] == 3 and report["failed"] == 1


def test_table_against_and_plot(tmp_path: Path, articles: list[Path]) -> None:
    a = _results(
        tmp_path / "a.jsonl", articles, "The dog ran to the park. The cat sat down."
    )
    b = _results(tmp_path / "b.jsonl", articles, "The cat sat on the mat.")
    png = tmp_path / "plot.png"
    out = runner.invoke(
        app,
        [
            "eval",
            "abstracts",
            str(a),
            "--reference",
            str(tmp_path),
            "--against",
            str(b),
            "--resamples",
            "1000",
            "--plot",
            str(png),
        ],
        env={"COLUMNS": "160"},
    )
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "3 of 4 scored · 1 failed" in text
    assert "trigram_novelty" in text and "absent" in text
    assert "|x - human|" in text and "95% CI" in text
    # Density: A deviates 3.54 from the human abstract, B 5.63, on all three articles.
    density = next(
        line for line in text.splitlines() if "density" in line and "|x" in line
    )
    assert density.split()[5:8] == ["3.54", "5.62", "-2.08"]
    assert "timed out" in text
    assert png.read_bytes()[:4] == b"\x89PNG"
    # What a reader notices first: 10 words on each article, against 250 asked.
    words = next(line for line in text.splitlines() if line.split()[:1] == ["words"])
    assert "10.0 (max 10)" in words and "the asked length" in words
    within = next(line for line in text.splitlines() if "within_length" in line)
    assert within.split()[1:3] == ["3", "0.000"] and within.split()[-1] == "higher"
    assert "guidance_echoes" in text and "number_precision" in text


def test_lead_baseline_through_the_harness(shared_data: Path, tmp_path: Path) -> None:
    jats = shared_data / "articles" / "jats"
    picked = sorted(jats.glob("elife__*.xml"))[:3]
    out_file = tmp_path / "lead.jsonl"
    made = runner.invoke(
        app,
        [
            "eval",
            "baseline",
            "lead",
            *map(str, picked),
            "--out",
            str(out_file),
            "--json",
        ],
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["written"] == 3
    scored = runner.invoke(
        app,
        [
            "eval",
            "abstracts",
            str(out_file),
            "--reference",
            str(shared_data / "articles" / "reference_abstracts.jsonl"),
            "--json",
        ],
    )
    assert scored.exit_code == 0, scored.output
    report = json.loads(scored.stdout)
    assert report["scored"] == 3 and report["reference_mode"] == "list"
    # Lead is copied verbatim from the body.
    assert report["metrics"]["bigram_novelty"]["mean"] == 0.0
    assert report["metrics"]["coverage"]["mean"] == 1.0
    assert report["metrics"]["trigram_novelty"]["human"] > 0.3


def test_naive_baseline_on_sim_records_truncation(
    shared_data: Path, tmp_path: Path
) -> None:
    article = shared_data / "articles" / "jats" / "elife__elife-02833-v2.xml"
    out_file = tmp_path / "naive.jsonl"
    made = runner.invoke(
        app,
        [
            "eval",
            "baseline",
            "naive",
            str(article),
            "--out",
            str(out_file),
            "--model",
            "sim",
            "--json",
        ],
    )
    assert made.exit_code == 0, made.output
    summary = json.loads(made.stdout)
    assert summary["written"] == 1 and summary["truncated"] == 1
    (line,) = [json.loads(x) for x in out_file.read_text().splitlines()]
    assert line["truncation"]["truncated"] is True
    assert line["truncation"]["kept_words"] < line["truncation"]["article_words"]
    assert line["fallbacks"][0].startswith("truncated")
    assert line["model"] == "sim:sim" and line["usage"]["calls"] == 1


def test_errors_are_one_line(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["eval", "abstracts", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 1 and "cannot read" in missing.stderr
    results = tmp_path / "r.jsonl"
    results.write_text('{"id": "x", "abstract": "A."}\n')
    bad = runner.invoke(
        app, ["eval", "abstracts", str(results), "--scorer", "alignscore"]
    )
    assert bad.exit_code == 1 and "name=module:factory" in bad.stderr
