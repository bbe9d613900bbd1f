"""`eval make-questions`: sampling, gates with one regeneration, output layout, resume."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.outputs import ChatResult
from typer.testing import CliRunner

from fakes import ScriptedChatModel, scripted_llm
from qa_helpers import add_fixture_corpus
from veriscribe.cli.app import app
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.eval.questions import make_questions, parse_styles
from veriscribe.eval.reports import QuestionSetReport
from veriscribe.eval.retrieval import eval_retrieval
from veriscribe.graphs.questions import build_questions_graph
from veriscribe.nodes.questions import Candidate, deal_slots
from veriscribe.service.common import open_store
from veriscribe.settings import Settings

STYLES = ["lookup", "scenario", "sdm"]


def candidates(sizes: dict[str, int]) -> list[Candidate]:
    return [
        Candidate(doc, doc.upper(), f"s{i}")
        for doc, size in sizes.items()
        for i in range(size)
    ]


def test_sampling_is_stratified_over_documents_and_deals_styles() -> None:
    pool = candidates({"a": 6, "b": 2, "c": 1})
    slots = deal_slots("x", pool, 6, STYLES, seed=3)
    # Round-robin: a, b, c, then a, b, then a.
    assert Counter(s["doc_id"] for s in slots) == {"a": 3, "b": 2, "c": 1}
    assert Counter(s["style"] for s in slots) == {"lookup": 2, "scenario": 2, "sdm": 2}
    assert [s["slot"] for s in slots] == list(range(6))
    assert len({(s["doc_id"], s["section_id"]) for s in slots}) == 6
    assert deal_slots("x", pool, 6, STYLES, seed=3) == slots
    assert any(
        deal_slots("x", pool, 6, STYLES, seed=seed) != slots for seed in range(4, 10)
    )


def test_sections_are_reused_in_new_styles_only() -> None:
    pool = candidates({"a": 2})
    slots = deal_slots("x", pool, 5, STYLES, seed=0)
    assert len(slots) == 5
    assert len({(s["section_id"], s["style"]) for s in slots}) == 5
    assert len(deal_slots("x", pool, 9, STYLES, seed=0)) == 6  # 2 sections x 3 styles
    assert deal_slots("x", [], 3, STYLES, seed=0) == []


def test_styles_are_parsed_strictly() -> None:
    assert parse_styles("sdm, lookup,sdm") == ["sdm", "lookup"]
    with pytest.raises(InputError, match="subset of lookup, scenario, sdm"):
        parse_styles("lookup,quiz")


GOOD = {
    "Diagnosis": "How many separate readings confirm high blood pressure in an adult?",
    "Lifestyle": "How much salt per day should an adult with raised pressure aim for?",
}


class Writer:
    """Plays the question prompts: per section heading, a good or a gate-failing reply."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str, _: dict[str, Any]) -> str:
        self.prompts.append(prompt)
        heading = prompt.split("Section heading: ", 1)[1].split("\n", 1)[0]
        if heading == "Lifestyle" and "was rejected" not in prompt:
            return (
                "Question: What is recommended for lifestyle?"  # restates the heading
            )
        if heading == "Drug treatment":
            # Copies the section at length, both times.
            return (
                "Are thiazide diuretics, calcium channel blockers, ACE inhibitors and "
                "angiotensin receptor blockers first-line agents?"
            )
        if heading == "Patient handout":
            return "What does this section say about certified claims?"
        return GOOD[heading]


class DiesOnDrugTreatment(ScriptedChatModel):
    """Fails the drug-treatment slot once the other slots have their final replies."""

    async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
        if any("Section heading: Drug treatment" in str(m.content) for m in messages):
            for _ in range(1000):
                if len(self.calls) >= 5:  # diagnosis 1, lifestyle 2, handout 2
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)  # let their branches finish and be saved
            raise RuntimeError("the process died")
        return await super()._agenerate(messages, *args, **kwargs)


async def generate(
    out: Path, writer: Writer | ScriptedChatModel, **options: Any
) -> QuestionSetReport:
    return await make_questions(
        Settings(),
        "htn",
        4,
        out,
        styles=["lookup"],
        min_words=10,
        llm=scripted_llm(writer),
        **options,
    )


@pytest.fixture
async def corpus() -> None:
    async with open_store(Settings()) as store:
        await add_fixture_corpus(store)


