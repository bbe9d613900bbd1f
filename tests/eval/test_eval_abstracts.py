from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from fakes import scripted_llm
from veriscribe.documents.articles import Article, Paragraph, read_articles
from veriscribe.errors import BackendUnavailable, ConfigError, InputError
from veriscribe.eval.abstracts import eval_abstracts, read_results, significance
from veriscribe.eval.baselines import (
    fit_to_budget,
    lead_k,
    naive_abstract,
    run_lead,
)
from veriscribe.metrics.recall import concept_recall, find_concepts, keyphrase_recall
from veriscribe.metrics.scorers import (
    load_scorer_spec,
    register_scorer,
    registered_scorers,
    unregister_scorer,
)
from veriscribe.prompts import load_prompt
from veriscribe.text.sentences import split_sentences

# A hand-worked example. The article body is one paragraph of 14 tokens:
#   the cat sat on the mat . the dog ran to the park .
# The human abstract "The cat sat. A bird sang." has 8 tokens: bigrams {the cat, cat
# sat, sat ., . a, a bird, bird sang, sang .}, of which only the first two occur in the
# article (novelty 5/7); trigrams: 6, only "the cat sat" in the article (5/6). Greedy
# fragments: "the cat sat" (3), "." (1), "." (1): coverage 5/8, density 11/8,
# compression 14/8.
# The generated "The dog ran to the park. The cat sat down." has 12 tokens: bigrams 11
# distinct, novel {sat down, down .} (2/11); trigrams 10, novel {park . the, . the
# cat, cat sat down, sat down .} (4/10). Fragments "the dog ran to the park ." (7),
# "the cat sat" (3), "." (1): coverage 11/12, density 59/12, compression 14/12.
# ROUGE-L: LCS "the cat sat" = 3 of 10 predicted and 6 reference words:
# P = 0.3, R = 0.5, F = 0.375. The reference's key phrases are "cat sat" and "bird
# sang"; every word of the first occurs in the generated abstract: recall 1/2.
ARTICLE_MD = """# Tiny

## Abstract

The cat sat. A bird sang.

## Body

The cat sat on the mat. The dog ran to the park.
"""
GENERATED = "The dog ran to the park. The cat sat down."
HUMAN = "The cat sat. A bird sang."

EXPECTED_GENERATED = {
    "bigram_novelty": 2 / 11,
    "trigram_novelty": 4 / 10,
    "coverage": 11 / 12,
    "density": 59 / 12,
    "compression": 14 / 12,
    "rouge_l": 0.375,
    "keyphrase_recall": 0.5,
}
EXPECTED_HUMAN = {
    "bigram_novelty": 5 / 7,
    "trigram_novelty": 5 / 6,
    "coverage": 5 / 8,
    "density": 11 / 8,
    "compression": 14 / 8,
}


def _write_jsonl(path: Path, lines: Sequence[Any]) -> Path:
    path.write_text(
        "".join(
            (line if isinstance(line, str) else json.dumps(line)) + "\n"
            for line in lines
        )
    )
    return path


