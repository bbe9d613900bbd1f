"""The abstract graph end to end on the real embedded model and a real article."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app

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
