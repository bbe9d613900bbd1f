"""Every edge of the abstract graph, driven by scripted models, with real checkpoints."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from langchain_core.messages import HumanMessage

from fakes import ScriptedChatModel, scripted_llm
from stores import checkpoint_bytes
from veriscribe.documents.articles import Article, Paragraph
from veriscribe.errors import VeriscribeError
from veriscribe.events import (
    AbstractRefined,
    AbstractStageEvent,
    FacetsDivided,
    FacetsJoined,
    FacetsRegrouped,
    FacetSummarised,
    LeadTaken,
)
from veriscribe.graphs import abstract_stages
from veriscribe.graphs.abstract import build_abstract_graph
from veriscribe.llm.client import LLM
from veriscribe.options import AbstractOptions
from veriscribe.results import AbstractResult
from veriscribe.service.abstracts import abstract_runner, run_abstract
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.text.replies import abstract_tokens
from veriscribe.text.sentences import sentences_of

SNAPSHOT = Path(__file__).parent / "snapshots" / "abstract.mmd"

PARAGRAPHS = [
    (
        "Introduction",
        "Sepsis is a leading cause of death in intensive care units worldwide.",
    ),
    (
        "Introduction",
        "We aimed to test whether early antibiotics lower mortality in sepsis.",
    ),
    (
        "Methods",
        "We randomised 412 adults with sepsis to early or delayed antibiotics.",
    ),
    (
        "Methods",
        "The primary outcome was all-cause mortality at 28 days after enrolment.",
    ),
    (
        "Results",
        "Mortality at 28 days was 18% with early and 25% with delayed therapy.",
    ),
    (
        "Discussion",
        "Early antibiotics should be given to adults with suspected sepsis.",
    ),
]
# What the scripted labeller answers for each paragraph's first sentence.
ROLES = ["background", "objective", "methods", "methods", "results", "conclusions"]


def article(paragraphs: list[tuple[str, str]] = PARAGRAPHS) -> Article:
    return Article(
        id="test-article",
        source="memory",
        title="Early antibiotics in sepsis",
        paragraphs=[Paragraph(s, t, (s,)) for s, t in paragraphs],
        reference=None,
    )


def kind(prompt: str) -> str:
    if "Label the target sentence" in prompt:
        return "label"
    if "Draft abstract:" in prompt:
        return "refine"
    if "Partial summaries:" in prompt:
        return "merge"
    return "facet"


def facet_of(prompt: str) -> str:
    match = re.search(
        r"Summarise this (\w[\w ]*?) section|Part of the abstract: (\w[\w ]*)", prompt
    )
    return (match.group(1) or match.group(2)) if match else "?"


Handler = Callable[[str], str]


def responder(
    *,
    roles: list[str] = ROLES,
    facet: Handler | None = None,
    refine: Handler | None = None,
) -> Callable[[str, dict[str, Any]], str]:
    def answer(prompt: str, kwargs: dict[str, Any]) -> str:
        what = kind(prompt)
        if what == "label":
            count = int(re.search(r"each of the (\d+) items", prompt).group(1))  # type: ignore[union-attr]
            items = re.findall(r"Target: (.*)", prompt)
            labels = [
                roles[[t for _, t in PARAGRAPHS].index(i)]
                if i in [t for _, t in PARAGRAPHS]
                else "none"
                for i in items
            ]
            assert len(labels) == count
            return json.dumps({"labels": labels})
        if what == "refine":
            if refine is not None:
                return refine(prompt)
            return json.dumps({"abstract": "Refined abstract.", "reasoning": "r"})
        if what == "merge":
            return json.dumps({"summary": "Merged summary.", "reasoning": "r"})
        if facet is not None:
            return facet(prompt)
        return json.dumps(
            {"summary": f"Summary of {facet_of(prompt)}.", "reasoning": "r"}
        )

    return answer


async def run(
    store: Store,
    llm: LLM,
    options: AbstractOptions | None = None,
    art: Article | None = None,
) -> AbstractResult:
    # The graph's steps are read here before the check against evidence, which
    # replaces a scripted sentence the article does not hold; it has its own tests.
    return await run_abstract(
        store, llm, art or article(), options or AbstractOptions(evidence=False)
    )


@pytest.fixture
async def store(default_db: str) -> Any:
    async with await open_database(default_db) as opened:
        yield opened


def kinds(chat: ScriptedChatModel) -> list[str]:
    return [kind(prompt) for prompt, _ in chat.calls]


async def test_normal_path(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    result = await run(store, scripted_llm(chat))
    assert result.abstract == "Refined abstract."
    assert result.refined and result.fallbacks == []
    by_name = {f.name: f for f in result.facets}
    assert by_name["methods"].paragraphs == [2, 3]
    assert by_name["other"].status == "empty"
    # one labelling call, five facets with text, one refinement
    assert sorted(kinds(chat)) == sorted(["label"] + ["facet"] * 5 + ["refine"])
    assert result.usage.calls == 7
    assert "Summary of methods." in result.draft
    assert result.draft.index("background") < result.draft.index("results")


async def test_some_facets_empty_cost_no_call(store: Store) -> None:
    roles = ["background"] * 3 + ["results"] * 3
    chat = ScriptedChatModel(responder=responder(roles=roles))
    result = await run(store, scripted_llm(chat))
    statuses = {f.name: f.status for f in result.facets}
    assert statuses == {
        "background": "ok",
        "results": "ok",
        "objective": "empty",
        "methods": "empty",
        "conclusions": "empty",
        "other": "empty",
    }
    assert kinds(chat).count("facet") == 2


async def test_all_empty_regroups_then_lead300(store: Store) -> None:
    empty = json.dumps({"summary": "", "reasoning": "nothing"})
    chat = ScriptedChatModel(responder=responder(facet=lambda p: empty))
    result = await run(store, scripted_llm(chat))
    assert result.fallbacks[0] == "facet_failed:background"
    assert "regroup" in result.fallbacks
    leads = [f for f in result.fallbacks if f.startswith("lead300:")]
    assert sorted(leads) == [
        "lead300:intro",
        "lead300:main_idea",
        "lead300:results_conclusions",
    ]
    names = [f.name for f in result.facets]
    assert sorted(names) == ["intro", "main_idea", "results_conclusions"]
    intro = next(f for f in result.facets if f.name == "intro")
    assert intro.status == "lead300"
    assert intro.summary.startswith("Sepsis is a leading cause")
    assert len(intro.summary) <= 300
    assert result.abstract == "Refined abstract."
    # 5 facets, then 3 regrouped facets, each once: an empty summary is not repaired
    assert kinds(chat).count("facet") == 8


async def test_unparseable_json_is_repaired_then_recorded(store: Store) -> None:
    def facet(prompt: str) -> str:
        if facet_of(prompt) == "methods":
            return "I think the methods were fine."
        return json.dumps(
            {"summary": f"Summary of {facet_of(prompt)}.", "reasoning": "r"}
        )

    chat = ScriptedChatModel(responder=responder(facet=facet))
    result = await run(store, scripted_llm(chat))
    methods = next(f for f in result.facets if f.name == "methods")
    assert methods.status == "failed"
    assert "after one repair" in methods.error
    assert "facet_failed:methods" in result.fallbacks
    assert result.refined
    # the methods facet: first try plus one repair
    repair_calls = [p for p, _ in chat.calls if "not usable" in p]
    assert len(repair_calls) == 1


async def test_one_repair_fixes_the_facet(store: Store) -> None:
    seen: set[str] = set()

    def facet(prompt: str) -> str:
        if (
            facet_of(prompt) == "results"
            and "not usable" not in prompt
            and "r" not in seen
        ):
            seen.add("r")
            return "{broken"
        return json.dumps(
            {"summary": f"Summary of {facet_of(prompt)}.", "reasoning": "r"}
        )

    result = await run(
        store, scripted_llm(ScriptedChatModel(responder=responder(facet=facet)))
    )
    results = next(f for f in result.facets if f.name == "results")
    assert results.status == "ok" and result.fallbacks == []


async def test_a_reply_cut_at_the_token_limit_keeps_its_complete_sentences(
    store: Store,
) -> None:
    """Small models ramble until max_tokens: the summary survives, its cut tail not."""

    def facet(prompt: str) -> str:
        name = facet_of(prompt)
        if name == "methods":  # cut inside the (discarded) reasoning
            return '{"summary": "Patients got antibiotics early.", "reasoning": "Becau'
        if name == "results":  # cut inside the summary itself
            return '{"summary": "Mortality fell by a third. Length of stay was sh'
        return json.dumps({"summary": f"Summary of {name}.", "reasoning": "r"})

    chat = ScriptedChatModel(responder=responder(facet=facet))
    result = await run(store, scripted_llm(chat))
    by_name = {f.name: f for f in result.facets}
    assert by_name["methods"].status == "ok"
    assert by_name["methods"].summary == "Patients got antibiotics early."
    assert by_name["results"].summary == "Mortality fell by a third."
    assert result.fallbacks == []
    assert not [p for p, _ in chat.calls if "not usable" in p]  # no repair needed


async def test_refine_failure_keeps_the_draft_and_says_so(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder(refine=lambda p: "not json at all"))
    result = await run(store, scripted_llm(chat))
    assert not result.refined
    # The draft is the abstract, as one paragraph.
    assert result.abstract == " ".join(result.draft.split()) != ""
    assert any(f.startswith("refine_failed") for f in result.fallbacks)


async def test_facet_over_budget_is_chunked_and_merged(store: Store) -> None:
    long_methods = [
        ("Methods", f"Step {i}: " + "the samples were centrifuged and stored " * 12)
        for i in range(8)
    ]
    paragraphs = PARAGRAPHS[:2] + long_methods + PARAGRAPHS[4:]
    roles = ["background", "objective"] + ["methods"] * 8 + ["results", "conclusions"]

    def answer(prompt: str, kwargs: dict[str, Any]) -> str:
        if kind(prompt) == "label":
            count = int(re.search(r"each of the (\d+) items", prompt).group(1))  # type: ignore[union-attr]
            return json.dumps(
                {
                    "labels": roles[:count]
                    if count == len(roles)
                    else ["methods"] * count
                }
            )
        return responder()(prompt, kwargs)

    chat = ScriptedChatModel(responder=answer)
    llm = scripted_llm(chat, context_tokens=1600, max_output_tokens=256)
    result = await run(store, llm, art=article(paragraphs))
    methods = next(f for f in result.facets if f.name == "methods")
    assert methods.chunks > 1
    assert methods.summary == "Merged summary."
    assert kinds(chat).count("merge") >= 1
    # every prompt that was sent fits the budget beside the reserved output
    for prompt, _ in chat.calls:
        assert llm.count_tokens([HumanMessage(prompt)]) + 256 <= 1600
    chunk_prompts = [p for p, _ in chat.calls if kind(p) == "facet" and "Step" in p]
    assert sum(p.count("Step ") for p in chunk_prompts) == 8


async def test_naive_split_uses_the_unnamed_prompt(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    result = await run(
        store,
        scripted_llm(chat),
        AbstractOptions(evidence=False, split="ns", prompt="bc"),
    )
    assert "label" not in kinds(chat)
    assert all(f.name.startswith("part") for f in result.facets)
    assert all(
        "Summarise this part of an article" in p
        for p, _ in chat.calls
        if kind(p) == "facet"
    )


async def test_section_headers_split(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    result = await run(
        store, scripted_llm(chat), AbstractOptions(evidence=False, split="sh")
    )
    by_name = {f.name: f.paragraphs for f in result.facets}
    assert by_name["background"] == [0, 1]
    assert by_name["conclusions"] == [5]
    assert result.label_source == "headers"


async def test_lean_mode_asks_for_summary_only(store: Store) -> None:
    def facet(prompt: str) -> str:
        return json.dumps({"summary": "Lean."})

    chat = ScriptedChatModel(
        responder=responder(facet=facet, refine=lambda p: '{"abstract": "A."}')
    )
    result = await run(
        store, scripted_llm(chat), AbstractOptions(evidence=False, lean=True)
    )
    assert result.abstract == "A."
    schemas = [k["format"] for p, k in chat.calls if kind(p) == "facet"]
    assert all(set(s["properties"]) == {"summary"} for s in schemas)
    assert all('"reasoning"' not in p for p, _ in chat.calls if kind(p) == "facet")


async def test_finished_thread_is_reused_without_calls(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    first = await run(store, scripted_llm(chat))
    again = ScriptedChatModel(responder=responder())
    second = await run(store, scripted_llm(again))
    assert again.calls == [] and second.abstract == first.abstract
    assert second.resumed_from_checkpoint


async def test_a_thread_left_without_its_abstract_is_made_again(store: Store) -> None:
    """A saved state with nothing left to run but no abstract is no answer.

    A process killed while its checkpoint was being written can leave one; the
    article is then made again from a clean thread, not shown with an empty abstract.
    """
    first = await run(store, scripted_llm(ScriptedChatModel(responder=responder())))
    runner = await abstract_runner(store, scripted_llm(ScriptedChatModel()))
    key = (await runner.state(first.thread_id))["doc_key"]
    await runner.saver.adelete_thread(first.thread_id)
    config = runner.config(first.thread_id)
    await runner.graph.aupdate_state(config, {"doc_key": key}, as_node="refine")
    left = await runner.graph.aget_state(config)
    assert not left.next and not left.values.get("abstract")

    again = ScriptedChatModel(responder=responder())
    second = await run(store, scripted_llm(again))
    assert second.abstract == "Refined abstract." and not second.resumed_from_checkpoint
    # Made once, on a clean thread: nothing of the left state is counted twice.
    assert second.usage.calls == len(again.calls) == 7
    assert [f.name for f in second.facets] == [f.name for f in first.facets]


async def test_other_options_get_their_own_thread(store: Store) -> None:
    first = await run(store, scripted_llm(ScriptedChatModel(responder=responder())))
    second = await run(
        store,
        scripted_llm(ScriptedChatModel(responder=responder())),
        AbstractOptions(evidence=False, prompt="di"),
    )
    assert first.thread_id != second.thread_id


class FailingOnce(ScriptedChatModel):
    """Fails the results facet (after the other branches finished) on the first run."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        prompt = "\n".join(str(m.content) for m in messages)
        if kind(prompt) == "facet" and facet_of(prompt) == "results":
            await asyncio.sleep(0.3)
            raise RuntimeError("process killed")
        return self._next(messages, kwargs)


