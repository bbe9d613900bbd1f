"""Claim support of generated abstracts: each sentence judged against its article.

A factuality figure that needs no model besides the one that writes the abstracts:
every abstract sentence (of 15 characters or more) is a claim; the article sentences
that BM25 ranks highest for it (and, for a number they do not state, the first article
sentence that does) are its evidence, verbatim by construction; and a faithfulness
judge (:mod:`veriscribe.eval.abstract_judge`) decides whether that evidence supports
the claim. By default it is the judge with the best accuracy measured on held-out
abstract pairs among those whose model is installed (:func:`choose_judge`); the report
names it and gives that accuracy. ``claim_support`` is the share of sentences fully
supported, ``claim_support_lenient`` the share at least partially supported. A
sentence for which BM25 finds no article sentence sharing a term is not supported,
without a model call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from veriscribe.eval.abstract_judge import (
    AbstractJudgeMethod,
    MeasuredJudge,
    available_models,
    choose_judge,
    measured_for,
    rule,
)
from veriscribe.eval.reports import Calibration, SupportDescription
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.metrics.abstract_pairs import (
    EVIDENCE,
    evidence_for,
    sentence_numbers,
)
from veriscribe.results import LENIENT_VERDICTS, UNJUDGED
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store.db import Store
from veriscribe.text.numbers import ArticleNumbers
from veriscribe.text.sentences import claim_sentences

__all__ = [
    "EVIDENCE",
    "SUPPORT_METRICS",
    "ArticleSupport",
    "SupportChecker",
    "support_checker",
]

SUPPORT_METRICS = ("claim_support", "claim_support_lenient")
CALIBRATION_SENTENCES = 5
"""Article sentences judged against their own article to check the judge."""
CALIBRATION_FLOOR = 0.8
"""Below this share of self-supported sentences, the support figures are flagged."""


@dataclass(frozen=True)
class ArticleSupport:
    """The verdicts on one abstract's sentences."""

    sentences: list[str]
    verdicts: list[str | None]
    """One per sentence; None when the judge gave no usable verdict."""

    def scores(self) -> dict[str, float]:
        """Return the strict and lenient support shares (NaN for no sentences)."""
        if not self.sentences:
            return {name: float("nan") for name in SUPPORT_METRICS}
        total = len(self.sentences)
        return {
            "claim_support": sum(v == "fully_supported" for v in self.verdicts) / total,
            "claim_support_lenient": sum(v in LENIENT_VERDICTS for v in self.verdicts)
            / total,
        }

    def counts(self) -> dict[str, int]:
        """Return how many sentences got each verdict."""
        return dict(Counter(v or UNJUDGED for v in self.verdicts))


class SupportChecker:
    """Judge abstract sentences against article sentences with a faithfulness judge."""

    def __init__(
        self,
        llm: LLM | None,
        store: Store,
        *,
        samples: int = 3,
        evidence: int = EVIDENCE,
        judge: MeasuredJudge | None = None,
        on_sentence: Callable[[], None] | None = None,
    ) -> None:
        if judge is None:
            if llm is None:
                raise ValueError("a checker without a judge needs a model")
            judge = measured_for("scored", llm.label)
        if judge.method != "checks" and llm is None:
            raise ValueError(f"the {judge.method} judge needs a model")
        self._judge = judge
        self._llm = llm
        self._evidence = evidence
        self._samples = samples
        self._on_sentence = on_sentence
        # Each article split and indexed once, whichever results file it is scored for.
        self._articles: dict[
            str, tuple[list[str], BM25Index | None, list[ArticleNumbers]]
        ] = {}
        self.calibration: Calibration | None = None

    def describe(self) -> SupportDescription:
        """Return how the support figures were made, for the report."""
        judge = self._judge
        return SupportDescription(
            judge=judge.name,
            judge_method=judge.method,
            model=self._llm.label if self._llm is not None else None,
            judge_accuracy=judge.accuracy,
            judge_accuracy_pairs=judge.pairs,
            judge_measured_by="veriscribe eval judge --abstract-pairs (supported "
            "or not, on pairs of held-out dev articles)",
            samples=self._samples,
            evidence_sentences=self._evidence,
            calibration=self.calibration,
        )

    async def calibrate(self, count: int = CALIBRATION_SENTENCES) -> Calibration:
        """Judge article sentences against their own articles: a check of the judge.

        Each sentence is among its own quotes, so a usable judge calls it fully
        supported; the scored judge's lexical lane is bypassed here, so the check is
        of the model. The share it does is the ceiling of ``claim_support`` for this
        judge; far below 1 the figure says more about the judge than about the
        abstracts.
        """
        sentences = []
        for body in list(self._articles)[:count]:
            found = [s for s in self._article(body)[0] if len(s) >= 60]
            if found:
                sentences.append((found[len(found) // 2], body))
        sentences = sentences[:count]
        verdicts = [
            (await self.check(sentence, body, lexical=False)).verdicts[0]
            for sentence, body in sentences
        ]
        supported = sum(v == "fully_supported" for v in verdicts)
        self.calibration = Calibration(
            sentences=len(verdicts),
            fully_supported=supported,
            share=round(supported / len(verdicts), 4) if verdicts else None,
            verdicts=dict(Counter(v or UNJUDGED for v in verdicts)),
        )
        return self.calibration

    def _article(
        self, body: str
    ) -> tuple[list[str], BM25Index | None, list[ArticleNumbers]]:
        if body not in self._articles:
            article = [s.text for s in claim_sentences(body)]
            index = (
                BM25Index().build([str(i) for i in range(len(article))], article)
                if article
                else None
            )
            self._articles[body] = (article, index, sentence_numbers(article))
        return self._articles[body]

    async def check(
        self, abstract: str, body: str, *, lexical: bool = True
    ) -> ArticleSupport:
        """Judge every sentence of ``abstract`` against the article ``body``.

        ``lexical=False`` sends every sentence to the model, sentences that restate
        the article word for word included (how the judge is checked).
        """
        claims = [s.text for s in claim_sentences(abstract)]
        article, index, numbers = self._article(body)
        verdicts: list[str | None] = []
        if index is None:
            return ArticleSupport(claims, ["not_supported"] * len(claims))
        for claim in claims:
            quotes = evidence_for(
                index, article, claim, k=self._evidence, numbers=numbers
            )
            if not quotes:
                verdicts.append("not_supported")
            else:
                found = await rule(
                    self._llm,
                    self._judge,
                    claim,
                    quotes,
                    samples=self._samples,
                    lexical=lexical,
                )
                verdicts.append(found["verdict"])
            if self._on_sentence is not None:
                self._on_sentence()
        return ArticleSupport(claims, verdicts)


@asynccontextmanager
async def support_checker(
    settings: Settings,
    *,
    samples: int = 3,
    judge: AbstractJudgeMethod | None = None,
    on_sentence: Callable[[], None] | None = None,
) -> AsyncIterator[SupportChecker]:
    """Open the store and the judge's model, and yield a checker that judges with them.

    ``judge`` None: the measured judge with the best held-out accuracy whose model is
    installed (the settings' model is not used); otherwise that judge on the
    settings' model.
    """
    async with open_store(settings) as store:
        if judge is None:
            chosen = choose_judge(available_models())
            spec = chosen.spec
        else:
            spec = settings.model
            chosen = None
        llm = (
            make_llm(spec, settings, store)
            if spec is not None and judge != "checks"
            else None
        )
        if chosen is None:
            assert judge is not None
            chosen = measured_for(judge, llm.label if llm is not None else None)
        yield SupportChecker(
            llm, store, samples=samples, judge=chosen, on_sentence=on_sentence
        )
