"""Faithfulness of abstracts on the embedded model: per abstract, what a reader checks.

Development articles (by default the 14 shortest JATS articles and the 6 shortest
*Preventing Chronic Disease* articles of ``pcd.jsonl`` with an author abstract and
at least :data:`MIN_WORDS` body words) go through the abstract graph one at a time,
on a fresh database, with the response cache off. Each abstract is saved as JSON in
``--out`` (one file per article: the article's file path and line, the abstract, its
sentences with their status and evidence when the code gives them, and the whole
result), so that a reader can read it beside the article.

Per abstract it prints:

- ``sent``: sentences; ``cert``/``rep``/``drop``: the shares of sentences
  certified, repaired and dropped by the checks against the evidence (``n/a`` for
  code that does not record them); ``held``: the share left out for the asked
  length or the methods' share (counted apart from ``drop``);
- ``num``: whether a sentence aligned to a Results paragraph (by the divide step's
  labels or the section title) states a number the article gives there (a number
  standing alone: the 6 of "G6PD" is none);
- ``concl``: whether a sentence is aligned to a Discussion or Conclusions paragraph;
- ``flips``: sentences the deterministic checks of
  :func:`veriscribe.checks.faithfulness.claim_conflict` find contradicted (a number,
  direction or negation that differs) by the article sentences they align to best:
  an automatic sign of a flipped word, recomputed here the same way for any code;
- ``novelty`` (trigram), ``density`` (extractive fragment density), ``rougeL``
  against the authors' abstract, and ``seconds``.

Alignment here is independent of the code under test: each abstract sentence goes to
the two article sentences sharing most of its stemmed content words.

The last line: ``articles=<n> sentences=<mean> certified=<share> repaired=<share>
dropped=<share> held=<share> result_number=<share> conclusion=<share> flips=<share of sentences>
novelty=<mean> density=<mean> rougeL=<mean> seconds=<mean>``.

Usage: ``.venv/bin/python bench/faithful.py --out DIR [--articles 14] [--pcd 6]
[--model local] [--copy-limit N] [--reuse [--recertify [--save DIR]]]``. With
``--reuse`` the saved JSON files are scored again and nothing is generated; with
``--against DIR`` (an earlier version's folder of the same articles) the paired
difference in ROUGE-L is printed with its bootstrap interval.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from veriscribe.checks.faithfulness import claim_conflict
from veriscribe.checks.support import terms
from veriscribe.documents.articles import Article, read_articles
from veriscribe.llm.factory import make_llm
from veriscribe.metrics.bootstrap import paired_bootstrap
from veriscribe.metrics.fragments import fragment_stats
from veriscribe.metrics.novelty import novelty_stats
from veriscribe.metrics.rouge import rouge_l
from veriscribe.options import AbstractOptions
from veriscribe.service.abstracts import run_abstract
from veriscribe.service.common import open_store
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.numbers import ArticleNumbers
from veriscribe.text.sentences import sentences_of, split_sentences

DATA = next(
    (
        up / "shared" / "data" / "articles"
        for up in Path(__file__).resolve().parents
        if (up / "shared" / "data" / "articles").is_dir()
    ),
    Path("shared/data/articles"),
)
"""The development articles, beside the checkout or a worktree of it."""
JATS = DATA / "jats"
PCD = DATA / "pcd.jsonl"
MIN_WORDS = 1200
"""Shorter bodies (editorials, letters) give no results to report."""
_RESULTS = re.compile(r"result|finding|outcome", re.IGNORECASE)
_CONCLUSIONS = re.compile(r"discussion|conclu|implication|interpret", re.IGNORECASE)
HELD_BACK = ("length:", "balance:")
"""The reasons of sentences left out for space, not for their faithfulness."""
_YEAR = re.compile(r"^(19|20)\d\d$")
_NUMBER = re.compile(r"(?<![A-Za-z\d])(?<![A-Za-z]-)\d+(?:\.\d+)?%?")
"""A number standing alone: not the digit of a name such as G6PD, IL-6 or MR766."""


def development_articles(jats: int, pcd: int) -> list[tuple[Path, Article]]:
    """Return the shortest JATS and PCD articles with an author abstract."""
    chosen: list[tuple[Path, Article]] = []
    for paths, count in ((sorted(JATS.glob("*.xml")), jats), ([PCD], pcd)):
        found = []
        for path in paths:
            for article in read_articles(path):
                if (
                    isinstance(article, Article)
                    and article.paragraphs
                    and article.reference
                    and len(article.body.split()) >= MIN_WORDS
                ):
                    found.append((len(article.body), path, article))
        found.sort(key=lambda row: row[0])
        chosen += [(path, article) for _, path, article in found[:count]]
    return chosen


def file_name(article: Article) -> str:
    """Return the output file name of an article."""
    stem = Path(article.source.split(":")[0]).stem
    line = (
        article.source.rsplit(":", 1)[1]
        if article.source.endswith(tuple("0123456789")) and ":" in article.source
        else ""
    )
    return f"{stem}{'-' + line if line else ''}.json"


def article_sentences(article: Article, labels: list[str]) -> list[tuple[str, str]]:
    """Return every body sentence with its kind: results, conclusions or other."""
    out = []
    for i, paragraph in enumerate(article.paragraphs):
        label = labels[i] if i < len(labels) else ""
        title = " ".join(paragraph.path) or paragraph.section
        kind = (
            "results"
            if label == "results" or _RESULTS.search(title)
            else "conclusions"
            if label == "conclusions" or _CONCLUSIONS.search(title)
            else "other"
        )
        out += [(s, kind) for s in split_sentences(paragraph.text)]
    return out


def align(sentence: str, body: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Return the two body sentences sharing the most content words with one."""
    said = terms(sentence).words
    scored = sorted(
        ((len(terms(s).words & said), i) for i, (s, _) in enumerate(body)),
        reverse=True,
    )
    return [body[i] for shared, i in scored[:2] if shared >= 2]


