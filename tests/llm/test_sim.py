import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from stores import rows
from veriscribe.documents.articles import Article, read_articles
from veriscribe.errors import BackendUnavailable, StructuredOutputError, VeriscribeError
from veriscribe.eval.baselines import naive_abstract
from veriscribe.eval.questions import make_questions
from veriscribe.llm.factory import make_llm
from veriscribe.llm.sim_replies import rephrase
from veriscribe.nodes.abstract.checks import CHECK_FALLBACKS
from veriscribe.nodes.abstract.summarize_facet import facet_values
from veriscribe.options import AbstractOptions
from veriscribe.prompts import load_prompt
from veriscribe.service.batch import run_batch
from veriscribe.service.corpora import add_corpus, show_corpus
from veriscribe.service.qa import ask
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.replies import SummaryFull


class Labels(BaseModel):
    labels: list[str] = Field(min_length=4, max_length=4)
    summary: str


async def test_sim_answers_any_schema() -> None:
    llm = make_llm("sim", Settings())
    result = await llm.json("label", "label these four sentences", Labels)
    assert len(result.value.labels) == 4 and result.value.summary


async def test_sim_faults_are_seeded_and_varied() -> None:
    outcomes = []
    for seed in range(40):
        llm = make_llm(f"sim:fail=1,seed={seed}", Settings(llm=LLMSettings(retries=0)))
        try:
            await llm.json("label", "p", Labels)
            outcomes.append("ok")
        except (BackendUnavailable, StructuredOutputError) as exc:
            outcomes.append(type(exc).__name__)
    assert "ok" not in outcomes
    assert {"ModelTimeout", "BackendUnavailable", "StructuredOutputError"} == set(
        outcomes
    )


async def test_sim_fault_rate_is_roughly_respected() -> None:
    # One attempt per call: the client's retries would hide most faults.
    llm = make_llm("sim:fail=0.2,seed=7", Settings(llm=LLMSettings(retries=0)))
    failures = 0
    for i in range(200):
        try:
            await llm.text("p", f"prompt {i}")
        except BackendUnavailable:
            failures += 1
    # text calls only fail by timeout or 5xx: half of the fault kinds
    assert 5 <= failures <= 40


@pytest.mark.parametrize("bad", ["sim:latency=fast"])
def test_bad_sim_option(bad: str) -> None:
    from veriscribe.errors import ConfigError

    with pytest.raises(ConfigError):
        make_llm(bad, Settings())


# ---------------------------------------------------------------------------------
# What the simulated model writes: the prompts of both graphs, on real development data


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z\-]{2,}", text)}


# Words a summary may add to the facet text when it rewords a sentence.
REWORDING = {"the", "study", "investigators", "several", "to"}


def article_texts(shared_data: Path, names: list[str]) -> dict[str, Article]:
    found: dict[str, Article] = {}
    for name in names:
        for item in read_articles(shared_data / "articles" / name):
            if isinstance(item, Article):
                found[item.source] = item
    return found


@pytest.mark.parametrize(
    "options",
    [
        AbstractOptions(),
        AbstractOptions(prompt="si_cot", lean=True),
        AbstractOptions(prompt="di", split="sh"),
        AbstractOptions(split="ns", entities=5),
    ],
    ids=["bc", "si_cot-lean", "di-sh", "ns-entities"],
)
async def test_sim_batch_without_faults_writes_every_summary_itself(
    shared_data: Path,
    tmp_path: Path,
    options: AbstractOptions,
    default_db: str,
) -> None:
    names = ["jats/plos__journal.pone.0008519.xml", "jats/epmc__PMC4101712.xml"]
    out = tmp_path / "out.jsonl"
    summary = await run_batch(
        Settings(db=default_db, model="sim"),
        [str(shared_data / "articles" / n) for n in names],
        out,
        options,
        handle_signals=False,
    )
    assert summary.done == 2 and summary.failed == 0
    articles = article_texts(shared_data, names)
    for line in out.read_text().splitlines():
        result = json.loads(line)
        # The checks after refining may edit the text (a copied "Table 2" goes);
        # no step failed.
        failed = [f for f in result["fallbacks"] if not f.startswith(CHECK_FALLBACKS)]
        assert failed == []
        facets = [f for f in result["facets"] if f["status"] != "empty"]
        assert len(facets) >= 2
        assert all(f["status"] == "ok" for f in facets), facets
        paragraphs = articles[result["source"]].paragraphs
        for facet in facets:
            source = " ".join(paragraphs[i].text for i in facet["paragraphs"])
            # Sentences of the facet's own text, lightly reworded: no word of the
            # prompt's instructions, none from elsewhere.
            assert facet["summary"].endswith(".")
            assert words(facet["summary"]) <= words(source) | REWORDING, facet["name"]
        # The refined abstract keeps the summaries' sentences, in order.
        first = facets[0]["summary"].split(". ")[0]
        assert result["abstract"].startswith(first)


async def test_sim_naive_baseline_abstract_comes_from_the_article(
    shared_data: Path,
) -> None:
    article = next(iter(article_texts(shared_data, ["pcd.jsonl"]).values()))
    llm = make_llm("sim", Settings())
    line = await naive_abstract(llm, article)
    body = " ".join(p.text for p in article.paragraphs)
    assert len(line.abstract.split()) >= 30
    assert words(line.abstract) <= words(body) | REWORDING


def passages(shared_data: Path, n: int) -> list[dict[str, str]]:
    path = shared_data / "guidelines" / "cpgqa" / "passages.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()[:n]]