@pytest.fixture
def article(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.md"
    path.write_text(ARTICLE_MD)
    return path


@pytest.fixture
def results(tmp_path: Path, article: Path) -> Path:
    return _write_jsonl(
        tmp_path / "results.jsonl",
        [
            {"id": "tiny", "source": str(article), "abstract": GENERATED},
            {"id": "broken", "source": str(article), "error": "sim: HTTP 503"},
            "{not json",
        ],
    )


def _check_example(report: dict[str, Any]) -> None:
    assert report["scored"] == 1
    record = report["per_article"][0]
    for metric, value in EXPECTED_GENERATED.items():
        assert record["generated"][metric] == pytest.approx(value), metric
        assert report["metrics"][metric]["mean"] == pytest.approx(value), metric
    for metric, value in EXPECTED_HUMAN.items():
        assert record["human"][metric] == pytest.approx(value), metric
        assert report["metrics"][metric]["human"] == pytest.approx(value)
        assert report["metrics"][metric]["difference"] == pytest.approx(
            EXPECTED_GENERATED[metric] - value
        )
        assert report["metrics"][metric]["abs_difference"] == pytest.approx(
            abs(EXPECTED_GENERATED[metric] - value)
        )
    assert record["keyphrases"] == ["cat sat", "bird sang"]
    assert record["recalled"] == ["cat sat"]


async def test_hand_worked_example_end_to_end(results: Path, article: Path) -> None:
    report = (await eval_abstracts(results, reference=[str(article)])).model_dump(
        mode="json"
    )
    _check_example(report)
    assert report["reference_mode"] == "articles"
    # The failed item and the unreadable line are counted, with their reasons.
    assert report["items"] == 3 and report["failed"] == 1
    reasons = {e["id"]: e["reason"] for e in report["excluded"]}
    assert reasons["broken"] == "failed: sim: HTTP 503"
    assert "not JSON" in reasons["results.jsonl:3"]
    assert report["metrics"]["density"]["better"] == "closer_to_human"
    assert report["metrics"]["rouge_l"]["better"] == "higher"


async def test_reference_list_and_results_own_references_agree(
    tmp_path: Path, results: Path, article: Path
) -> None:
    listing = _write_jsonl(
        tmp_path / "refs.jsonl", [{"file": article.name, "abstract": HUMAN}]
    )
    from_list = (await eval_abstracts(results, reference=listing)).model_dump(
        mode="json"
    )
    assert from_list["reference_mode"] == "list"
    _check_example(from_list)
    # No --reference: each result's own `reference` and `source`.
    own = _write_jsonl(
        tmp_path / "own.jsonl",
        [
            {
                "id": "t",
                "source": str(article),
                "abstract": GENERATED,
                "reference": HUMAN,
            }
        ],
    )
    from_results = (await eval_abstracts(own)).model_dump(mode="json")
    assert from_results["reference_mode"] == "results"
    _check_example(from_results)


async def test_items_without_article_or_reference_are_excluded_with_reasons(
    tmp_path: Path, article: Path
) -> None:
    results = _write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"id": "tiny", "source": str(article), "abstract": GENERATED},
            {"id": "gone", "source": str(tmp_path / "gone.xml"), "abstract": "x y z"},
            {"id": "tiny", "source": str(article), "abstract": "a duplicate"},
            {"id": "empty", "source": str(article), "abstract": "  "},
        ],
    )
    report = (await eval_abstracts(results, reference=[str(article)])).model_dump(
        mode="json"
    )
    reasons = {(e["id"], e["reason"]) for e in report["excluded"]}
    assert ("gone", "no matching article in the reference set") in reasons
    assert ("tiny", "duplicate id (the first is scored)") in reasons
    assert ("empty", "no abstract") in reasons
    assert report["scored"] == 1 and report["failed"] == 0 and report["items"] == 4


async def test_model_metrics_absent_are_null_never_zero(
    results: Path, article: Path
) -> None:
    report = (await eval_abstracts(results, reference=[str(article)])).model_dump(
        mode="json"
    )
    for name in ("alignscore", "minicheck", "summac", "bertscore"):
        entry = report["metrics"][name]
        assert entry["mean"] is None and entry["n"] == 0 and "absent" in entry["note"]
    assert any("alignscore" in note for note in report["notes"])


async def test_registered_scorer_is_reported_and_a_failing_one_is_absent(
    results: Path, article: Path
) -> None:
    seen: dict[str, Sequence[str]] = {}

    def bertscore(generated: Sequence[str], sources: Sequence[str]) -> list[float]:
        seen["sources"] = sources
        return [0.75 for _ in generated]

    def alignscore(generated: Sequence[str], sources: Sequence[str]) -> list[float]:
        raise RuntimeError("weights missing")

    register_scorer("bertscore", bertscore)
    register_scorer("alignscore", alignscore)
    try:
        report = (await eval_abstracts(results, reference=[str(article)])).model_dump(
            mode="json"
        )
    finally:
        unregister_scorer("bertscore")
        unregister_scorer("alignscore")
    assert report["metrics"]["bertscore"]["mean"] == pytest.approx(0.75)
    assert seen["sources"] == [HUMAN]  # BERTScore compares with the reference
    assert report["metrics"]["alignscore"]["mean"] is None
    assert "weights missing" in report["metrics"]["alignscore"]["note"]


