"""Abstracts on the embedded model: today's pipeline against the new one, side by side.

The same development articles (by default the 5 shortest JATS articles that ship with
an author abstract) go through ``run_batch`` once per model and pipeline, on a fresh
database each, with the response cache off, in one run:

- ``today``: the papers' prompts as before (``--prompt bc``, the discarded reasoning
  field, no copy limit, no length held: ``--words 0``), model calls one at a time
  (``--concurrency 1``);
- ``new``: the defaults (``AbstractOptions()``: own-words prompts, no reasoning field,
  the copy limit on the embedded model) at ``--concurrency 2`` (two llama contexts, the
  threads split between the calls running at once);
- ``reasoning``: ``new`` with the papers' discarded reasoning field, on the first model
  only: what ``--lean`` (the default) saves and costs;
- ``lookup``: ``new`` decoded with prompt-lookup drafts (``VERISCRIBE_LLM__LOOKUP``):
  what drafting saves, and how the abstracts it gives compare.

For each it prints articles per hour (wall time of the whole batch: reading, graph,
model, output), prompt and output tokens per article, and the abstracts' trigram
novelty, extractive fragment density and coverage against the article body (Grusky et
al.; means over articles), then claim support: every abstract sentence judged against
its article by the judge ``eval abstracts --support`` uses (``eval/support.py``: the
one with the best accuracy measured on held-out abstract pairs whose model is
installed; its name is printed). ``support`` is the share fully supported, ``lenient``
the share at least partially supported; both are printed, and the last line's
``support`` is the strict one.

A second table gives what a reader notices first (``metrics/abstract_quality.py``),
against the default asked length of 250 words whatever the pipeline: words (mean,
max), the share within 20% of it, sentences that restate the facet guidance, words in
a script the article does not use, words capitalised mid-sentence that the article
writes in lower case (those three are totals over the abstracts), the repeated
trigram share and the share of numbers the article gives.

``speedup`` is new / today articles per hour on the first model (0.5B); the last
line's other figures are the new pipeline's on that model:
``articles_per_hour=<x> speedup=<x> novelty=<x> density=<x> support=<x> words=<x>
within=<x> echoes=<x> case=<x> numbers=<x>``.

Timings on a shared machine are noisy: run it alone. A model that is not installed
(``local:1.5b`` needs ``pip install veriscribe[local-model-1.5b]``) is reported as
skipped.

Usage: ``.venv/bin/python bench/local.py [--articles 5] [--models local,local:1.5b]
[--pipelines today,new,reasoning] [--no-support] [--db DIR [--reuse]]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from veriscribe.documents.articles import Article, read_articles
from veriscribe.errors import VeriscribeError
from veriscribe.eval.support import support_checker
from veriscribe.metrics.abstract_quality import abstract_quality, quality_summary
from veriscribe.metrics.fragments import fragment_stats
from veriscribe.metrics.novelty import novelty_stats
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import run_batch
from veriscribe.settings import LLMSettings, Settings

JATS = Path(__file__).resolve().parents[2] / "shared" / "data" / "articles" / "jats"

WORDS = AbstractOptions().words
"""The length every pipeline's abstracts are measured against."""

PIPELINES: dict[str, tuple[AbstractOptions, int]] = {
    "today": (AbstractOptions(prompt="bc", lean=False, copy_limit=0, words=0), 1),
    "new": (AbstractOptions(), 2),
    "reasoning": (AbstractOptions(lean=False), 2),
    "lookup": (AbstractOptions(), 2),
    "batched": (AbstractOptions(), 4),
}
LOOKUP = {"lookup"}
"""Pipelines decoded with prompt-lookup drafts (``LLMSettings.lookup``)."""
BATCHED = {"batched"}
"""Pipelines whose calls are sequences of one context (``LLMSettings.batched``)."""


@dataclass
class Outcome:
    """One model and pipeline over the articles."""

    model: str
    pipeline: str
    seconds: float = 0.0
    abstracts: dict[str, str] = field(default_factory=dict)
    tokens: tuple[float, float] = (0.0, 0.0)
    scores: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    skipped: str = ""

    def per_hour(self, articles: int) -> float:
        """Return articles per hour."""
        return articles * 3600 / self.seconds if self.seconds else 0.0


