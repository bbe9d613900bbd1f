"""Baseline abstracts that run through the same evaluation harness as the graph.

Both write JSON lines with the fields of ``veriscribe batch`` output (``id``, ``source``,
``abstract``, ``reference``, ``facets``, ``fallbacks``, ``model``, ``prompt``, ``split``,
``usage``, ``seconds``; ``error`` instead of ``abstract`` for a failed article), so that
``veriscribe eval abstracts`` scores them like any other result and ``--against`` can
ask the paper's question "does decomposition help?" of any backend.

- **Lead-k**: the first sentences of the body, in order, up to the length of the
  reference abstract in words (the first sentence is always taken, and no further one
  that would pass the length); ``k`` caps the number of sentences. Without a reference
  abstract the length is unbounded and ``k`` defaults to 3. No model.
- **Naive**: one call per article with the whole body in one prompt
  (``prompts/abstract/naive.md``). A body that does not fit the model's context is cut
  at a word boundary to the largest prefix that fits; the cut is recorded in the result
  (``truncation``, and a line in ``fallbacks``) and the prompt tells the model that the
  text ends early. Nothing is truncated silently.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from veriscribe.documents.articles import (
    Article,
    ReadFailure,
    expand_inputs,
    read_articles,
)
from veriscribe.errors import (
    ContextOverflow,
    InputError,
    StructuredOutputError,
    VeriscribeError,
)
from veriscribe.eval.reports import BaselineFailureRow, BaselineSummary
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.prompts import Prompt, load_prompt
from veriscribe.results import FacetOutcome, FailedResult, Result, Usage
from veriscribe.service.common import failed_result, open_store
from veriscribe.settings import Settings
from veriscribe.store.files import write_atomically
from veriscribe.text.replies import (
    ABSTRACT_TOKENS,
    AbstractLean,
    output_format,
)
from veriscribe.text.sentences import complete_sentences, split_sentences

__all__ = [
    "LEAD_K_WITHOUT_REFERENCE",
    "fit_to_budget",
    "lead_k",
    "naive_abstract",
    "run_lead",
    "run_naive",
]

log = logging.getLogger(__name__)

LEAD_K_WITHOUT_REFERENCE = 3
"""Sentences Lead-k takes from an article that has no reference abstract."""

TRUNCATION_NOTE = (
    "The article is too long for one prompt: only its beginning is given, and it ends "
    "mid-text.\n"
)
_WORD = re.compile(r"\S+")

OnProgress = Callable[[int, int], None]


class BaselineLine(Result):
    """A baseline's abstract of one article, in the fields of a batch's lines."""

    id: str
    source: str
    title: str
    abstract: str
    reference: str | None
    facets: list[FacetOutcome] = []
    fallbacks: list[str] = []
    model: str
    prompt: str
    split: None = None
    usage: Usage = Usage()
    seconds: float
    baseline: str


class LeadCut(Result):
    """How Lead-k cut an article's body."""

    sentences: int
    words: int
    target_words: int | None
    """The reference abstract's length in words (None: no reference)."""
    k: int | None


class Truncation(Result):
    """What of an article's body the naive prompt held."""

    truncated: bool
    budget_tokens: int
    article_tokens: int
    kept_tokens: int
    article_words: int
    kept_words: int
    article_paragraphs: int
    kept_paragraphs: int


class LeadLine(BaselineLine):
    """A Lead-k abstract, with how the body was cut."""

    lead: LeadCut


class NaiveLine(BaselineLine):
    """A single-prompt abstract, with what of the body the prompt held."""

    prompt_ids: list[str]
    truncation: Truncation
    attempts: int


class BaselineFailure(FailedResult):
    """An article a baseline could not make an abstract of."""

    baseline: str


Line = LeadLine | NaiveLine | BaselineFailure


def error_line(
    source: str,
    article_id: str,
    reason: str,
    *,
    baseline: str,
    model: str,
    prompt: str,
    article: Article | None = None,
    seconds: float = 0.0,
) -> BaselineFailure:
    """Return the result of an article that failed: ``error`` instead of ``abstract``."""
    return failed_result(
        BaselineFailure,
        source=source,
        article_id=article_id,
        reason=reason,
        model=model,
        prompt=prompt,
        split=None,
        article=article,
        seconds=seconds,
        baseline=baseline,
    )


def read_inputs(
    inputs: Sequence[str], max_bytes: int | None = None
) -> list[Article | ReadFailure]:
    """Read every article of the inputs; an unreadable file becomes a failure.

    Raises:
        InputError: An input that does not exist or a glob that matches nothing.
    """
    paths = expand_inputs([os.path.abspath(os.path.expanduser(i)) for i in inputs])
    items: list[Article | ReadFailure] = []
    for path in paths:
        try:
            items.extend(read_articles(path, max_bytes=max_bytes))
        except InputError as exc:
            items.append(ReadFailure(path.stem, str(path), exc.user_message))
    return items


