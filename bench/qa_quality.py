"""Cited answers on the cpgQA dev questions: constrained and free citations side by side.

For each citation mode, the first N questions of ``../shared/data/guidelines/cpgqa`` are
answered with ``ask --questions`` on the same model and retriever (BM25, k = 3) into a
fresh database, and the results are pooled with ``eval qa``. Printed per mode: claims,
citation coverage (CC), verbatim compliance (VCR), certified and supported claim rates
(CCR, SCR), verdicts, lanes of the judge, answers with no claim, and the median seconds
per question.

The corpus is ingested with the simulated model: BM25 retrieval does not read the section
summaries that ingest writes, so this costs the measured model nothing.

The last line reads ``questions=<n> constrained_cc=<x> constrained_vcr=<x>
constrained_ccr=<x> constrained_scr=<x> free_ccr=<x> median_s=<x>``.

Usage: ``.venv/bin/python bench/qa_quality.py [--limit 40] [--modes constrained,free]
[--cite-by quote] [--model local] [--db DIR]``
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

from veriscribe.nodes.qa.state import QAOptions
from veriscribe.service import corpora
from veriscribe.service import qa as qa_service
from veriscribe.service.qa_eval import eval_qa, read_results
from veriscribe.settings import Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "guidelines" / "cpgqa"


async def run_mode(
    settings: Settings, mode: str, cite_by: str, limit: int, model: str, out: Path
) -> dict[str, Any]:
    """Answer the questions in one citation mode and pool the checked answers."""
    options = QAOptions(
        retriever="bm25",
        k=3,
        citations=mode,  # type: ignore[arg-type]
        cite_by=cite_by,  # type: ignore[arg-type]
    )
    seconds: list[float] = []

    def timed(result: dict[str, Any]) -> None:
        seconds.append(float(result.get("seconds", 0.0)))
        verdicts = Counter(c.get("status") for c in result.get("claims", []))
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
    return {
        "mode": mode,
        "summary": {k: summary[k] for k in ("answered", "failed") if k in summary},
        "funnel": report["funnel"],
        "rates": report["rates"],
        "verdicts": report.get("verdicts", {}),
        "lanes": dict(lanes),
        "answers_without_claims": no_claim,
        "not_found": report.get("not_found"),
        "median_s": round(statistics.median(seconds), 1) if seconds else None,
        "seconds": [round(s, 1) for s in seconds],
    }


def show(found: dict[str, Any]) -> None:
    """Print one mode's figures."""
    f, r = found["funnel"], found["rates"]

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    print(
        f"{found['mode']:>11}: {f['claims']} claims, CC {pct(r['cc'])}, VCR "
        f"{pct(r['vcr'])}, CCR {pct(r['ccr'])}, SCR {pct(r['scr'])}, "
        f"verdicts {found['verdicts']}, lanes {found['lanes']}, "
        f"answers without a claim {found['answers_without_claims']}, "
        f"not found {found['not_found']}, median {found['median_s']} s/question"
    )


async def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--modes", default="constrained,free")
    parser.add_argument("--cite-by", default="quote", choices=("quote", "id"))
    parser.add_argument("--model", default="local")
    parser.add_argument("--db", type=Path, default=None, help="Keep results here.")
    args = parser.parse_args()
    work = args.db or Path(tempfile.mkdtemp(prefix="qa-quality-"))
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings(db=work / "bench.sqlite")
    await corpora.add_corpus(
        settings, "cpgqa", [DATA / "passages.jsonl"], model="sim"
    )
    found = {}
    for mode in args.modes.split(","):
        out = work / f"{mode}-{args.cite_by}.jsonl"
        found[mode] = await run_mode(
            settings, mode, args.cite_by, args.limit, args.model, out
        )
        show(found[mode])
    (work / "report.json").write_text(json.dumps(found, indent=1))
    c = found.get("constrained", {}).get("rates", {})
    free = found.get("free", {}).get("rates", {})
    medians = [m["median_s"] for m in found.values() if m["median_s"] is not None]
    print(f"results in {work}")
    print(
        f"questions={args.limit} constrained_cc={c.get('cc')} "
        f"constrained_vcr={c.get('vcr')} constrained_ccr={c.get('ccr')} "
        f"constrained_scr={c.get('scr')} free_ccr={free.get('ccr')} "
        f"median_s={medians[0] if medians else None}"
    )


if __name__ == "__main__":
    asyncio.run(main())
