"""The cited-QA job on the real embedded model: ingest, ask, then verify the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.eval.questions import make_questions
from veriscribe.eval.retrieval import eval_retrieval
from veriscribe.options import QAOptions
from veriscribe.service.corpora import add_corpus
from veriscribe.service.qa import ask, verify_answer
from veriscribe.settings import Settings

pytestmark = pytest.mark.local_model

STATUSES = {"certified", "recovered", "partial", "unsupported", "uncited", "unjudged"}
TIERS = {"exact", "normalized", "elided", "elided_risky", "fail", "unresolved"}
QUESTION = (
    "Should you prescribe the highest or lowest effective dose when starting therapy?"
)


def subset(shared_data: Path, tmp_path: Path, count: int = 10) -> Path:
    """Write the first cpgQA passages (p002 among them) as a small passages file."""
    lines = (shared_data / "guidelines/cpgqa/passages.jsonl").read_text().splitlines()
    folder = tmp_path / "cpgqa"
    folder.mkdir()
    path = folder / "passages.jsonl"
    path.write_text("\n".join(lines[:count]) + "\n")
    assert json.loads(lines[2])["passage_id"] == "p002"
    return path


async def test_ask_and_verify_on_cpgqa_passages(
    local_gguf: Path, shared_data: Path, tmp_path: Path
) -> None:
    settings = Settings(local_model=local_gguf, db=tmp_path / "qa.sqlite")
    report = await add_corpus(settings, "cpgqa", [subset(shared_data, tmp_path)])
    assert report.sections == 10
    assert report.summaries.get("model", 0) >= 1  # the model wrote summaries
    assert sum(report.summaries.values()) == 10

    # The model chooses the sentences here (scored selection asks it nothing).
    options = QAOptions(retriever="bm25", k=2, select="model")
    result = await ask(settings, "cpgqa", QUESTION, options=options)
    assert "cpgqa:p002" in result.read_set
    assert result.answer.strip()
    funnel = result.funnel
    assert (
        funnel["sentences"]
        >= funnel["claims"]
        >= funnel["covered"]
        >= funnel["verbatim"]
        >= funnel["lenient"]
        >= funnel["strict"]
    )
    if not result.not_found:
        # Which sentences are claims is the (small) model's call; the split is not.
        assert result.sentences >= 1, result.answer
    for claim in result.claims:
        assert claim.status in STATUSES
        for citation in claim.citations:
            assert citation.tier in TIERS
    assert result.usage.calls >= 1

    # Checking the same answer again gives what ask reported, from cached calls.
    checked = await verify_answer(
        result.answer,
        corpus="cpgqa",
        question=QUESTION,
        read_set=result.read_set,
        settings=settings,
    )
    assert checked.claims == result.claims
    assert checked.funnel == result.funnel
    # Nothing is computed again: every call the check makes was made by ask (with the
    # guideline's own sentences as the answer it may need none, the lexical lane
    # certifies them).
    assert checked.usage.calls == 0

    # A small question set from the same corpus, gated, then scored for retrieval.
    out = tmp_path / "questions.jsonl"
    summary = await make_questions(settings, "cpgqa", 3, out, min_words=20)
    assert summary.slots == 3 and summary.kept + summary.dropped == 3
    assert summary.usage.calls >= 3
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == summary.kept
    for line in lines:
        assert line["question"].endswith("?") and line["doc_id"] == "cpgqa"
        assert line["passage_id"] == line["section_id"]
        assert line["style"] in {"lookup", "scenario", "sdm"}
    if lines:
        scored = await eval_retrieval(settings, "cpgqa", out, retrievers=["bm25"])
        assert scored.questions == len(lines)