def make_scorer() -> Any:
    return lambda generated, sources: [float(len(s)) for s in sources]


def test_scorer_spec_from_the_command_line() -> None:
    name = load_scorer_spec("summac=test_eval_abstracts:make_scorer")
    try:
        scorer, against = registered_scorers()[name]
        assert against == "article"
        assert list(scorer(["a"], ["four"])) == [4.0]
    finally:
        unregister_scorer(name)
    with pytest.raises(ConfigError):
        load_scorer_spec("summac")
    with pytest.raises(ConfigError):
        load_scorer_spec("summac=no_such_module_here:factory")


async def test_umls_recall_only_with_a_knowledge_base(
    tmp_path: Path, results: Path, article: Path
) -> None:
    without = (await eval_abstracts(results, reference=[str(article)])).model_dump(
        mode="json"
    )
    assert "umls_recall" not in without["metrics"]
    assert any("umls_recall omitted" in note for note in without["notes"])
    kb = _write_jsonl(
        tmp_path / "kb.jsonl",
        [
            {"concept_id": "C1", "canonical_name": "cat", "aliases": ["cats"]},
            {"concept_id": "C2", "canonical_name": "bird", "aliases": []},
        ],
    )
    report = (
        await eval_abstracts(results, reference=[str(article)], kb=kb)
    ).model_dump(mode="json")
    # The reference mentions cat and bird; the generated abstract only the cat.
    assert report["metrics"]["umls_recall"]["mean"] == pytest.approx(0.5)


async def test_against_runs_the_paired_bootstrap(tmp_path: Path) -> None:
    sources = []
    for i in range(4):
        path = tmp_path / f"a{i}.md"
        path.write_text(ARTICLE_MD)
        sources.append(str(path))
    close = _write_jsonl(
        tmp_path / "close.jsonl",
        [
            {"id": f"a{i}", "source": s, "abstract": GENERATED}
            for i, s in enumerate(sources)
        ],
    )
    copied = _write_jsonl(
        tmp_path / "copied.jsonl",
        [
            {"id": f"a{i}", "source": s, "abstract": "The cat sat on the mat."}
            for i, s in enumerate(sources)
        ],
    )
    report = (
        await eval_abstracts(close, reference=sources, against=copied, resamples=500)
    ).model_dump(mode="json")
    comparison = report["comparison"]
    assert comparison["paired"] == 4 and comparison["resamples"] == 500
    density = comparison["metrics"]["density"]
    # Copied: one fragment of 7 tokens, density 7; human density 11/8.
    assert density["test"] == "abs_deviation"
    assert density["a"] == pytest.approx(59 / 12 - 11 / 8)
    assert density["b"] == pytest.approx(7 - 11 / 8)
    assert density["mean_difference"] == pytest.approx(59 / 12 - 7)
    assert density["n"] == 4 and 0 < density["p_value"] <= 1
    rouge = comparison["metrics"]["rouge_l"]
    assert rouge["test"] == "raw" and rouge["a"] == pytest.approx(0.375)
    # Every article gives the same difference, so no resample comes near zero: p is
    # at its floor of 1 / (resamples + 1). Compression 14/12 and 14/7 against 14/8.
    compression = comparison["metrics"]["compression"]
    assert compression["mean_difference"] == pytest.approx((14 / 8 - 14 / 12) - 0.25)
    assert compression["p_value"] == pytest.approx(1 / 501)
    assert compression["significance"] == "**"
    assert report["against"]["scored"] == 4
    assert "alignscore" not in comparison["metrics"]
    assert any("paired articles" in note for note in report["notes"])