def score(record: dict[str, Any], article: Article) -> dict[str, Any]:
    """Return one abstract's figures."""
    abstract = record["abstract"]
    result = record.get("result") or {}
    sentences = sentences_of(abstract)
    body = article_sentences(article, list(result.get("labels") or []))
    numbers = ArticleNumbers.of(article.body)
    result_number = conclusion = False
    flips = 0
    for sentence in sentences:
        matched = align(sentence, body)
        kinds = {kind for _, kind in matched}
        stated = [
            n
            for n in _NUMBER.findall(sentence)
            if not _YEAR.match(n) and not numbers.unsupported(n)
        ]
        result_number |= "results" in kinds and bool(stated)
        conclusion |= "conclusions" in kinds
        if matched:
            conflict = claim_conflict(sentence, " ".join(s for s, _ in matched))
            flips += conflict is not None and conflict.verdict == "contradicted"
    counts = result.get("sentence_counts") or record.get("sentence_counts")
    total = sum(counts.values()) if counts else 0
    # Held back to fit the asked length or the methods' share: no sign of an
    # unfaithful sentence, so not counted as dropped.
    held = sum(
        s.get("status") == "dropped" and str(s.get("reason", "")).startswith(HELD_BACK)
        for s in record.get("sentences") or []
    )
    stats = novelty_stats(article.body, abstract) | fragment_stats(
        article.body, abstract
    )
    return {
        "sentences": len(sentences),
        "certified": counts.get("certified", 0) / total if total else None,
        "repaired": counts.get("repaired", 0) / total if total else None,
        "dropped": (counts.get("dropped", 0) - held) / total if total else None,
        "held": held / total if total else None,
        "result_number": result_number,
        "conclusion": conclusion,
        "flips": flips,
        "novelty": stats["trigram_novelty"],
        "density": stats["density"],
        "rougeL": rouge_l(abstract, article.reference or ""),
        "seconds": record.get("seconds", float("nan")),
    }


async def generate(
    articles: list[tuple[Path, Article]],
    out: Path,
    model: str,
    options: AbstractOptions,
) -> None:
    """Write each article's abstract as JSON in ``out``; skip those already there."""
    settings = Settings(db=out / "bench.sqlite", llm=LLMSettings(cache=False))
    settings = settings.with_overrides(model=model)
    async with open_store(settings) as store:
        llm = make_llm(settings.model, settings, store)
        for path, article in articles:
            target = out / file_name(article)
            if target.exists():
                continue
            started = time.perf_counter()
            result = await run_abstract(store, llm, article, options)
            seconds = time.perf_counter() - started
            dumped = result.model_dump(mode="json")
            record = {
                "file": str(path),
                "source": article.source,
                "title": article.title,
                "abstract": result.abstract,
                "reference": article.reference,
                "sentences": dumped.get("sentences"),
                "sentence_counts": dumped.get("sentence_counts"),
                "seconds": round(seconds, 1),
                "result": dumped,
            }
            target.write_text(
                json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8"
            )
            print(f"{target.name}: {seconds:.0f} s", flush=True)


