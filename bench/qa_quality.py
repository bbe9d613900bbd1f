"""Cited answers on the cpgQA dev questions: constrained and free citations side by side.

For each configuration (``citations/cite_by/wording[/select]``, e.g.
``constrained/quote/source/model``; the selection is ``scored`` unless named),
the first N questions of ``../shared/data/guidelines/cpgqa`` are
answered with ``ask --questions`` on the same model and retriever (BM25, k = 3) into a
fresh database, and the results are pooled with ``eval qa``. Printed per mode: claims,
citation coverage (CC), verbatim compliance (VCR), certified and supported claim rates
(CCR, SCR), verdicts, lanes of the judge, answers with no claim, and the median seconds
per question, and how much of the gold answer span the answer holds (cpgQA answers are
spans of one passage: ``gold_recall`` is the mean share of the span's words found in the
answer, ``gold_hit`` the share of answers holding all of them).

The corpus is ingested with the simulated model: BM25 retrieval does not read the section
summaries that ingest writes, so this costs the measured model nothing.

The last line reads ``questions=<n> constrained_cc=<x> constrained_vcr=<x>
constrained_ccr=<x> constrained_scr=<x> free_ccr=<x> median_s=<x>`` for the first
constrained and the first free configuration.

Usage: ``.venv/bin/python bench/qa_quality.py [--limit 40]
[--configs constrained/id/source,constrained/quote/own,free/quote/own] [--model local]
[--db DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from veriscribe.eval.qa import eval_qa, read_results
from veriscribe.nodes.qa.answer import plain_answer
from veriscribe.options import QAOptions
from veriscribe.results import QuestionSetAnswer
from veriscribe.service import corpora
from veriscribe.service import qa as qa_service
from veriscribe.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "guidelines" / "cpgqa"


_WORD = re.compile(r"[a-z0-9]+")


def gold_recall(gold: str, answer: str) -> float:
    """Return the share of the gold span's words that the answer holds."""
    wanted = _WORD.findall(gold.lower())
    have = set(_WORD.findall(answer.lower()))
    return sum(w in have for w in wanted) / len(wanted) if wanted else 0.0


async def run_mode(
    settings: Settings, config: str, limit: int, model: str, out: Path
) -> dict[str, Any]:
    """Answer the questions in one configuration and pool the checked answers."""
    citations, cite_by, wording, *rest = config.split("/")
    options = QAOptions(
        retriever="bm25",
        k=3,
        citations=citations,  # type: ignore[arg-type]
        cite_by=cite_by,  # type: ignore[arg-type]
        wording=wording,  # type: ignore[arg-type]
        select=rest[0] if rest else "scored",  # type: ignore[arg-type]
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
        settings,
        "cpgqa",
        DATA / "questions.jsonl",
        out,
        options=options,
        model=model,
        limit=limit,
        on_answer=lambda result, *_: timed(result),
    )
    report = eval_qa(out)
    results = read_results(out)
    lanes = Counter(
        c.get("judged_by") or "none" for r in results for c in r.get("claims", [])
    )
    no_claim = sum(1 for r in results if not r.get("claims") and not r.get("not_found"))
    gold = {
        json.loads(line)["question"]: json.loads(line)["answer"]
        for line in (DATA / "questions.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    }
    recalls = [
        gold_recall(gold.get(r["question"], ""), plain_answer(r.get("answer", "")))
        for r in results
    ]
    return {
        "mode": mode,
        "summary": summary.model_dump(mode="json", include={"answered", "failed"}),
        "funnel": report["funnel"],
        "rates": report["rates"],
        "verdicts": report.get("verdicts", {}),
        "lanes": dict(lanes),
        "answers_without_claims": no_claim,
        "not_found": report.get("not_found"),
        "gold_recall": round(statistics.mean(recalls), 3) if recalls else None,
        "gold_hit": round(sum(r == 1 for r in recalls) / len(recalls), 3)
        if recalls
        else None,
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
        f"gold hit {found['gold_hit']}, median {found['median_s']} s/question"
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
    args = parser.parse_args()
    work = args.db or Path(tempfile.mkdtemp(prefix="qa-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings(db=work / "bench.sqlite")
    await corpora.add_corpus(settings, "cpgqa", [DATA / "passages.jsonl"], model="sim")
    found = {}
    for config in args.configs.split(","):
        out = work / f"{config.replace('/', '-')}.jsonl"
        found[config] = await run_mode(settings, config, args.limit, args.model, out)
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
        f"median_s={medians[0] if medians else None}"
    )


if __name__ == "__main__":
    asyncio.run(main())