async def test_plot_writes_a_png(tmp_path: Path, results: Path, article: Path) -> None:
    png = tmp_path / "metrics.png"
    report = (
        await eval_abstracts(results, reference=[str(article)], plot=png)
    ).model_dump(mode="json")
    assert report["plot"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000


def test_read_results_accepts_object_array_and_lines(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"id": "x", "abstract": "A."}, indent=2))
    many = tmp_path / "many.json"
    many.write_text(
        json.dumps([{"id": "x", "abstract": "A."}, {"id": "y", "error": "e"}])
    )
    assert [i.key for i in read_results(one).usable] == ["x"]
    found = read_results(many)
    usable, excluded = found.usable, found.excluded
    assert [i.key for i in usable] == ["x"] and excluded[0].id == "y"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError):
        read_results(empty)


def test_significance_markers() -> None:
    assert [significance(p) for p in (0.0005, 0.005, 0.03, 0.2)] == [
        "***",
        "**",
        "*",
        "",
    ]


# ------------------------------------------------------------------ recall metrics


def test_keyphrase_recall_expands_abbreviations_and_ignores_order() -> None:
    reference = (
        "Zika virus (ZIKV) is a mosquito-borne flavivirus. ZIKV infection in pregnant "
        "women causes microcephaly."
    )
    generated = "In pregnant women, ZIKV causes microcephaly through infection."
    result = keyphrase_recall(reference, generated)
    assert result.phrases == (
        "Zika virus infection",
        "pregnant women causes",
        "mosquito-borne flavivirus",
    )
    # "ZIKV ... infection" recalls "Zika virus infection": the short form defined in
    # the reference is expanded, and word order does not matter.
    assert result.recalled == ("Zika virus infection", "pregnant women causes")
    assert result.value == pytest.approx(2 / 3)
    assert math.isnan(keyphrase_recall("", generated).value)


def test_concepts_are_found_by_longest_alias_match() -> None:
    aliases = {"breast cancer": "C1", "cancer": "C2", "lung": "C3"}
    assert find_concepts("Breast-cancer screening", aliases) == {"C1"}
    assert find_concepts("cancer of the lung", aliases) == {"C2", "C3"}
    assert concept_recall(
        "breast cancer and lung", "lung only", aliases
    ) == pytest.approx(0.5)
    assert math.isnan(concept_recall("nothing here", "lung", aliases))


# ----------------------------------------------------------------------- baselines


def test_lead_k_on_a_real_dev_article(shared_data: Path) -> None:
    path = shared_data / "articles" / "jats" / "elife__elife-02833-v2.xml"
    (article,) = read_articles(path)
    assert isinstance(article, Article) and article.reference
    abstract, record = lead_k(article)
    target = len(article.reference.split())
    assert record.target_words == target
    assert record.words == len(abstract.split()) <= target
    first = article.paragraphs[0].text
    assert abstract.startswith(first.split(". ")[0])
    assert abstract in " ".join(p.text for p in article.paragraphs[:5])
    # The next body sentence would have passed the reference length.
    sentences = [s for p in article.paragraphs for s in split_sentences(p.text)]
    following = sentences[record.sentences]
    assert record.words + len(following.split()) > target
    capped, capped_record = lead_k(article, k=2)
    assert capped_record.sentences == 2 and abstract.startswith(capped)


SENTENCES = [
    "The first sentence is here today.",
    "The second sentence follows it now.",
    "A third one comes after the second.",
    "The fourth sentence ends the paragraph.",
]


def test_lead_k_without_reference_takes_three_sentences() -> None:
    article = Article(
        "x",
        "x.md",
        "",
        [Paragraph("", " ".join(SENTENCES))],
    )
    abstract, record = lead_k(article)
    assert abstract == " ".join(SENTENCES[:3])
    assert record.model_dump() == {
        "sentences": 3,
        "words": 19,
        "target_words": None,
        "k": 3,
    }


