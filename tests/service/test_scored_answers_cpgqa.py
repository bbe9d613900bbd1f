"""The default answers on real guideline questions: they hold the gold answer, certified.

The default selection asks no model, so the real pipeline (the sentence encoder
included) runs here on the cpgQA
development passages and questions (the corpus is added with the simulated model, whose
summaries BM25 retrieval never reads). A regression in scoring, the lead-in and
continuation rules or the certification pre-check shows as a drop in these figures.
"""

from __future__ import annotations

from pathlib import Path

from veriscribe.eval.qa import eval_qa
from veriscribe.options import QAOptions
from veriscribe.service import qa
from veriscribe.service.corpora import add_corpus
from veriscribe.settings import Settings


async def test_scored_answers_hold_the_gold_answer_and_are_all_certified(
    shared_data: Path, tmp_path: Path
) -> None:
    cpgqa = shared_data / "guidelines" / "cpgqa"
    settings = Settings(db=tmp_path / "v.db", model="sim")
    await add_corpus(settings, "cpgqa", [cpgqa / "passages.jsonl"])
    out = tmp_path / "answers.jsonl"
    summary = await qa.ask_questions(
        settings,
        "cpgqa",
        cpgqa / "questions.jsonl",
        out,
        options=QAOptions(),
        limit=100,
    )
    assert summary.answered == 100 and summary.usage.calls == 0
    report = eval_qa(out)
    assert report.rates.ccr == 1.0
    # Measured with the defaults (fused with meaning, k = 3, semantic selection, three
    # sentences): recall 0.855, whole gold answer in 81%, 4% "not found".
    assert report.gold is not None and report.gold.gold_recall >= 0.82
    assert report.gold.gold_hit is not None and report.gold.gold_hit >= 0.77
    assert report.not_found_rate is not None and report.not_found_rate <= 0.08
