"""Questions in users' words: gold answer, "not found" both ways, as ``ask`` selects.

Each question of the given files (JSON lines: ``question``; ``answer``, a gold span
copied from the guideline; ``answerable``, false for a question the guidelines do not
answer; the corpus from ``corpus``, or from ``doc_id``: ``ngc-*`` is NGC, ``VADoD*``
VA/DoD, anything else cpgQA) is answered as ``ask`` answers it on the defaults with
``--wording source``: the question read in the guidelines' words
(`veriscribe.nodes.qa.asked`), the fused retriever's best 3 sections, and the sentences
chosen by `select_units` with the bundled encoder. No model is called and the checker is
the real one. Printed: gold hit (the whole gold answer's content words in the answer),
gold recall, whether the gold span was in the sections read, answerable said "not found",
unanswerable said "not found", and with ``--show`` every answer.

A line with ``question_user`` (``pairs.jsonl``) is asked twice, in the guideline's words
and in a user's: the pair counts as the same when both answers cite a sentence in common.

A line with ``direction`` (``verdicts.jsonl``) is scored by its verdict lead alone: the
lead ``ask`` shows (the first answer sentence that states a recommendation, when the
question asks for one) against the expected direction and strength.

``--asked-only`` reads only the guidelines the questions are about (faster: the bench
embeds every sentence of its corpora; ``--cache FILE`` keeps the vectors between runs);
``--no-bridge`` searches the questions as asked, without the lay terms.

Usage: ``VERISCRIBE_GUIDELINES=DIR .venv/bin/python bench/users_words.py FILE [FILE ...]
[--show] [--asked-only] [--cache FILE] [--no-bridge] [--selection semantic|scored]``
Last line: ``n=<n> gold_hit=<x> gold_recall=<x> gold_read=<x> answerable_nf=<x>
unanswerable_nf=<x> unanswerable=<n>``.
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import not_found as selection_bench  # type: ignore[import-not-found]
from not_found import (  # type: ignore[import-not-found]
    DATA,
    CachedEncoder,
    Corpus,
    cpgqa_docs,
    guideline_docs,
    read_jsonl,
)
from veriscribe.checks.verbatim import check_quote, is_compliant
from veriscribe.metrics.gold import gold_recall
from veriscribe.retrieval.minilm import minilm
from veriscribe.text.recommendations import (
    Recommendation,
    asks_for_verdict,
    label_closing,
    label_end,
    read_recommendation,
)
from veriscribe.text.sentences import quote_text

_SPACE = re.compile(r"\W+")


def corpus_of(item: dict[str, Any]) -> str:
    """Return the corpus a question is about."""
    if item.get("corpus"):
        return str(item["corpus"]).lower().replace("/", "").replace("-", "")
    doc = str(item.get("doc_id", ""))
    if doc.startswith("ngc"):
        return "ngc"
    if doc.lower().startswith("vadod"):
        return "vadod"
    return "cpgqa"


def folded(text: str) -> str:
    """Return text lower-cased with every run of non-word characters one space."""
    return _SPACE.sub(" ", text.lower()).strip()


def verdict_lead(
    question: str, units: list[str], sections: Sequence[str] = ()
) -> Recommendation | None:
    """Return the lead ``ask`` shows: the first answer sentence's recommendation.

    As ``ask`` does, the strength label that stands after the sentence in the first
    section read that holds it ("(B recommendation)") is read with it.
    """
    if not asks_for_verdict(question) or not units:
        return None
    return read_recommendation(units[0], _label(units[0], sections))


def _label(quote: str, sections: Sequence[str]) -> str:
    """Return the label ending the source the verbatim check shows for a quote."""
    for text in sections:
        result = check_quote(quote, text)
        if is_compliant(result.tier) and (around := result.context_span or result.span):
            return label_closing(
                quote_text(text, around[0], label_end(text, around[1]))
            )
    return ""


def lead_matches(lead: Recommendation, direction: str, strength: str | None) -> bool:
    """Tell whether a lead states the expected direction and strength."""
    wanted = "neither" if direction == "insufficient" else direction
    if lead.direction != wanted:
        return False
    if strength is None or direction == "insufficient":
        return True
    return (lead.strength or "").lower() == strength.lower()


async def same_sentence(
    corpus: Corpus, item: dict[str, Any], encoder: CachedEncoder | None
) -> bool:
    """Tell whether a pair's two askings cite a sentence in common (neither "not found")."""
    cited = []
    for asking in (item["question_guideline"], item["question_user"]):
        not_found, units, _ = await corpus.answer_read(asking, encoder)
        if not_found:
            return False
        cited.append({folded(unit) for unit in units})
    return bool(cited[0] & cited[1])


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--selection", default="semantic")
    parser.add_argument(
        "--cache", type=Path, default=None, help="Keep sentence vectors here."
    )
    parser.add_argument(
        "--asked-only",
        action="store_true",
        help="Read only the guidelines the questions are about (a smaller corpus).",
    )
    parser.add_argument(
        "--no-bridge", action="store_true", help="Search the question as asked."
    )
    args = parser.parse_args()
    if args.no_bridge:
        selection_bench.guideline_words = lambda question, holds=None: question
    encoder = CachedEncoder(minilm()) if args.selection == "semantic" else None
    cache = args.cache
    if encoder is not None and cache is not None and cache.exists():
        encoder.rows.update(pickle.loads(cache.read_bytes()))
    items = [item for path in args.files for item in read_jsonl(path)]
    corpora: dict[str, Corpus] = {}
    hits, recalls, read, answerable_nf, unanswerable_nf = [], [], [], [], []
    leads_right, leads_shown, leads_wrong_none = [], [], 0
    pairs_same: list[bool] = []
    for item in items:
        name = corpus_of(item)
        if name not in corpora:
            docs = (
                cpgqa_docs(read_jsonl(DATA / "cpgqa" / "passages.jsonl"))
                if name == "cpgqa"
                else guideline_docs(name)
            )
            if args.asked_only and name != "cpgqa":
                asked = {str(i.get("doc_id", "")).lower() for i in items}
                docs = [d for d in docs if d.key.split(":", 1)[0].lower() in asked]
            corpora[name] = Corpus.of(docs, encoder)
        corpus = corpora[name]
        if "question_user" in item:
            same = asyncio.run(same_sentence(corpus, item, encoder))
            pairs_same.append(same)
            if args.show:
                print(f"[pair {'same' if same else 'DIFFERENT'}] {item.get('id', '')}")
            continue
        not_found, units, keys = asyncio.run(
            corpus.answer_read(item["question"], encoder)
        )
        text = " ".join(units)
        if "direction" in item:
            read_texts = [corpus.sections[key].text for key in keys]
            lead = verdict_lead(item["question"], units, read_texts)
            expected = item["direction"]
            if expected == "none":
                leads_wrong_none += lead is not None
            elif lead is not None:
                leads_shown.append(True)
                leads_right.append(lead_matches(lead, expected, item.get("strength")))
            else:
                leads_shown.append(False)
            if args.show:
                print(f"[verdict] {item.get('id', '')} {item['question']}")
                print(
                    f"    lead: {lead and lead.lead} (expected {expected} "
                    f"{item.get('strength')})\n    answer: {text[:300]}"
                )
            # A verdict question is scored by its lead alone, not twice.
            continue
        answerable = item.get("answerable", True) and item.get("answer")
        if not answerable:
            unanswerable_nf.append(not_found)
        else:
            recall = 0.0 if not_found else gold_recall(item["answer"], text)
            recalls.append(recall)
            hits.append(recall >= 0.999)
            answerable_nf.append(not_found)
            span = folded(item["answer"])
            read.append(any(span in folded(corpus.sections[key].text) for key in keys))
        if args.show:
            mark = "NF" if not_found else ("ok" if hits and hits[-1] else "--")
            if not answerable:
                mark = "U-nf" if not_found else "U-ANSWERED"
            print(f"[{mark}] {item.get('id', '')} {item['question']}")
            print(f"    read: {', '.join(keys)}")
            if not not_found:
                print(f"    answer: {text[:400]}")
            if answerable:
                print(f"    gold: {item['answer'][:200]}")
            sys.stdout.flush()

    if encoder is not None and cache is not None:
        cache.write_bytes(pickle.dumps(encoder.rows))

    def mean(values: list[bool] | list[float]) -> str:
        return f"{statistics.mean(values):.3f}" if values else "-"

    if leads_shown or leads_wrong_none:
        print(
            f"verdict leads: shown {sum(leads_shown)} of {len(leads_shown)}, right "
            f"{sum(leads_right)} of {len(leads_right)}; shown where the quote states "
            f"none: {leads_wrong_none}"
        )
    if pairs_same:
        print(
            f"paraphrase pairs: the same sentence cited in {sum(pairs_same)} of "
            f"{len(pairs_same)} ({statistics.mean(pairs_same):.3f})"
        )
    print(
        f"n={len(items)} gold_hit={mean(hits)} gold_recall={mean(recalls)} "
        f"gold_read={mean(read)} answerable_nf={mean(answerable_nf)} "
        f"unanswerable_nf={mean(unanswerable_nf)} unanswerable={len(unanswerable_nf)}"
    )


if __name__ == "__main__":
    main()