def write_lines(out: Path, lines: Sequence[Line]) -> None:
    """Write results as JSON lines, replacing ``out`` only once all are written."""
    write_atomically(
        out,
        (
            json.dumps(line.model_dump(mode="json"), ensure_ascii=False) + "\n"
            for line in lines
        ),
    )


def _summary(
    baseline: str,
    model: str,
    out: Path,
    lines: Sequence[Line],
    seconds: float,
) -> BaselineSummary:
    failures = [
        BaselineFailureRow(id=line.id, source=line.source, reason=line.error)
        for line in lines
        if isinstance(line, BaselineFailure)
    ]
    return BaselineSummary(
        baseline=baseline,
        model=model,
        out=str(out),
        items=len(lines),
        written=len(lines) - len(failures),
        failed=len(failures),
        truncated=sum(
            1
            for line in lines
            if isinstance(line, NaiveLine) and line.truncation.truncated
        ),
        failures=failures,
        usage=sum((line.usage for line in lines), Usage()),
        seconds=round(seconds, 3),
    )


# -------------------------------------------------------------------------- Lead-k


def lead_k(article: Article, *, k: int | None = None) -> tuple[str, LeadCut]:
    """Return the Lead-k abstract of an article and how it was cut.

    Sentences are taken from the start of the body while the total stays within the
    reference abstract's length in words (the first sentence always), and at most
    ``k`` of them when ``k`` is given (3 when the article has no reference).

    Returns:
        The abstract and a record: ``sentences``, ``words``, ``target_words`` (the
        reference length, or None) and ``k``.
    """
    target = len(article.reference.split()) if article.reference else None
    if target is None and k is None:
        k = LEAD_K_WITHOUT_REFERENCE
    sentences: list[str] = []
    words = 0
    for paragraph in article.paragraphs:
        for sentence in split_sentences(paragraph.text):
            size = len(sentence.split())
            full = k is not None and len(sentences) >= k
            too_long = target is not None and sentences and words + size > target
            if full or too_long:
                return " ".join(sentences), _lead_record(sentences, words, target, k)
            sentences.append(sentence.strip())
            words += size
    return " ".join(sentences), _lead_record(sentences, words, target, k)


def _lead_record(
    sentences: Sequence[str], words: int, target: int | None, k: int | None
) -> LeadCut:
    return LeadCut(sentences=len(sentences), words=words, target_words=target, k=k)


def run_lead(
    inputs: Sequence[str], out: Path, *, k: int | None = None
) -> BaselineSummary:
    """Write the Lead-k abstract of every input article to ``out`` (JSON lines)."""
    if k is not None and k < 1:
        raise InputError("--sentences must be 1 or more")
    started = time.perf_counter()
    model, prompt = "baseline:lead", "lead" if k is None else f"lead-{k}"
    lines: list[Line] = []
    for item in read_inputs(inputs):
        if isinstance(item, ReadFailure):
            lines.append(
                error_line(
                    item.source,
                    item.id,
                    item.reason,
                    baseline="lead",
                    model=model,
                    prompt=prompt,
                )
            )
            continue
        begun = time.perf_counter()
        abstract, record = lead_k(item, k=k)
        if not abstract:
            lines.append(
                error_line(
                    item.source,
                    item.id,
                    "the article has no body sentence",
                    baseline="lead",
                    model=model,
                    prompt=prompt,
                    article=item,
                )
            )
            continue
        lines.append(
            LeadLine(
                **_article_fields(item),
                abstract=abstract,
                baseline="lead",
                model=model,
                prompt=prompt,
                seconds=round(time.perf_counter() - begun, 3),
                lead=record,
            )
        )
    write_lines(out, lines)
    return _summary("lead", model, out, lines, time.perf_counter() - started)


# --------------------------------------------------------------------------- naive


def _render(prompt: Prompt, text: str, truncated: bool) -> list[Any]:
    return prompt.render(
        text=text,
        truncation_note=TRUNCATION_NOTE if truncated else "",
        output_format=output_format("abstract", True),
    )