async def test_sim_answers_the_guideline_prompts_of_a_real_corpus(
    shared_data: Path,
    tmp_path: Path,
    default_db: str,
) -> None:
    """corpus add, ask and make-questions on cpgQA passages: the model's own output."""
    folder = tmp_path / "cpgqa"
    folder.mkdir()
    kept = passages(shared_data, 40)
    (folder / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in kept))
    settings = Settings(db=default_db, model="sim")
    report = await add_corpus(settings, "cpg", [folder / "passages.jsonl"])
    # Every section long enough to need a summary got one from the model.
    assert set(report.summaries) <= {"model", "text"} and report.summaries["model"]
    shown = await show_corpus(settings, "cpg")
    for section in shown.sections:
        if section.summary_source == "model":
            assert section.summary is not None and section.summary.startswith("Covers ")

    result = await ask(
        settings,
        "cpg",
        "Should you prescribe the highest or lowest effective dose when starting?",
    )
    assert result.claims and not result.not_found
    texts = {f"cpgqa:{p['passage_id']}": " ".join(p["text"].split()) for p in kept}
    for claim in result.claims:
        for citation in claim.citations:
            # Quotes are copied from the cited section, word for word.
            assert citation.tier == "exact"
            key = f"{citation.doc_id}:{citation.section_id}"
            assert citation.quote in texts[key]
    assert "fell back to BM25" not in " ".join(result.notes)

    summary = await make_questions(settings, "cpg", 9, tmp_path / "q.jsonl", seed=1)
    assert summary.kept == 9 and summary.dropped == 0
    assert summary.regenerated == 0
    assert summary.by_style == {"lookup": 3, "scenario": 3, "sdm": 3}


async def test_sim_reply_depends_on_prompt_and_seed_not_on_faults() -> None:
    """A reply repaired after invalid JSON says what a first-time reply says."""
    prompt = load_prompt("abstract", "summarize_bc")
    text = (
        "We enrolled 40 adults with asthma in a trial [3]. Our aim was to test "
        "inhaled steroids. Exacerbations fell by 30% in the treated group. Adverse "
        "events were rare in both of the groups. The effect lasted for a whole year. "
        "Adherence to the inhaler was high in most patients. Costs were similar in "
        "the two arms of the trial. Lung function improved in the treated group."
    )
    messages = prompt.render(
        **facet_values(AbstractOptions(), prompt, "results", text, {"entities": ""})
    )
    clean = await make_llm("sim:seed=4", Settings()).json("p", messages, SummaryFull)
    llm = make_llm("sim:fail=0.5,seed=4", Settings())
    replies, repaired = [], 0
    for _ in range(40):  # each call is a new attempt at the prompt: new faults
        try:
            result = await llm.json("p", messages, SummaryFull)
        except VeriscribeError:
            continue
        replies.append(result.value.summary)
        repaired += result.repaired
    assert repaired and len(replies) > repaired
    assert set(replies) == {clean.value.summary}
    assert clean.value.summary.startswith("The study enrolled 40 adults")
    assert "[3]" not in clean.value.summary
    others = [
        (
            await make_llm(f"sim:seed={seed}", Settings()).json(
                "p", messages, SummaryFull
            )
        ).value.summary
        for seed in range(5, 10)
    ]
    assert any(o != clean.value.summary for o in others)  # the seed picks sentences


FAULT_KINDS = {
    "timeout": "did not answer",
    "server_error": "HTTP 503",
    "invalid_json": "text that is not JSON",
    "empty": "empty content",
}


async def test_sim_batch_with_faults_fails_only_in_the_documented_ways(
    shared_data: Path, tmp_path: Path, new_db: Callable[[], str]
) -> None:
    inputs = [
        str(shared_data / "articles" / "pcd.jsonl"),
        str(shared_data / "articles" / "jats" / "epmc__PMC4101712.xml"),
    ]
    seen: set[str] = set()
    for seed in (2, 3):
        db = new_db()
        out = tmp_path / f"{seed}.jsonl"
        await run_batch(
            Settings(db=db, model=f"sim:fail=0.3,seed={seed}"),
            inputs,
            out,
            AbstractOptions(),
            concurrency=8,
            handle_signals=False,
        )
        outcomes = {row[0] for row in await rows(db, "SELECT outcome FROM llm_calls")}
        assert outcomes <= {"ok", "cached", "timeout", "unavailable"}
        seen |= outcomes
        reasons = []
        for line in out.read_text().splitlines():
            result = json.loads(line)
            if "error" in result:
                reasons.append(result["error"])
                continue
            reasons += [f["error"] for f in result["facets"] if f["status"] == "failed"]
            # "facet_failed:results" only names a facet; the others give a reason,
            # but for what the checks after refining changed.
            reasons += [
                f
                for f in result["fallbacks"]
                if " " in f and not f.startswith(CHECK_FALLBACKS)
            ]
            # A fault never passes for the model's text.
            assert "Sure!" not in result["abstract"]
        for reason in reasons:
            kinds = [k for k, text in FAULT_KINDS.items() if text in reason]
            assert kinds, reason
            seen.update(kinds)
    assert {"timeout", "unavailable", "invalid_json", "empty"} <= seen


def test_sim_rewording_drops_reference_numbers_and_first_person() -> None:
    assert rephrase("We found that rates fell (12, 14) [3].") == "Rates fell."
    assert rephrase("Our data span (2011-2020) and (n = 40)") == (
        "The data span (2011-2020) and (n = 40)."
    )
    assert rephrase("In this study, we used a survey (Fig. 2).") == (
        "The investigators used a survey."
    )
