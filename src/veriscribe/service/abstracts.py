"""Abstract generation: one article through the checkpointed Divide-Prompt-Refine graph."""

from __future__ import annotations

import time
from pathlib import Path
from typing import cast

from veriscribe.documents.articles import Article, ReadFailure, read_articles
from veriscribe.documents.sandbox import ReadLimits
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.events import OnAbstractStage
from veriscribe.graphs.abstract import AbstractDeps, AbstractState, build_abstract_graph
from veriscribe.graphs.abstract_stages import stage_watcher
from veriscribe.graphs.runner import GraphRunner, thread_key
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.nodes.abstract.result import result_of
from veriscribe.offload import INLINE, Offload
from veriscribe.options import AbstractOptions
from veriscribe.results import AbstractResult, GraphAbstract
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store.articles import put_article
from veriscribe.store.db import Store


def thread_id(doc_key: str, options: AbstractOptions, llm: LLM) -> str:
    """Return the graph thread of an article under one configuration and model."""
    return thread_key("abstract", doc_key, options.key(), llm.identity)


async def abstract_runner(store: Store, llm: LLM) -> GraphRunner:
    """Return a runner of the abstract graph over the store's checkpointer."""
    return await GraphRunner.open(
        build_abstract_graph(llm.settings.retries + 1),
        store,
        max_concurrency=llm.settings.concurrency,
    )


def read_single_article(
    path: Path, max_bytes: int | None = None, limits: ReadLimits | None = None
) -> Article:
    """Read the one article a file holds, or raise InputError."""
    items = list(read_articles(path, max_bytes=max_bytes, limits=limits))
    failures = [i for i in items if isinstance(i, ReadFailure)]
    articles = [i for i in items if isinstance(i, Article)]
    if len(articles) + len(failures) > 1:
        raise InputError(
            f"{path} holds {len(articles) + len(failures)} articles: "
            "use `veriscribe batch` for more than one"
        )
    if failures:
        raise InputError(f"{failures[0].source}: {failures[0].reason}")
    if not articles:
        raise InputError(f"{path}: no article found")
    if not articles[0].paragraphs:
        raise InputError(f"{path}: the article has no body paragraphs")
    return articles[0]


async def run_abstract(
    store: Store,
    llm: LLM,
    article: Article,
    options: AbstractOptions,
    *,
    runner: GraphRunner | None = None,
    doc_key: str | None = None,
    on_event: OnAbstractStage | None = None,
    run_id: str | None = None,
    offload: Offload = INLINE,
) -> AbstractResult:
    """Run (or resume, or reuse) the abstract graph for one article; return the result.

    An article already in the store is run by its ``doc_key``, without writing it
    again.
    """
    started = time.perf_counter()
    key = doc_key or await put_article(store, article)
    if runner is None:
        runner = await abstract_runner(store, llm)
    deps = AbstractDeps(
        llm=llm, store=store, options=options, articles={key: article}, offload=offload
    )
    run = await runner.run(
        thread_id(key, options, llm),
        {"doc_key": key},
        deps,
        # Only a thread that holds its abstract is done. One with nothing left to
        # run but no abstract (a checkpoint write cut short by a killed process)
        # is made again, on a clean thread.
        finished=lambda values: bool(values.get("abstract")),
        fresh=True,
        run_id=run_id,
        on_update=None if on_event is None else stage_watcher(on_event),
    )
    if not run.values.get("abstract"):
        raise VeriscribeError(
            "the abstract graph ended without an abstract; run it again",
            retryable=True,
        )
    return assemble_result(
        article,
        result_of(cast(AbstractState, run.values)),
        options,
        llm,
        thread_id=run.thread_id,
        reused=run.reused,
        seconds=time.perf_counter() - started,
    )


def assemble_result(
    article: Article,
    made: GraphAbstract,
    options: AbstractOptions,
    llm: LLM,
    *,
    thread_id: str,
    reused: bool,
    seconds: float,
) -> AbstractResult:
    """Return the result of one article: the graph's, with what only the run knows."""
    return AbstractResult(
        **dict(made),
        id=article.id,
        source=article.source,
        title=article.title,
        reference=article.reference,
        model=llm.label,
        prompt=options.prompt,
        split=options.split,
        lean=options.lean,
        entities=options.entities,
        copy_limit=options.copy_limit,
        words_asked=options.words,
        paragraph_count=len(article.paragraphs),
        thread_id=thread_id,
        resumed_from_checkpoint=reused,
        seconds=round(seconds, 3),
    )


async def generate_abstract(
    settings: Settings,
    path: Path,
    options: AbstractOptions,
    *,
    on_event: OnAbstractStage | None = None,
) -> AbstractResult:
    """Write an abstract for the article in ``path``."""
    article = read_single_article(
        path, settings.max_input_bytes, ReadLimits.from_settings(settings)
    )
    async with open_store(settings) as store:
        llm = make_llm(settings.model, settings, store)
        return await run_abstract(store, llm, article, options, on_event=on_event)