def test_run_lead_writes_results_and_records_failures(tmp_path: Path) -> None:
    good = tmp_path / "tiny.md"
    good.write_text(ARTICLE_MD)
    bad = tmp_path / "bad.xml"
    bad.write_text("<article><body>")
    out = tmp_path / "lead.jsonl"
    summary = run_lead([str(good), str(bad)], out)
    assert summary.written == 1 and summary.failed == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["abstract"] == "The cat sat on the mat."
    assert (
        lines[0]["model"] == "baseline:lead" and lines[0]["lead"]["target_words"] == 6
    )
    assert "malformed XML" in lines[1]["error"]


def _article(words: int) -> Article:
    text = " ".join(f"word{i}" for i in range(words))
    return Article("long", "long.md", "Long", [Paragraph("", text)], reference="R.")


async def test_naive_baseline_fits_short_articles_whole() -> None:
    llm = scripted_llm(['{"abstract": "A short abstract."}'])
    line = await naive_abstract(llm, _article(50))
    assert line.abstract == "A short abstract."
    assert line.truncation.truncated is False and line.fallbacks == []
    assert line.usage.calls == 1 and line.baseline == "naive"
    assert line.prompt_ids[0].startswith("abstract/naive@")


async def test_naive_baseline_truncates_to_the_budget_and_records_it() -> None:
    replies: list[str] = []

    def reply(prompt: str, kwargs: dict[str, Any]) -> str:
        replies.append(prompt)
        return '{"abstract": "Cut."}'

    llm = scripted_llm(reply, context_tokens=2048)
    article = _article(3000)
    line = await naive_abstract(llm, article)
    record = line.truncation
    assert record.truncated is True and len(replies) == 1
    assert 0 < record.kept_words < record.article_words == 3000
    assert record.kept_tokens < record.article_tokens
    assert "truncated" in line.fallbacks[0]
    assert "only its beginning is given" in replies[0]
    assert f"word{record.kept_words - 1}" in replies[0]
    assert f"word{record.kept_words} " not in replies[0]
    # The kept prefix is the longest that fits: one more word would not.
    prompt = load_prompt("abstract", "naive")
    text, again = fit_to_budget(llm, prompt, article)
    assert again == record
    one_more = " ".join(f"word{i}" for i in range(record.kept_words + 1))
    assert text + f" word{record.kept_words}" == one_more
    budget = llm.prompt_budget(600)
    from veriscribe.eval.baselines import _render

    assert llm.count_tokens(_render(prompt, text, True)) <= budget
    assert llm.count_tokens(_render(prompt, one_more, True)) > budget
    assert llm.count_tokens([HumanMessage(text)]) == record.kept_tokens


async def test_naive_baseline_retries_a_transient_fault() -> None:
    llm = scripted_llm([BackendUnavailable("503"), '{"abstract": "Second time."}'])
    line = await naive_abstract(llm, _article(20))
    assert line.abstract == "Second time." and line.attempts == 2


async def test_quality_metrics_are_scored_against_the_asked_length(
    tmp_path: Path, article: Path
) -> None:
    path = _write_jsonl(
        tmp_path / "quality.jsonl",
        [
            {
                "id": "asked",
                "source": str(article),
                "abstract": GENERATED,
                "words_asked": 10,
            },
            {
                "id": "echo",
                "source": str(article),
                "abstract": "Methods: The Dog ran to the park in 3 days.",
            },
        ],
    )
    report = (await eval_abstracts(path, reference=[str(article)])).model_dump(
        mode="json"
    )
    records = {r["id"]: r["generated"] for r in report["per_article"]}
    assert records["asked"]["words"] == 10
    assert records["asked"]["within_length"] == 1.0  # 10 words, 10 asked
    assert records["echo"]["within_length"] == 0.0  # 250 asked by default
    assert records["echo"]["guidance_echoes"] == 1
    assert records["echo"]["case_changes"] == 1  # "Dog"
    assert records["echo"]["number_precision"] == 0.0
    assert records["asked"]["number_precision"] is None  # no numbers: undefined
    metrics = report["metrics"]
    assert metrics["words"]["max"] == 10
    assert metrics["within_length"]["mean"] == 0.5
    assert metrics["guidance_echoes"]["better"] == "lower"
    assert metrics["words"]["better"] == "target"