def fit_to_budget(llm: LLM, prompt: Prompt, article: Article) -> tuple[str, Truncation]:
    """Return the body text that fits the prompt budget, and the truncation record.

    The whole body is used when it fits beside ``ABSTRACT_TOKENS`` of output;
    otherwise the longest prefix ending at a word boundary that fits, found by
    binary search over the word count with the model's own token counter.

    Raises:
        ContextOverflow: Not even one word fits.
    """
    budget = llm.prompt_budget(ABSTRACT_TOKENS)
    full = article.body
    article_tokens = llm.count_tokens([HumanMessage(full)])
    ends = [m.end() for m in _WORD.finditer(full)]
    record = Truncation(
        truncated=False,
        budget_tokens=budget,
        article_tokens=article_tokens,
        kept_tokens=article_tokens,
        article_words=len(ends),
        kept_words=len(ends),
        article_paragraphs=len(article.paragraphs),
        kept_paragraphs=len(article.paragraphs),
    )
    if llm.count_tokens(_render(prompt, full, False)) <= budget:
        return full, record

    def fits(words: int) -> bool:
        return (
            llm.count_tokens(_render(prompt, full[: ends[words - 1]], True)) <= budget
        )

    low, high = 0, len(ends) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    if low == 0:
        raise ContextOverflow(
            f"the naive prompt alone exceeds the prompt budget of {budget} tokens",
            prompt_tokens=llm.count_tokens(_render(prompt, "", True)),
            budget=budget,
        )
    kept = full[: ends[low - 1]]
    return kept, record.model_copy(
        update={
            "truncated": True,
            "kept_tokens": llm.count_tokens([HumanMessage(kept)]),
            "kept_words": low,
            "kept_paragraphs": kept.count("\n\n") + 1,
        }
    )


def _article_fields(article: Article) -> dict[str, str | None]:
    return {
        "id": article.id,
        "source": article.source,
        "title": article.title,
        "reference": article.reference,
    }


async def naive_abstract(llm: LLM, article: Article) -> NaiveLine:
    """Write one article's abstract with a single prompt; return its result line.

    Transient backend faults are retried by the client (``llm.settings.retries``
    times).

    Raises:
        VeriscribeError: The call failed for good, the reply did not parse, or the
            abstract came back empty.
    """
    started = time.perf_counter()
    prompt = load_prompt("abstract", "naive")
    text, truncation = fit_to_budget(llm, prompt, article)
    messages = _render(prompt, text, truncation.truncated)
    completion = await llm.json(
        prompt.id, messages, AbstractLean, max_tokens=ABSTRACT_TOKENS
    )
    abstract = complete_sentences(completion.value.abstract)
    if not abstract:
        raise StructuredOutputError("the model returned an empty abstract")
    fallbacks = []
    if truncation.truncated:
        fallbacks.append(
            f"truncated: the body was cut to its first {truncation.kept_words} of "
            f"{truncation.article_words} words ({truncation.kept_tokens} of "
            f"{truncation.article_tokens} tokens) to fit the context"
        )
    return NaiveLine(
        **_article_fields(article),
        abstract=abstract,
        baseline="naive",
        model=llm.label,
        prompt="naive",
        seconds=round(time.perf_counter() - started, 3),
        usage=completion.usage,
        fallbacks=fallbacks,
        prompt_ids=[prompt.id],
        truncation=truncation,
        attempts=completion.attempts,
    )


async def run_naive(
    settings: Settings,
    inputs: Sequence[str],
    out: Path,
    *,
    concurrency: int | None = None,
    on_progress: OnProgress | None = None,
) -> BaselineSummary:
    """Write the naive single-prompt abstract of every input article to ``out``.

    One article that fails is recorded with its reason and never stops the others.
    Responses are cached (except for ``sim``), so running again after an interruption
    repeats no finished model call.
    """
    if concurrency is not None:
        if concurrency < 1:
            raise InputError("--concurrency must be 1 or more")
        llm_settings = settings.llm.model_copy(update={"concurrency": concurrency})
        settings = settings.model_copy(update={"llm": llm_settings})
    started = time.perf_counter()
    items = await asyncio.to_thread(read_inputs, inputs, settings.max_input_bytes)
    prompt = "naive"
    async with open_store(settings) as store:
        llm = make_llm(settings.model, settings, store)
        done = 0

        async def one(item: Article | ReadFailure) -> Line:
            nonlocal done
            begun = time.perf_counter()
            try:
                if isinstance(item, ReadFailure):
                    return error_line(
                        item.source,
                        item.id,
                        item.reason,
                        baseline="naive",
                        model=llm.label,
                        prompt=prompt,
                    )
                try:
                    return await naive_abstract(llm, item)
                except VeriscribeError as exc:
                    reason = exc.user_message
                except Exception as exc:  # one broken article must not stop the rest
                    log.exception("naive baseline failed on %s", item.source)
                    reason = f"internal error: {type(exc).__name__}: {exc}"
                return error_line(
                    item.source,
                    item.id,
                    reason,
                    baseline="naive",
                    model=llm.label,
                    prompt=prompt,
                    article=item,
                    seconds=time.perf_counter() - begun,
                )
            finally:
                done += 1
                if on_progress is not None:
                    on_progress(done, len(items))

        # The client's own semaphore bounds the calls in flight.
        lines = list(await asyncio.gather(*(one(item) for item in items)))
        label = llm.label
    await asyncio.to_thread(write_lines, out, lines)
    return _summary("naive", label, out, lines, time.perf_counter() - started)