async def test_resume_after_interruption_repeats_no_finished_branch(
    db_target: str,
) -> None:
    db = db_target
    async with await open_database(db) as store:
        crashing = FailingOnce(responder=responder())
        with pytest.raises(VeriscribeError, match="process killed"):
            await run(store, scripted_llm(crashing))
        assert kinds(crashing).count("facet") == 4  # results never answered
    # a new process: new connection, new model
    async with await open_database(db) as store:
        fresh = ScriptedChatModel(responder=responder())
        result = await run(store, scripted_llm(fresh))
    assert kinds(fresh) == ["facet", "refine"]
    assert facet_of(fresh.calls[0][0]) == "results"
    assert result.abstract == "Refined abstract."
    assert all(f.status != "failed" for f in result.facets)


async def test_checkpoints_hold_no_paragraph_text(store: Store) -> None:
    await run(store, scripted_llm(ScriptedChatModel(responder=responder())))
    blobs = await checkpoint_bytes(store)
    assert len(blobs) > 1000  # the checkpoints exist
    for _, text in PARAGRAPHS:
        assert text[:40].encode() not in blobs
    assert b"Summary of methods." in blobs  # short results are kept


def test_drawn_graph_matches_snapshot() -> None:
    drawn = build_abstract_graph().compile().get_graph().draw_mermaid()
    # To accept a deliberate change: write `drawn` to the snapshot file and review it.
    assert drawn == SNAPSHOT.read_text()


