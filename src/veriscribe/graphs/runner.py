"""Run a checkpointed graph thread: compile once, resume or reuse, stream, read usage.

Every job runs its graph the same way: a thread id names one unit of work (an article
under a configuration, a question, a question set); a thread that finished is reused
without running again, one that was interrupted resumes from its last checkpoint, and
a new one starts from its input. The model calls a thread makes are logged under its id
(``call_scope``), so its usage can be read back from the call log.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

from veriscribe import __version__
from veriscribe.llm.client import call_scope
from veriscribe.prompts import prompts_digest
from veriscribe.release import code_digest
from veriscribe.results import Usage
from veriscribe.store import calls
from veriscribe.store.db import Store

OnUpdate = Callable[[str, dict[str, Any]], None]
"""Called with each node's name and the state update it returned, as it finishes."""

Graph = CompiledStateGraph[Any, Any, Any, Any]


def _any_state(values: Mapping[str, Any]) -> bool:
    return bool(values)


def _always(values: Mapping[str, Any]) -> bool:
    return True


@dataclass
class ThreadRun:
    """What one run of a thread ended with."""

    thread_id: str
    values: dict[str, Any]
    """The thread's final state."""
    reused: bool = False
    """The thread had finished before: nothing ran."""
    resumed: bool = False
    """The thread continued from the checkpoint of an interrupted run."""
    since: float = 0.0
    """When this run began (wall clock), for the usage it caused."""
    seconds: float = 0.0


# The front ends, the evaluation wing and the store do not change what a graph returns.
_NOT_RESULT_CODE = ("cli", "serve", "eval", "store")


def thread_key(graph: str, *parts: object, prompts: str | None = None) -> str:
    """Return the id of the thread that does one unit of work of a graph.

    Every thread id is made here, from everything that changes what the thread
    returns: the work's own ``parts`` (its input, the job's options, the model's
    identity), a digest of every prompt file of the graph (``prompts`` names the
    prompt folder when it is not the graph's name), the veriscribe release, and a
    digest of the code (:func:`veriscribe.release.code_digest`), so an upgrade whose checks would
    change a result recomputes rather than reuses its predecessor's results. The
    model's replies are cached by prompt, so recomputing a finished thread after
    such a change costs only the calls whose prompts changed.
    """
    blob = json.dumps(
        [
            *parts,
            prompts_digest(prompts or graph),
            __version__,
            code_digest(skip=_NOT_RESULT_CODE),
        ],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return f"{graph}:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


class GraphRunner:
    """One compiled graph with the store's checkpointer, running threads of it."""

    def __init__(
        self,
        graph: Graph,
        store: Store,
        saver: BaseCheckpointSaver[str],
        *,
        max_concurrency: int,
    ) -> None:
        self.graph = graph
        self.store = store
        self.saver = saver
        self.max_concurrency = max_concurrency

    @classmethod
    async def open(
        cls,
        builder: StateGraph[Any, Any, Any, Any],
        store: Store,
        *,
        max_concurrency: int,
    ) -> GraphRunner:
        """Compile ``builder`` with the checkpointer of ``store``."""
        saver = await store.checkpointer()
        return cls(
            builder.compile(checkpointer=saver),
            store,
            saver,
            max_concurrency=max_concurrency,
        )

    def config(
        self, thread_id: str, max_concurrency: int | None = None
    ) -> RunnableConfig:
        """Return the run configuration of a thread."""
        return {
            "configurable": {"thread_id": thread_id},
            "max_concurrency": max_concurrency or self.max_concurrency,
        }

    async def state(self, thread_id: str) -> dict[str, Any]:
        """Return the saved state of a thread (empty if it never ran)."""
        snapshot = await self.graph.aget_state(self.config(thread_id))
        return dict(snapshot.values)

    async def run(
        self,
        thread_id: str,
        graph_input: Mapping[str, Any],
        context: Any,
        *,
        finished: Callable[[Mapping[str, Any]], bool] = _any_state,
        resumable: Callable[[Mapping[str, Any]], bool] = _always,
        fresh: bool = False,
        run_id: str | None = None,
        max_concurrency: int | None = None,
        on_update: OnUpdate | None = None,
    ) -> ThreadRun:
        """Run a thread to its end: reuse it, resume it, or start it from ``graph_input``.

        Args:
            thread_id: The thread.
            graph_input: The input of a new run.
            context: The nodes' dependencies (LangGraph's runtime context).
            finished: Tells from a thread's saved state whether its work is done and
                can be reused as it is; by default, any state with nothing left to run.
            resumable: Tells whether an interrupted thread should continue (rather
                than start again from ``graph_input``).
            fresh: A thread that is to start again from ``graph_input`` loses its
                saved state first, so that nothing of an unfinished run is added to
                the new one (otherwise the new run continues the thread's state, as
                the turns of a chat do).
            run_id: The batch run the thread's model calls are logged under.
            max_concurrency: Nodes running at once, if not the runner's.
            on_update: Called with every node's update as it finishes.
        """
        started, since = time.perf_counter(), time.time()
        config = self.config(thread_id, max_concurrency)
        snapshot = await self.graph.aget_state(config)
        run = ThreadRun(thread_id, dict(snapshot.values), since=since)
        run.reused = not snapshot.next and finished(snapshot.values)
        if not run.reused:
            run.resumed = bool(snapshot.next) and resumable(snapshot.values)
            if fresh and not run.resumed and snapshot.values:
                await self.saver.adelete_thread(thread_id)
            token = call_scope.set((run_id, thread_id))
            final: dict[str, Any] | None = None
            try:
                async for item in self.graph.astream(
                    None if run.resumed else dict(graph_input),
                    config,
                    context=context,
                    stream_mode=["updates", "values"],
                ):
                    mode, chunk = cast(tuple[str, dict[str, Any]], item)
                    if mode == "values":
                        # The state after each step: the last one is the final
                        # state, without reading it back from the checkpoint.
                        final = chunk
                    elif on_update is not None:
                        for node, change in chunk.items():
                            on_update(node, change if isinstance(change, dict) else {})
            finally:
                call_scope.reset(token)
            if final is None:
                final = (await self.graph.aget_state(config)).values
            run.values = dict(final)
        run.seconds = time.perf_counter() - started
        return run

    async def usage(self, run: ThreadRun) -> Usage:
        """Return the model calls (and cached answers) the run made, from the call log."""
        return await calls.thread_usage(self.store, run.thread_id, run.since)
