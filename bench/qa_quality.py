"""Cited answers on the cpgQA dev questions: constrained and free citations side by side.

For each configuration (``citations/cite_by/wording[/select]``, e.g.
``constrained/quote/source/model``; the selection is the default (``semantic``) unless named),
the first N questions of ``../shared/data/guidelines/cpgqa`` (or of ``--data DIR``,
a directory with ``passages.jsonl`` and ``questions.jsonl`` in the cpgQA layout, such
as ``scripts/hold_out.py`` writes) are answered with ``ask --questions`` on the same
model and retriever (the default, k = 3) into a fresh database, and the results are pooled
with ``eval qa``. Printed per mode: claims, citation coverage (CC), verbatim compliance
(VCR), certified and supported claim rates (CCR, SCR), verdicts, lanes of the judge,
answers with no claim, the share answered "not found", and the median seconds per
question; and, from ``eval qa``'s scores against the gold answers (cpgQA answers are
spans of one passage; see ``veriscribe.metrics.gold``), ``gold_recall`` (the mean share
of the gold answer's content words found in the answer), ``gold_hit`` (the share of
answers holding all of them) and the median words per answer given; with unanswerable
questions in the set, not-found precision and recall.

The corpus is ingested with the simulated model: the default retriever does not read the
section summaries that ingest writes, so this costs the measured model nothing.

The last line reads ``questions=<n> constrained_cc=<x> constrained_vcr=<x>
constrained_ccr=<x> constrained_scr=<x> free_ccr=<x> median_s=<x> gold_recall=<x>
gold_hit=<x> answer_words=<x> not_found_rate=<x>`` for the first constrained and the
first free configuration (the gold figures of the first constrained one).

Usage: ``.venv/bin/python bench/qa_quality.py [--limit 40]
[--configs constrained/id/source,constrained/quote/own,free/quote/own] [--model local]
[--data DIR] [--db DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from veriscribe.eval.qa import eval_qa, read_results
from veriscribe.options import QAOptions
from veriscribe.results import QuestionSetAnswer
from veriscribe.service import corpora
from veriscribe.service import qa as qa_service
from veriscribe.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "guidelines" / "cpgqa"


async def run_mode(
    settings: Settings,
    config: str,
    limit: int,
    model: str,
    out: Path,
    data: Path = DATA,
    corpus: str = "cpgqa",
) -> dict[str, Any]:
    """Answer the questions in one configuration and pool the checked answers."""
    citations, cite_by, wording, *rest = config.split("/")
    options = QAOptions(
        k=3,
        citations=citations,  # type: ignore[arg-type]
        cite_by=cite_by,  # type: ignore[arg-type]
        wording=wording,  # type: ignore[arg-type]
        select=rest[0] if rest else QAOptions().select,  # type: ignore[arg-type]
    )
    mode = config
    seconds: list[float] = []

    def timed(result: QuestionSetAnswer) -> None:
        seconds.append(result.seconds)
        verdicts = Counter(c.status for c in result.claims)
        print(
            f"  {mode} {len(seconds)}/{limit}: {seconds[-1]:.0f} s, "
            f"claims {dict(verdicts)}",
            flush=True,
        )

    summary = await qa_service.ask_questions(
        settings.with_overrides(model=model),
        corpus,
        data / "questions.jsonl",
        out,
        options=options,
        limit=limit,
        on_answer=lambda result, *_: timed(result),
    )
    report = eval_qa(out).model_dump(mode="json")
    results = read_results(out)
    lanes = Counter(c.judged_by or "none" for r in results for c in r.claims)
    no_claim = sum(1 for r in results if not r.claims and not r.not_found)
    return {
        "mode": mode,
        "summary": summary.model_dump(mode="json", include={"answered", "failed"}),
        "funnel": report["funnel"],
        "rates": report["rates"],
        "verdicts": report.get("verdicts", {}),
        "lanes": dict(lanes),
        "answers_without_claims": no_claim,
        "not_found": report.get("not_found"),
        "not_found_rate": report.get("not_found_rate"),
        "not_found_scores": report.get("not_found_scores"),
        "gold_recall": report.get("gold", {}).get("gold_recall"),
        "gold_hit": report.get("gold", {}).get("gold_hit"),
        "answer_words": report["answer_words"]["median"],
        "median_s": round(statistics.median(seconds), 1) if seconds else None,
        "seconds": [round(s, 1) for s in seconds],
    }


def show(found: dict[str, Any]) -> None:
    """Print one mode's figures."""
    f, r = found["funnel"], found["rates"]

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    print(
        f"{found['mode']:>22}: {f['claims']} claims, CC {pct(r['cc'])}, VCR "
        f"{pct(r['vcr'])}, CCR {pct(r['ccr'])}, SCR {pct(r['scr'])}, "
        f"verdicts {found['verdicts']}, lanes {found['lanes']}, "
        f"answers without a claim {found['answers_without_claims']}, "
        f"not found {found['not_found']}, gold recall {found['gold_recall']}, "
        f"gold hit {found['gold_hit']}, median {found['median_s']} s/question, "
        f"not found rate {pct(found['not_found_rate'])}, "
        f"median answer words {found['answer_words']}"
        + _not_found_scores(found.get("not_found_scores"))
    )