async def test_the_refine_prompt_holds_the_whole_draft_on_one_line(
    store: Store,
) -> None:
    # Under a JSON grammar a string cannot hold a raw line break: a draft of several
    # paragraphs made small models end the abstract after the first facet.
    chat = ScriptedChatModel(responder=responder())
    result = await run(store, scripted_llm(chat))
    (prompt,) = [p for p, _ in chat.calls if kind(p) == "refine"]
    draft = prompt.split("Draft abstract:", 1)[1].strip()
    assert "\n" not in draft
    for facet in result.facets:
        if facet.status == "ok":
            assert facet.summary in draft


async def test_the_copy_limit_reaches_a_backend_that_guards_copying(
    store: Store,
) -> None:
    chat = ScriptedChatModel(responder=responder())
    llm = dataclasses.replace(scripted_llm(chat), guards_copying=True)
    await run(store, llm, AbstractOptions(evidence=False, copy_limit=3))
    art = article()
    for prompt, kwargs in chat.calls:
        if kind(prompt) == "facet":
            guard = kwargs["copy_guard"]
            assert guard["limit"] == 3
            assert guard["source"] and guard["source"] in "\n\n".join(
                p.text for p in art.paragraphs
            )
        elif kind(prompt) == "refine":
            # The abstract may copy the draft, but not loop on its own words; its
            # words and scripts are held to the article's.
            body = "\n\n".join(p.text for p in art.paragraphs)
            assert kwargs["copy_guard"] == {"source": "", "limit": 5, "words": body}


