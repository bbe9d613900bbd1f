"""Judged selection on the real embedded model: the model's yes/no orders the choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.options import QAOptions
from veriscribe.service.corpora import add_corpus
from veriscribe.service.qa import ask
from veriscribe.settings import Settings

pytestmark = pytest.mark.local_model

QUESTION = (
    "Should you prescribe the highest or lowest effective dose when starting therapy?"
)


async def test_judged_selection_shows_only_certified_sentences(
    local_gguf: Path, shared_data: Path, tmp_path: Path
) -> None:
    lines = (shared_data / "guidelines/cpgqa/passages.jsonl").read_text().splitlines()
    passages = tmp_path / "passages.jsonl"
    passages.write_text("\n".join(lines[:10]) + "\n")
    assert json.loads(lines[2])["passage_id"] == "p002"
    settings = Settings(local_model=local_gguf, db=tmp_path / "qa.sqlite")
    # BM25 reads no summaries: the simulated model writes them at no cost.
    await add_corpus(settings.with_overrides(model="sim"), "cpgqa", [passages])

    options = QAOptions(retriever="bm25", k=2, select="judged", judged_units=3)
    result = await ask(settings, "cpgqa", QUESTION, options=options)

    # One scored yes/no per judged unit, nothing else asked of the model.
    assert 1 <= result.usage.calls <= 3
    assert any(p.startswith("qa/select_yesno@") for p in result.prompt_ids)
    if result.not_found:
        assert any("judged odds" in note for note in result.notes)
    else:
        assert 1 <= len(result.claims) <= 3 + 6
        # The model only chose; every sentence shown is certified by the checks.
        assert all(claim.status == "certified" for claim in result.claims)
        assert all(claim.citations[0].tier == "exact" for claim in result.claims)
