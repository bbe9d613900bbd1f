"""The abstract graph end to end on the real embedded model and a real article."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.documents.articles import Article, read_articles

pytestmark = pytest.mark.local_model


def test_abstract_on_real_article_with_embedded_model(
    shared_data: Path, local_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "e2e.sqlite"
    monkeypatch.setenv("VERISCRIBE_DB", str(db))
    path = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    result = CliRunner().invoke(app, ["abstract", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["abstract"].split()) >= 20
    assert data["model"].startswith("local:")
    # auto: the bundled model labels poorly, so the shipped classifier labels
    assert data["label_source"] == "classifier"
    summarised = [f for f in data["facets"] if f["status"] == "ok"]
    assert len(summarised) >= 2
    assert data["usage"]["calls"] >= len(summarised) + 1  # facets + refine
    assert data["usage"]["output_tokens"] > 100
    # Every sentence shown was checked against the article sentences it is drawn
    # from, and every quoted piece of evidence is the article's own text.
    assert data["copy_limit"] == 0
    (article,) = [a for a in read_articles(path) if isinstance(a, Article)]
    body = " ".join(" ".join(p.text for p in article.paragraphs).split())
    shown = [s for s in data["sentences"] if s["status"] != "dropped"]
    assert shown
    assert {s["status"] for s in shown} <= {"certified", "repaired"}
    counts = data["sentence_counts"]
    assert counts["certified"] + counts["repaired"] == len(shown)
    for sentence in shown:
        assert " ".join(sentence["text"].split()) in " ".join(data["abstract"].split())
        assert sentence["evidence"], sentence
        for evidence in sentence["evidence"]:
            assert " ".join(evidence["quote"].split()) in body, evidence
    # the model calls were logged and the run was checkpointed
    conn = sqlite3.connect(db)
    assert (
        conn.execute("SELECT COUNT(*) FROM llm_calls WHERE outcome='ok'").fetchone()[0]
        >= 3
    )
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] > 0
    # running it again reuses the finished thread: no model call
    again = CliRunner().invoke(app, ["abstract", str(path), "--json"])
    assert json.loads(again.stdout)["abstract"] == data["abstract"]
    assert json.loads(again.stdout)["resumed_from_checkpoint"] is True


def test_claim_support_with_the_embedded_judge(
    shared_data: Path, local_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The support check on real text: Lead-2 sentences judged, the judge checked.

    The hybrid judge on the embedded model: the checks, then the model's yes/no
    probability for what they pass (a Lead sentence restates the article, so it
    reaches the model).
    """
    monkeypatch.setenv("VERISCRIBE_DB", str(tmp_path / "e2e.sqlite"))
    path = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    lead = tmp_path / "lead.jsonl"
    made = CliRunner().invoke(
        app,
        ["eval", "baseline", "lead", str(path), "--sentences", "2", "--out", str(lead)],
    )
    assert made.exit_code == 0, made.output
    args = ["eval", "abstracts", str(lead), "--support", "--support-samples", "1"]
    args += ["--support-judge", "hybrid"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    verdicts = report["per_article"][0]["support_verdicts"]
    assert sum(verdicts.values()) == 2  # both Lead sentences judged
    assert 0.0 <= report["metrics"]["claim_support"]["mean"] <= 1.0
    check = report["support"]["calibration"]
    assert check["sentences"] == 1 and report["support"]["model"].startswith("local:")
    assert report["support"]["judge"] == f"hybrid ({report['support']['model']})"
    assert report["support"]["judge_accuracy"] is not None  # measured for this model
    # The report states whether the judge passed its own check.
    flagged = any("not meaningful" in note for note in report["notes"])
    assert flagged == (check["share"] < 0.8)
