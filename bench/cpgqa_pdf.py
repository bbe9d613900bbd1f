"""The cpgQA passages as a PDF guideline against the same passages as JSON lines.

The dev passages of ``../shared/data/guidelines/cpgqa`` are rendered as one guideline,
a heading per passage in two columns, and
printed to PDF by headless Chromium (``scripts/render_documents.py`` makes the page;
Chromium's own header and footer lines, date, title, address and ``n/N``, are its
running header and page numbers).
Both the PDF and ``passages.jsonl`` are added as corpora of one database (summaries
by ``--model``), and the first N questions are answered on each with ``ask
--questions`` and the default options. The PDF's sections are matched to the passages
in order (a heading per passage), so the questions asked of the PDF name its section.

Printed: the share of claims whose cited sentences are the same on both corpora (each
claim of one answer paired with an unpaired claim of the other citing the same
sentences, spaces folded; a pair counts once, and every claim left unpaired on either
side counts against), the shown claims that are not certified, the citations (of the
answer and of its claims) without a page on the PDF corpus, and ``eval retrieval``
hit@5 of BM25 on each corpus.

``tests/fixtures/cpgqa/cpgqa-2col.pdf`` is :func:`render` of the first 12 passages.

The last line reads ``questions= same_cited= claims_jsonl= claims_pdf=
not_certified_pdf= citations_pdf= without_page= hit5_jsonl= hit5_pdf=``.

Usage: ``.venv/bin/python bench/cpgqa_pdf.py [--limit 20] [--model local] [--db DIR]
[--only jsonl|pdf]``; with ``--db`` a rerun reuses the rendered PDF, the corpora and the
answers kept there, and ``--only`` runs one corpus (two processes can share the work;
the comparison is printed once both corpora are answered). Answers are also appended,
one by one, to ``answers-<corpus>.partial.jsonl``: ``--partial`` compares the questions
answered on both so far.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from veriscribe.documents.guidelines import GuidelineDoc, read_guideline_path
from veriscribe.eval.retrieval import eval_retrieval
from veriscribe.results import QuestionSetAnswer
from veriscribe.service import corpora
from veriscribe.service import qa as qa_service
from veriscribe.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "guidelines" / "cpgqa"
TITLE = "Opioid Therapy for Chronic Pain: Guideline and Taper Decision Tool (cpgQA)"
sys.path.insert(0, str(ROOT / "scripts"))

import render_documents  # noqa: E402


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file."""
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def guideline_html(passages: Sequence[dict[str, Any]]) -> str:
    """Write the passages as a two-column printable guideline, a heading per passage."""
    body = [f"<h1>{html.escape(TITLE)}</h1>"]
    for passage in passages:
        body.append(f"<h2>{html.escape(passage['title'])}</h2>")
        body.append(f"<p>{html.escape(passage['text'])}</p>")
    return render_documents.flowing_page("\n".join(body), TITLE, columns=2)