async def test_no_copy_limit_sends_no_guard(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    llm = dataclasses.replace(scripted_llm(chat), guards_copying=True)
    await run(store, llm, AbstractOptions(evidence=False, copy_limit=0))
    assert all("copy_guard" not in kwargs for _, kwargs in chat.calls)


# ------------------------------------------------------- the checks after refining

TOPICS = "sepsis lactate fluids kidneys platelets cultures delirium steroids".split()


def topic_sentence(topic: str, n: int = 20) -> str:
    """A sentence of ``n`` words about one topic, sharing no content word with others."""
    return (
        f"The {topic} "
        + " ".join(f"{topic}{chr(97 + i)}" for i in range(n - 3))
        + (" changed.")
    )


def long_article() -> Article:
    """The sepsis article with every paragraph long enough for a 250-word abstract."""
    extra = " ".join(topic_sentence(t) for t in TOPICS)
    return article([(s, f"{t} {extra}") for s, t in PARAGRAPHS])


async def test_refine_asks_for_the_length_and_trims_an_abstract_that_runs_over(
    store: Store,
) -> None:
    # 24 sentences of 20 words: 480 words against 250 asked
    reply = " ".join(topic_sentence(k + t) for k in "xyz" for t in TOPICS)
    chat = ScriptedChatModel(
        responder=responder(refine=lambda p: json.dumps({"abstract": reply}))
    )
    result = await run(
        store,
        scripted_llm(chat),
        AbstractOptions(evidence=False, labeller="classifier"),
        long_article(),
    )
    (prompt, kwargs) = next((p, k) for p, k in chat.calls if kind(p) == "refine")
    assert "about 250 words" in prompt
    assert kwargs["max_tokens"] == abstract_tokens(250) < 600
    assert result.words_asked == 250 and result.checks is not None
    assert result.checks.length == "trimmed"
    assert 200 <= len(result.abstract.split()) <= 300
    assert result.checks.words == len(result.abstract.split())
    # Whole sentences of the model's abstract, in its order: none is cut.
    kept = sentences_of(result.abstract)
    assert all(s in reply for s in kept)
    assert [s for s in sentences_of(reply) if s in kept] == kept
    assert any(f.startswith("length_trimmed:") for f in result.fallbacks)


async def test_a_short_abstract_of_a_long_article_gains_facet_sentences(
    store: Store,
) -> None:
    def facet(prompt: str) -> str:
        name = facet_of(prompt)
        topics = TOPICS[:4] if name in ("background", "methods") else TOPICS[4:]
        return json.dumps(
            {"summary": " ".join(topic_sentence(f"{name[:4]}{t}") for t in topics)}
        )

    chat = ScriptedChatModel(
        responder=responder(
            facet=facet,
            refine=lambda p: json.dumps({"abstract": topic_sentence("sepsis")}),
        )
    )
    result = await run(
        store,
        scripted_llm(chat),
        AbstractOptions(evidence=False, labeller="classifier"),
        long_article(),
    )
    assert result.checks is not None and result.checks.length == "padded"
    assert 200 <= len(result.abstract.split()) <= 300
    assert all(s in result.draft for s in result.checks.added)
    assert any(f.startswith("length_padded:") for f in result.fallbacks)


async def test_refine_drops_echoed_guidance_and_keeps_numbers_exact(
    store: Store,
) -> None:
    reply = (
        "The research gap and the motivation for the work are significant. "
        "We randomised 412 adults with sepsis to early or delayed antibiotics. "
        "Mortality At 28 days was 18% with early and 27% with delayed therapy."
    )

    def facet(prompt: str) -> str:
        if facet_of(prompt) == "results":
            return json.dumps(
                {"summary": "Mortality at 28 days was 18% early and 25% delayed."}
            )
        return json.dumps({"summary": f"Summary of {facet_of(prompt)}."})

    chat = ScriptedChatModel(
        responder=responder(
            facet=facet, refine=lambda p: json.dumps({"abstract": reply})
        )
    )
    result = await run(
        store, scripted_llm(chat), AbstractOptions(evidence=False, words=0)
    )
    assert result.abstract == (
        "We randomised 412 adults with sepsis to early or delayed antibiotics. "
        "Mortality at 28 days was 18% early and 25% delayed."
    )
    checks = result.checks
    assert checks is not None and checks.length == "off"
    assert checks.guidance_dropped == [
        "The research gap and the motivation for the work are significant."
    ]
    assert checks.numbers_dropped == [reply.split(". ")[-1]]
    assert checks.number_precision == pytest.approx(3 / 4)


async def test_the_own_prompts_ask_the_question_a_facet_answers(store: Store) -> None:
    chat = ScriptedChatModel(responder=responder())
    await run(store, scripted_llm(chat))
    prompts = {facet_of(p): p for p, _ in chat.calls if kind(p) == "facet"}
    assert "What gap in knowledge motivated the work?" in prompts["background"]
    assert "research gap and the motivation" not in prompts["background"]


async def test_every_sentence_is_shown_with_its_evidence_or_repaired(
    store: Store,
) -> None:
    reply = (
        "Sepsis is a leading cause of death in intensive care units worldwide. "
        "We randomised 412 adults with sepsis to early or delayed antibiotics. "
        "Mortality at 28 days was higher with early than with delayed therapy."
    )
    chat = ScriptedChatModel(
        responder=responder(refine=lambda p: json.dumps({"abstract": reply}))
    )
    result = await run(store, scripted_llm(chat), AbstractOptions(words=0))
    statuses = [(s.status, s.origin, s.role) for s in result.sentences]
    # The article's aim, which the model's text leaves out, is added in its place.
    assert statuses == [
        ("certified", "model", "background"),
        ("certified", "article", "objective"),
        ("certified", "model", "methods"),
        ("repaired", "model", "results"),
        ("certified", "article", "conclusions"),
    ]
    assert result.sentences[1].text == PARAGRAPHS[1][1]
    flipped = result.sentences[3]
    assert flipped.text == PARAGRAPHS[4][1]
    assert flipped.original.endswith("higher with early than with delayed therapy.")
    assert flipped.reason
    assert flipped.evidence[0].paragraph == 4
    assert flipped.evidence[0].section == "Results"
    assert result.sentence_counts == {"certified": 4, "repaired": 1, "dropped": 0}
    assert "higher" not in result.abstract
    assert result.abstract.endswith(PARAGRAPHS[5][1])
    assert any(f.startswith("evidence_checked:") for f in result.fallbacks)


def test_every_node_of_the_graph_has_its_event() -> None:
    # A node renamed or added without its entry fails here, not in the live view.
    assert set(build_abstract_graph().nodes) == set(abstract_stages.STAGES)
    stages = [
        event.model_fields["stage"].default
        for event in get_args(get_args(AbstractStageEvent)[0])
    ]
    assert sorted(stages) == sorted(abstract_stages.STAGES)


async def test_a_run_tells_each_step_its_event(store: Store) -> None:
    empty = json.dumps({"summary": "", "reasoning": "nothing"})
    chat = ScriptedChatModel(responder=responder(facet=lambda p: empty))
    told: list[AbstractStageEvent] = []
    await run_abstract(
        store,
        scripted_llm(chat),
        article(),
        AbstractOptions(evidence=False),
        on_event=told.append,
    )
    kinds = [type(event) for event in told]
    assert kinds[0] is FacetsDivided and kinds[-1] is AbstractRefined
    assert kinds.count(FacetSummarised) == 8  # five facets, then three regrouped
    assert kinds.count(FacetsJoined) == 2
    divided, regrouped, lead = told[0], told[kinds.index(FacetsRegrouped)], told[-2]
    assert isinstance(divided, FacetsDivided) and divided.paragraphs["methods"] == 2
    assert isinstance(regrouped, FacetsRegrouped) and "intro" in regrouped.paragraphs
    assert isinstance(lead, LeadTaken)
    assert {f.status for f in lead.facets} == {"lead300"}