async def test_gates_regenerate_once_then_drop_with_reasons(
    corpus: None, tmp_path: Path
) -> None:
    out = tmp_path / "questions.jsonl"
    writer = Writer()
    summary = await generate(out, writer)
    # Diagnosis: 1 call; Lifestyle: 2 (title copy, then good); the other two: 2 each.
    assert len(writer.prompts) == 7
    assert summary.kept == 2 and summary.dropped == 2
    assert summary.dropped_by_reason == {"refers_to_source": 1, "verbatim_copy": 1}
    assert summary.regenerated == 1
    assert summary.regenerated_by_reason == {
        "refers_to_source": 1,
        "title_copy": 1,
        "verbatim_copy": 1,
    }
    retry = next(p for p in writer.prompts if "was rejected" in p and "Lifestyle" in p)
    assert (
        '"What is recommended for lifestyle?"' in retry
        and "restated the section heading" in retry
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["section_id"] for line in lines] == ["diagnosis", "lifestyle"] or [
        line["section_id"] for line in lines
    ] == ["lifestyle", "diagnosis"]
    for line in lines:
        assert line["doc_id"] == "hypertension"
        assert line["passage_id"] == line["section_id"]
        assert line["question"] == GOOD[line["section_title"]]
        assert line["style"] == "lookup"
        assert line["id"].startswith("htn-q")
        assert set(line["gates"].values()) == {"pass"}
        assert line["prompt_id"].startswith("questions/lookup@")
    lifestyle = next(line for line in lines if line["section_id"] == "lifestyle")
    assert lifestyle["attempts"] == 2 and lifestyle["regenerated_because"] == [
        "title_copy"
    ]

    # The same command again: the finished thread is reused, no call, same file.
    before = out.read_text()
    again = Writer()
    summary = await generate(out, again)
    assert summary.reused and again.prompts == [] and out.read_text() == before

    # The generated set is what `eval retrieval` reads (gold = document + section).
    report = await eval_retrieval(
        Settings(), "htn", out, retrievers=["bm25"], ks=[1, 3]
    )
    assert report.questions == 2
    assert report.retrievers["bm25"].hit_rates["hit_rate_at_3"] == 1.0


async def test_a_crash_resumes_with_only_the_unfinished_slot(
    corpus: None, tmp_path: Path
) -> None:
    out = tmp_path / "questions.jsonl"
    crashing = DiesOnDrugTreatment(responder=Writer())
    with pytest.raises(VeriscribeError, match="the process died"):
        await generate(out, crashing)
    assert not out.exists()
    resumed = Writer()
    summary = await generate(out, resumed)
    assert summary.resumed
    # Only the drug-treatment slot runs again (both of its attempts).
    headings = {
        p.split("Section heading: ", 1)[1].split("\n", 1)[0] for p in resumed.prompts
    }
    assert headings == {"Drug treatment"} and len(resumed.prompts) == 2
    assert summary.kept == 2 and summary.dropped == 2


def test_cli_progress_and_summary(tmp_path: Path) -> None:
    runner = CliRunner()
    guideline = (
        Path(__file__).parents[1] / "fixtures" / "guidelines" / "hypertension.md"
    )
    added = runner.invoke(
        app, ["corpus", "add", "htn", str(guideline), "--model", "sim"]
    )
    assert added.exit_code == 0, added.output
    out = tmp_path / "q.jsonl"
    args = ["eval", "make-questions", "--corpus", "htn", "--n", "3", "--out", str(out)]
    result = runner.invoke(app, [*args, "--min-words", "10", "--model", "sim"])
    assert result.exit_code == 0, result.output
    assert f"written to {out}" in result.output and "eligible sections" in result.output
    bad = runner.invoke(app, [*args, "--styles", "quiz"])
    assert bad.exit_code == 1 and "subset of lookup" in bad.output
    missing = runner.invoke(
        app,
        ["eval", "make-questions", "--corpus", "nope", "--n", "1", "--out", str(out)],
    )
    assert missing.exit_code == 1 and "no corpus named 'nope'" in missing.output


def test_drawn_graph_matches_snapshot() -> None:
    drawn = build_questions_graph().compile().get_graph().draw_mermaid()
    # To accept a deliberate change: write `drawn` to the snapshot file and review it.
    snapshot = Path(__file__).parents[1] / "graphs" / "snapshots" / "questions.mmd"
    assert drawn == snapshot.read_text()