def _not_found_scores(scores: dict[str, Any] | None) -> str:
    """Describe not-found precision and recall when the set has unanswerable questions."""
    if not scores or not scores["unanswerable"]:
        return ""
    return (
        f", not-found precision {scores['precision']} recall {scores['recall']} "
        f"({scores['unanswerable']} unanswerable), answerable wrongly not found "
        f"{scores['answerable_rate']}"
    )


async def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument(
        "--configs",
        default="constrained/id/source,constrained/quote/own,free/quote/own",
        help="Comma-separated citations/cite_by/wording triples.",
    )
    parser.add_argument("--model", default="local")
    parser.add_argument("--db", type=Path, default=None, help="Keep results here.")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help="Directory with passages.jsonl and questions.jsonl (cpgQA layout).",
    )
    args = parser.parse_args()
    work = args.db or Path(tempfile.mkdtemp(prefix="qa-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings(db=work / "bench.sqlite")
    # A corpus per data directory: a kept database never mixes two passage sets.
    corpus = "cpgqa" if args.data == DATA else f"bench-{args.data.resolve().name}"
    await corpora.add_corpus(
        settings.with_overrides(model="sim"), corpus, [args.data / "passages.jsonl"]
    )
    found = {}
    for config in args.configs.split(","):
        out = work / f"{config.replace('/', '-')}.jsonl"
        found[config] = await run_mode(
            settings, config, args.limit, args.model, out, args.data, corpus
        )
        show(found[config])
    (work / "report.json").write_text(json.dumps(found, indent=1))
    first = {
        mode: next((v for k, v in found.items() if k.startswith(mode)), {})
        for mode in ("constrained", "free")
    }
    c = first["constrained"].get("rates", {})
    free = first["free"].get("rates", {})
    medians = [first["constrained"].get("median_s")]
    print(f"results in {work}")
    print(
        f"questions={args.limit} constrained_cc={c.get('cc')} "
        f"constrained_vcr={c.get('vcr')} constrained_ccr={c.get('ccr')} "
        f"constrained_scr={c.get('scr')} free_ccr={free.get('ccr')} "
        f"median_s={medians[0] if medians else None} "
        f"gold_recall={first['constrained'].get('gold_recall')} "
        f"gold_hit={first['constrained'].get('gold_hit')} "
        f"answer_words={first['constrained'].get('answer_words')} "
        f"not_found_rate={first['constrained'].get('not_found_rate')}"
    )


if __name__ == "__main__":
    asyncio.run(main())