def shortest_articles(count: int) -> list[tuple[Path, Article]]:
    """Return the ``count`` JATS dev articles with a reference abstract, shortest first."""
    found = []
    for path in sorted(JATS.glob("*.xml")):
        for article in read_articles(path):
            if (
                isinstance(article, Article)
                and article.paragraphs
                and article.reference
            ):
                found.append((len(article.body), path, article))
    found.sort(key=lambda row: row[0])
    return [(path, article) for _, path, article in found[:count]]


def settings_for(
    db: Path, concurrency: int, lookup: bool = False, batched: bool = False
) -> Settings:
    """Return settings with a fresh database and no response cache."""
    llm = LLMSettings(
        cache=False, concurrency=concurrency, lookup=lookup, batched=batched
    )
    return Settings(db=db, llm=llm)


async def run_pipeline(
    work: Path,
    model: str,
    pipeline: str,
    articles: list[tuple[Path, Article]],
    *,
    reuse: bool = False,
) -> Outcome:
    """Run one pipeline on one model over the articles; time it.

    With ``reuse``, a pipeline whose results and time are already in ``work`` (from an
    earlier run of this script on the same directory) is read, not run again.
    """
    options, concurrency = PIPELINES[pipeline]
    outcome = Outcome(model, pipeline)
    name = f"{model.replace(':', '_')}-{pipeline}"
    out = work / f"{name}.jsonl"
    timing = work / f"{name}.seconds"
    if reuse and out.exists() and timing.exists():
        outcome.seconds = float(timing.read_text())
    else:
        started = time.perf_counter()
        try:
            await run_batch(
                settings_for(
                    work / f"{name}.sqlite",
                    concurrency,
                    pipeline in LOOKUP,
                    pipeline in BATCHED,
                ).with_overrides(model=model),
                [str(path) for path, _ in articles],
                out,
                options,
                concurrency=concurrency,
                handle_signals=False,
            )
        except VeriscribeError as exc:
            outcome.skipped = exc.user_message
            return outcome
        outcome.seconds = time.perf_counter() - started
        timing.write_text(f"{outcome.seconds:.3f}\n")
    prompt = output = 0
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        usage = record.get("usage") or {}
        prompt += usage.get("prompt_tokens", 0)
        output += usage.get("output_tokens", 0)
        if record.get("abstract"):
            outcome.abstracts[str(record.get("source"))] = record["abstract"]
        else:
            outcome.failed.append(str(record.get("source")))
    outcome.tokens = (prompt / len(articles), output / len(articles))
    return outcome


def abstractiveness(outcome: Outcome, articles: list[tuple[Path, Article]]) -> None:
    """Add the mean novelty, density and coverage, and the reader-facing quality."""
    rows = []
    quality = []
    for path, article in articles:
        text = outcome.abstracts.get(str(path.resolve())) or outcome.abstracts.get(
            str(path)
        )
        if text:
            rows.append(
                novelty_stats(article.body, text) | fragment_stats(article.body, text)
            )
            quality.append(abstract_quality(text, article.body, WORDS))
    for metric in ("trigram_novelty", "density", "coverage"):
        values = [row[metric] for row in rows]
        outcome.scores[metric] = statistics.fmean(values) if values else float("nan")
    outcome.scores |= quality_summary(quality)


async def judge(
    outcomes: list[Outcome], articles: list[tuple[Path, Article]], work: Path
) -> None:
    """Add claim support (strict and lenient) to every outcome, one judge for all."""
    bodies = {str(path.resolve()): article.body for path, article in articles}
    bodies |= {str(path): article.body for path, article in articles}
    settings = settings_for(work / "judge.sqlite", 1)
    async with support_checker(settings) as checker:
        judge = checker.describe()
        print(f"support judge: {judge.judge} (accuracy {judge.judge_accuracy})")
        for outcome in outcomes:
            full = lenient = total = 0
            for source, text in outcome.abstracts.items():
                checked = await checker.check(text, bodies[source])
                counts = checked.counts()
                total += sum(counts.values())
                full += counts.get("fully_supported", 0)
                lenient += counts.get("fully_supported", 0) + counts.get(
                    "partially_supported", 0
                )
            outcome.scores["support"] = full / total if total else float("nan")
            outcome.scores["lenient"] = lenient / total if total else float("nan")


QUALITY_COLUMNS = (
    ("words_mean", "words", ".0f"),
    ("words_max", "max", ".0f"),
    ("within_length", "in+-20%", ".2f"),
    ("guidance_echoes", "echoes", ".0f"),
    ("foreign_script_words", "foreign", ".0f"),
    ("case_changes", "case", ".0f"),
    ("bent_words", "bent", ".0f"),
    ("pointers", "pointers", ".0f"),
    ("repeated_trigrams", "rep3", ".3f"),
    ("number_precision", "numbers", ".3f"),
)