def recertified(record: dict[str, Any], article: Article) -> dict[str, Any]:
    """Return a saved abstract checked against its evidence by this code."""
    from veriscribe.nodes.abstract.evidence import (
        certify,
        sentence_counts,
        shown_text,
    )

    result = record.get("result") or {}
    made = [
        s["original"]
        for s in record.get("sentences") or []
        if s.get("origin") == "model"
    ] or sentences_of(record["abstract"])
    records = certify(
        made,
        article.paragraphs,
        list(result.get("labels") or []),
        article.title,
        AbstractOptions().words,
    )
    return record | {
        "abstract": shown_text(records),
        "sentences": records,
        "sentence_counts": sentence_counts(records),
        "result": result | {"sentence_counts": sentence_counts(records)},
    }


def share(value: float | None) -> str:
    """Return a share for the table, or n/a."""
    return "n/a" if value is None else f"{value:.2f}"


def main() -> None:
    """Run the benchmark and print its table and last line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--articles", type=int, default=14)
    parser.add_argument("--pcd", type=int, default=6)
    parser.add_argument("--model", default="local")
    parser.add_argument("--copy-limit", type=int, default=None)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument(
        "--recertify",
        action="store_true",
        help="With --reuse: check the model's sentences against their evidence "
        "again with this code (for abstracts made before the check, or by an "
        "earlier version of it) and score what it shows.",
    )
    parser.add_argument(
        "--save",
        type=Path,
        help="With --recertify: write the abstracts as checked now to this folder "
        "(one JSON per article, as --out holds them), to read or score later.",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="Another --out folder (an earlier version's abstracts of the same "
        "articles): print the paired difference in ROUGE-L with its bootstrap "
        "interval.",
    )
    args = parser.parse_args()
    articles = development_articles(args.articles, args.pcd)
    args.out.mkdir(parents=True, exist_ok=True)
    options = AbstractOptions()
    if args.copy_limit is not None:
        options = options.model_copy(update={"copy_limit": args.copy_limit})
    if not args.reuse:
        asyncio.run(generate(articles, args.out, args.model, options))
    rows = []
    paired: list[tuple[float, Article]] = []
    now_then: list[tuple[float, float]] = []
    print(
        f"{'article':<34} {'sent':>4} {'cert':>5} {'rep':>5} {'drop':>5} "
        f"{'held':>5} {'num':>4} "
        f"{'concl':>5} {'flips':>5} {'novel':>6} {'dens':>5} {'rougeL':>6} {'sec':>5}"
    )
    for _, article in articles:
        target = args.out / file_name(article)
        if not target.exists():
            print(f"{target.name[:-5]:<34} missing")
            continue
        record = json.loads(target.read_text(encoding="utf-8"))
        earlier = args.against / target.name if args.against else None
        if earlier is not None and earlier.exists():
            then = json.loads(earlier.read_text(encoding="utf-8"))["abstract"]
            paired.append((rouge_l(then, article.reference or ""), article))
        if args.recertify:
            record = recertified(record, article)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / target.name).write_text(
                    json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8"
                )
        row = score(record, article)
        rows.append(row)
        if paired and paired[-1][1] is article:
            now_then.append((row["rougeL"], paired[-1][0]))
        print(
            f"{target.name[:-5][:34]:<34} {row['sentences']:>4} "
            f"{share(row['certified']):>5} {share(row['repaired']):>5} "
            f"{share(row['dropped']):>5} {share(row['held']):>5} "
            f"{'yes' if row['result_number'] else 'no':>4} "
            f"{'yes' if row['conclusion'] else 'no':>5} {row['flips']:>5} "
            f"{row['novelty']:>6.3f} {row['density']:>5.2f} {row['rougeL']:>6.3f} "
            f"{row['seconds']:>5.0f}"
        )

    def mean(key: str) -> str:
        values = [float(r[key]) for r in rows if r[key] is not None]
        return f"{statistics.fmean(values):.3f}" if values else "n/a"

    sentences = sum(r["sentences"] for r in rows)
    flips = sum(r["flips"] for r in rows) / sentences if sentences else float("nan")
    print(
        f"articles={len(rows)} sentences={mean('sentences')} "
        f"certified={mean('certified')} repaired={mean('repaired')} "
        f"dropped={mean('dropped')} held={mean('held')} "
        f"result_number={mean('result_number')} "
        f"conclusion={mean('conclusion')} flips={flips:.3f} "
        f"novelty={mean('novelty')} density={mean('density')} "
        f"rougeL={mean('rougeL')} seconds={mean('seconds')}"
    )
    if len(now_then) >= 2:
        diff = paired_bootstrap([a for a, _ in now_then], [b for _, b in now_then])
        print(
            f"against={args.against} paired={diff.n} "
            f"rougeL_then={statistics.fmean(b for _, b in now_then):.3f} "
            f"rougeL_diff={diff.mean_difference:+.3f} "
            f"ci_low={diff.ci_low:+.3f} ci_high={diff.ci_high:+.3f} p={diff.p_value:.3f}"
        )


if __name__ == "__main__":
    main()
