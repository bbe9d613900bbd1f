"""Claim support of generated abstracts: each sentence judged against its article.

A factuality figure that needs no model besides the one that writes the abstracts:
every abstract sentence (of 15 characters or more) is a claim; the article sentences
that BM25 ranks highest for it are its quotes, verbatim by construction; and the cited
QA graph's support judge (lexical lane, then a scored yes/no question) decides whether those quotes
support the claim. ``claim_support`` is the share of sentences fully supported,
``claim_support_lenient`` the share at least partially supported. A sentence for which
BM25 finds no article sentence sharing a term is not supported, without a model call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from veriscribe.checks.markers import split_sentences
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.qa.judge import decide
from veriscribe.options import QAOptions
from veriscribe.results import LENIENT_VERDICTS, UNJUDGED
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store.db import Store

__all__ = [
    "EVIDENCE",
    "SUPPORT_METRICS",
    "ArticleSupport",
    "SupportChecker",
    "support_checker",
]

EVIDENCE = 4
"""Article sentences given to the judge as the quotes for one abstract sentence."""
EVIDENCE_CHARS = 1600
"""At most this many characters of quotes per judgement (the best-ranked first)."""
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
    """Judge abstract sentences against article sentences with the QA support judge."""

    def __init__(
        self,
        llm: LLM,
        store: Store,
        *,
        samples: int = 3,
        evidence: int = EVIDENCE,
        on_sentence: Callable[[], None] | None = None,
    ) -> None:
        self._options = QAOptions(
            samples=samples, max_samples=max(samples, 9 if samples > 1 else 1)
        )
        self._llm = llm
        self._evidence = evidence
        self._samples = samples
        self._label = llm.label
        self._on_sentence = on_sentence
        # Each article split and indexed once, whichever results file it is scored for.
        self._articles: dict[str, tuple[list[str], BM25Index | None]] = {}
        self.calibration: dict[str, Any] | None = None

    def describe(self) -> dict[str, Any]:
        """Return how the support figures were made, for the report."""
        return {
            "model": self._label,
            "samples": self._samples,
            "evidence_sentences": self._evidence,
            "judge": "the cited QA support judge (lexical lane, then a scored yes/no "
            "question), source = BM25-ranked article sentences",
            "calibration": self.calibration,
        }

    async def calibrate(self, count: int = CALIBRATION_SENTENCES) -> dict[str, Any]:
        """Judge article sentences against their own articles: a check of the judge.

        Each sentence is among its own quotes, so a usable judge calls it fully
        supported; the lexical lane is bypassed here, so the check is of the model.
        The share it does is the ceiling of ``claim_support`` for this judge; far
        below 1 the figure says more about the judge than about the abstracts.
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
        self.calibration = {
            "sentences": len(verdicts),
            "fully_supported": supported,
            "share": round(supported / len(verdicts), 4) if verdicts else None,
            "verdicts": dict(Counter(v or UNJUDGED for v in verdicts)),
        }
        return self.calibration

    def evidence_for(
        self, index: BM25Index, article: Sequence[str], claim: str
    ) -> list[str]:
        """Return the best-ranked article sentences for a claim, in article order."""
        hits = index.search(claim, self._evidence)
        chosen: list[int] = []
        size = 0
        for sentence_id, _ in hits:
            text = article[int(sentence_id)]
            if chosen and size + len(text) > EVIDENCE_CHARS:
                break
            chosen.append(int(sentence_id))
            size += len(text)
        return [article[i] for i in sorted(chosen)]

    def _article(self, body: str) -> tuple[list[str], BM25Index | None]:
        if body not in self._articles:
            article = [s.text for s in split_sentences(body)]
            index = (
                BM25Index().build([str(i) for i in range(len(article))], article)
                if article
                else None
            )
            self._articles[body] = (article, index)
        return self._articles[body]

    async def check(
        self, abstract: str, body: str, *, lexical: bool = True
    ) -> ArticleSupport:
        """Judge every sentence of ``abstract`` against the article ``body``.

        ``lexical=False`` sends every sentence to the model, sentences that restate
        the article word for word included (how the judge is checked).
        """
        claims = [s.text for s in split_sentences(abstract)]
        article, index = self._article(body)
        verdicts: list[str | None] = []
        if index is None:
            return ArticleSupport(claims, ["not_supported"] * len(claims))
        for claim in claims:
            quotes = self.evidence_for(index, article, claim)
            if not quotes:
                verdicts.append("not_supported")
            else:
                found = await decide(
                    self._llm, self._options, "", claim, quotes, lexical=lexical
                )
                verdicts.append(found["verdict"])
            if self._on_sentence is not None:
                self._on_sentence()
        return ArticleSupport(claims, verdicts)


@asynccontextmanager
async def support_checker(
    settings: Settings,
    model: str | None = None,
    *,
    samples: int = 3,
    on_sentence: Callable[[], None] | None = None,
) -> AsyncIterator[SupportChecker]:
    """Open the store and the model, and yield a checker that judges with them."""
    async with open_store(settings) as store:
        llm = make_llm(model or settings.model, settings, store)
        yield SupportChecker(llm, store, samples=samples, on_sentence=on_sentence)