def table(outcomes: list[Outcome], articles: int) -> None:
    """Print one row per model and pipeline, then its abstracts' quality."""
    print(
        f"{'model':<12} {'pipeline':<8} {'art/h':>7} {'s/art':>7} {'prompt':>7} "
        f"{'output':>7} {'novelty':>8} {'density':>8} {'coverage':>8} "
        f"{'support':>8} {'lenient':>8}"
    )
    for o in outcomes:
        if o.skipped:
            print(f"{o.model:<12} {o.pipeline:<8} skipped: {o.skipped}")
            continue
        s = o.scores
        print(
            f"{o.model:<12} {o.pipeline:<8} {o.per_hour(articles):>7.1f} "
            f"{o.seconds / articles:>7.1f} {o.tokens[0]:>7.0f} {o.tokens[1]:>7.0f} "
            f"{s.get('trigram_novelty', float('nan')):>8.3f} "
            f"{s.get('density', float('nan')):>8.2f} "
            f"{s.get('coverage', float('nan')):>8.3f} "
            f"{s.get('support', float('nan')):>8.3f} "
            f"{s.get('lenient', float('nan')):>8.3f}"
        )
        if o.failed:
            print(f"  no abstract: {', '.join(o.failed)}")
    print(
        f"\n{'model':<12} {'pipeline':<8} "
        + " ".join(f"{label:>8}" for _, label, _ in QUALITY_COLUMNS)
        + f"   (against {WORDS} words; echoes, foreign, case: totals)"
    )
    for o in outcomes:
        if not o.skipped:
            print(
                f"{o.model:<12} {o.pipeline:<8} "
                + " ".join(
                    f"{o.scores.get(key, float('nan')):>8{spec}}"
                    for key, _, spec in QUALITY_COLUMNS
                )
            )


async def main() -> None:
    """Run the benchmark and print its table and last line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=5)
    parser.add_argument("--models", default="local,local:1.5b")
    parser.add_argument("--pipelines", default="today,new,reasoning")
    parser.add_argument("--no-support", action="store_true")
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="Read the pipelines already run in --db instead of running them again.",
    )
    args = parser.parse_args()
    articles = shortest_articles(args.articles)
    print("articles:", ", ".join(path.name for path, _ in articles))
    work = args.db or Path(tempfile.mkdtemp(prefix="bench-local-"))
    work.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    models = args.models.split(",")
    for model in models:
        for pipeline in args.pipelines.split(","):
            if pipeline == "reasoning" and model != models[0]:
                continue  # the reasoning field is decided on the default model
            outcome = await run_pipeline(
                work, model, pipeline, articles, reuse=args.reuse
            )
            abstractiveness(outcome, articles)
            outcomes.append(outcome)
            print(
                f"{model} {pipeline}: {outcome.seconds:.0f} s"
                + (f" (skipped: {outcome.skipped})" if outcome.skipped else ""),
                flush=True,
            )
    if not args.no_support:
        await judge([o for o in outcomes if not o.skipped], articles, work)
    table(outcomes, len(articles))
    ran = [o for o in outcomes if not o.skipped]
    first = ran[0].model if ran else ""
    by = {(o.model, o.pipeline): o for o in ran}
    new, today = by.get((first, "new")), by.get((first, "today"))
    if new is None:
        print(
            "articles_per_hour=nan speedup=nan novelty=nan density=nan support=nan "
            "words=nan within=nan echoes=nan case=nan numbers=nan"
        )
        return
    speedup = (
        new.per_hour(len(articles)) / today.per_hour(len(articles))
        if today
        else float("nan")
    )
    s = new.scores
    print(
        f"articles_per_hour={new.per_hour(len(articles)):.2f} speedup={speedup:.2f} "
        f"novelty={s['trigram_novelty']:.3f} density={s['density']:.2f} "
        f"support={s.get('support', float('nan')):.3f} "
        f"words={s['words_mean']:.0f} within={s['within_length']:.2f} "
        f"echoes={s['guidance_echoes']:.0f} case={s['case_changes']:.0f} "
        f"bent={s['bent_words']:.0f} pointers={s['pointers']:.0f} "
        f"numbers={s['number_precision']:.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
