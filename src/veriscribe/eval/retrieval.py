"""`veriscribe eval retrieval`: hit rate at k of the section retrievers on a question set."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from veriscribe.documents.questions import is_hit, read_questions
from veriscribe.eval.reports import RetrievalReport, RetrieverScores
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.qa.retrieve import choose_sections
from veriscribe.nodes.qa.state import QADeps, QAState
from veriscribe.options import QAOptions, Retriever
from veriscribe.service.common import open_store
from veriscribe.service.corpora import require_corpus
from veriscribe.settings import Settings

DEFAULT_KS = (1, 3, 5, 10)


def hit_rates(
    ranked: Sequence[Sequence[str]], gold: Sequence[str | None], ks: Sequence[int]
) -> dict[str, float]:
    """Return ``hit_rate_at_k`` for each k: the share of questions whose gold is in the top k."""
    return {
        f"hit_rate_at_{k}": sum(
            any(is_hit(g, key) for key in keys[:k])
            for keys, g in zip(ranked, gold, strict=True)
        )
        / len(gold)
        for k in ks
    }


async def eval_retrieval(
    settings: Settings,
    corpus: str,
    questions_path: Path,
    *,
    retrievers: Sequence[Retriever] = ("fused",),
    ks: Sequence[int] = DEFAULT_KS,
    limit: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> RetrievalReport:
    """Measure hit rate at k and mean sections returned for each retriever."""
    questions = read_questions(questions_path, limit, require_gold=True)
    top = max(ks)
    report = RetrievalReport(
        corpus=corpus, questions=len(questions), ks=list(ks), retrievers={}
    )
    async with open_store(settings) as store:
        await require_corpus(store, corpus)
        llm = make_llm(settings.model, settings, store) if "llm" in retrievers else None
        for method in retrievers:
            # The model picks at most `top` sections, in its order of preference.
            deps = QADeps(
                store=store, llm=llm, options=QAOptions(retriever=method, k=top)
            )
            started = time.perf_counter()
            ranked, fallbacks = [], 0
            for done, item in enumerate(questions, 1):
                state = cast(QAState, {"corpus": corpus, "question": item["question"]})
                update = await choose_sections(state, deps)
                ranked.append(list(update["read_set"]))
                fallbacks += update["retrieval"]["method"] != method
                if on_progress is not None:
                    on_progress(method, done, len(questions))
            report.retrievers[method] = RetrieverScores(
                hit_rates=hit_rates(ranked, [q["gold"] for q in questions], ks),
                mean_sections=sum(map(len, ranked)) / len(ranked),
                fallbacks_to_bm25=fallbacks,
                seconds=round(time.perf_counter() - started, 2),
            )
        if llm is not None:
            report.model = llm.label
    return report