def render(passages: Sequence[dict[str, Any]], out: Path) -> Path:
    """Render the guideline to ``out/cpgqa.html`` and print it to ``out/cpgqa.pdf``."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("headless Chromium (the chromium package) is needed")
    page = out / "cpgqa.html"
    page.write_text(guideline_html(passages), encoding="utf-8")
    pdf = out / "cpgqa.pdf"
    render_documents.print_pdf(chromium, page, pdf)
    return pdf


def passage_sections(
    doc: GuidelineDoc, passages: Sequence[dict[str, Any]]
) -> dict[str, str]:
    """Match each passage to the PDF section of its heading, in order.

    The sections that hold text are taken in reading order and paired with the
    passages; a pair whose titles differ is left out (a heading the reader missed).
    """
    wanted = {p["title"] for p in passages}
    found = [s for s in doc.sections if s.title in wanted and s.text]
    matched: dict[str, str] = {}
    position = 0
    for passage in passages:
        while position < len(found) and found[position].title != passage["title"]:
            position += 1
        if position == len(found):
            break
        matched[passage["passage_id"]] = found[position].section_id
        position += 1
    return matched


def pdf_questions(
    questions: Iterable[dict[str, Any]], matched: dict[str, str], doc_id: str
) -> list[dict[str, Any]]:
    """Return the questions with the PDF section of their passage as the gold."""
    return [
        {**q, "doc_id": doc_id, "section_id": matched.get(q["passage_id"], "missing")}
        for q in questions
    ]


def cited_sentences(claim: dict[str, Any], spaces: str = " ") -> tuple[str, ...]:
    """Return the sentences a claim cites (their quotes, spaces folded), sorted."""
    return tuple(sorted(spaces.join(c["quote"].split()) for c in claim["citations"]))


def same_claims(
    jsonl_answers: Sequence[dict[str, Any]],
    pdf_answers: Sequence[dict[str, Any]],
    spaces: str = " ",
) -> tuple[int, int, list[str]]:
    """Return the claims paired, the claims in all (a pair once), the questions differing."""
    by_id = {str(a["id"]): a for a in pdf_answers}
    same = total = 0
    differing = []
    for answer in jsonl_answers:
        other = by_id.get(str(answer["id"]), {"claims": []})
        left = [cited_sentences(c, spaces) for c in answer["claims"]]
        right = [cited_sentences(c, spaces) for c in other["claims"]]
        paired = 0
        for cited in left:
            if cited in right:
                right.remove(cited)
                paired += 1
        same += paired
        total += len(left) + len(right)
        if right or paired < len(left):
            differing.append(str(answer["id"]))
    return same, total, differing


def compare(
    jsonl_answers: Sequence[dict[str, Any]], pdf_answers: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """Compare the claims and citations of the answers on the two corpora."""
    same, total, differing = same_claims(jsonl_answers, pdf_answers)
    # A PDF line end may add a space ("death. [58]") or drop none: the same sentence.
    spaceless, _, _ = same_claims(jsonl_answers, pdf_answers, spaces="")
    claims_pdf = [c for a in pdf_answers for c in a["claims"]]
    citations_pdf = [c for a in pdf_answers for c in a["citations"]] + [
        c for claim in claims_pdf for c in claim["citations"]
    ]
    return {
        "questions": len(jsonl_answers),
        "same_cited": round(same / total, 4) if total else None,
        "claims_same": same,
        "same_cited_ignoring_spaces": round(spaceless / total, 4) if total else None,
        "claims_compared": total,
        "questions_differing": differing,
        "claims_jsonl": sum(len(a["claims"]) for a in jsonl_answers),
        "claims_pdf": len(claims_pdf),
        "not_certified_jsonl": sum(
            c["status"] != "certified" for a in jsonl_answers for c in a["claims"]
        ),
        "not_certified_pdf": sum(c["status"] != "certified" for c in claims_pdf),
        "citations_pdf": len(citations_pdf),
        "without_page": sum(c.get("page") is None for c in citations_pdf),
        "not_found": [
            sum(bool(a["not_found"]) for a in answers)
            for answers in (jsonl_answers, pdf_answers)
        ],
    }


def prepare(args: argparse.Namespace) -> dict[str, tuple[str, Path, Path]]:
    """Render the PDF (unless kept) and write the questions that name its sections."""
    work: Path = args.db
    passages = read_lines(args.data / "passages.jsonl")
    pdf = work / "cpgqa.pdf"
    if not pdf.exists():
        render(passages, work)
    (doc,) = read_guideline_path(pdf)
    matched = passage_sections(doc, passages)
    print(
        f"{pdf}: {len(doc.sections)} sections, {len(matched)}/{len(passages)} "
        f"passages matched to a heading",
        flush=True,
    )
    questions = read_lines(args.data / "questions.jsonl")[: args.limit]
    asked = work / "questions-pdf.jsonl"
    asked.write_text(
        "".join(
            json.dumps(q) + "\n" for q in pdf_questions(questions, matched, doc.doc_id)
        ),
        encoding="utf-8",
    )
    return {
        "jsonl": (
            "cpgqa-jsonl",
            args.data / "passages.jsonl",
            args.data / "questions.jsonl",
        ),
        "pdf": ("cpgqa-pdf", pdf, asked),
    }


def keep_answers(kind: str, partial: Path) -> qa_service.OnAnswer:
    """Append each answer to ``partial`` as it comes, and show the progress."""
    partial.write_text("")

    def answered(line: QuestionSetAnswer, done: int, total: int) -> None:
        with partial.open("a", encoding="utf-8") as out:
            out.write(line.model_dump_json() + "\n")
        statuses = [c.status for c in line.claims]
        print(
            f"  {kind} {done}/{total} id {line.id}: {statuses}, "
            f"{line.seconds:.0f} s{' (reused)' if line.reused else ''}",
            flush=True,
        )

    return answered


async def answer_all(
    args: argparse.Namespace, sources: dict[str, tuple[str, Path, Path]]
) -> dict[str, float]:
    """Add each corpus, answer the questions on it, and measure BM25 hit@5."""
    settings = Settings(db=args.db / "bench.sqlite")
    hit5: dict[str, float] = {}
    for kind, (corpus, source, question_file) in sources.items():
        if args.only not in (None, kind):
            continue
        added = await corpora.add_corpus(
            settings.with_overrides(model=args.model), corpus, [source]
        )
        print(f"{corpus}: {added.sections} sections, {added.summaries}", flush=True)
        report = await eval_retrieval(
            settings, corpus, question_file, retrievers=("bm25",), limit=args.limit
        )
        hit5[kind] = report.retrievers["bm25"].hit_rates["hit_rate_at_5"]
        (args.db / f"hit5-{kind}.json").write_text(json.dumps(hit5[kind]))
        print(f"{corpus}: bm25 hit@5 {hit5[kind]}", flush=True)
        await qa_service.ask_questions(
            settings.with_overrides(model=args.model),
            corpus,
            question_file,
            args.db / f"answers-{kind}.jsonl",
            limit=args.limit,
            on_answer=keep_answers(kind, args.db / f"answers-{kind}.partial.jsonl"),
        )
    return hit5


def main() -> None:
    """Run the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--model", default="local")
    parser.add_argument("--db", type=Path, default=None, help="Keep everything here.")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--only", choices=("jsonl", "pdf"), default=None)
    parser.add_argument(
        "--partial",
        action="store_true",
        help="Only compare the questions answered on both corpora so far.",
    )
    args = parser.parse_args()
    args.db = args.db or Path(tempfile.mkdtemp(prefix="cpgqa-pdf-"))
    args.db.mkdir(parents=True, exist_ok=True)
    kinds = ("jsonl", "pdf")
    suffix = ".partial.jsonl" if args.partial else ".jsonl"
    if not args.partial:
        asyncio.run(answer_all(args, prepare(args)))
        if not all((args.db / f"answers-{kind}.jsonl").exists() for kind in kinds):
            print(f"answers in {args.db}; run the other corpus to compare")
            return
    hit5 = {k: json.loads((args.db / f"hit5-{k}.json").read_text()) for k in kinds}
    answers = {k: read_lines(args.db / f"answers-{k}{suffix}") for k in kinds}
    both = {str(a["id"]) for a in answers["jsonl"]} & {
        str(a["id"]) for a in answers["pdf"]
    }
    found = compare(
        [a for a in answers["jsonl"] if str(a["id"]) in both],
        [a for a in answers["pdf"] if str(a["id"]) in both],
    )
    found["hit5_jsonl"], found["hit5_pdf"] = hit5["jsonl"], hit5["pdf"]
    found["work"] = str(args.db)
    print(json.dumps(found, indent=1))
    print(
        " ".join(
            f"{key}={found[key]}"
            for key in (
                "questions",
                "same_cited",
                "claims_jsonl",
                "claims_pdf",
                "not_certified_pdf",
                "citations_pdf",
                "without_page",
                "hit5_jsonl",
                "hit5_pdf",
            )
        )
    )


if __name__ == "__main__":
    main()
