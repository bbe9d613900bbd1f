"""One facet branch: prompt the model for the facet's summary, in chunks if it is long."""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from veriscribe.errors import ContextOverflow, StructuredOutputError
from veriscribe.llm.client import LLM
from veriscribe.nodes.abstract.state import (
    AbstractDeps,
    AbstractState,
    FacetResult,
    FacetTask,
    usage_record,
)
from veriscribe.options import AbstractOptions
from veriscribe.prompts import Prompt, load_prompt
from veriscribe.results import Usage
from veriscribe.text.facets import pack
from veriscribe.text.guidance import CONCISE_GUIDE, DETAILED_GUIDE, QUESTIONS
from veriscribe.text.replies import (
    Elements,
    output_format,
    summary_schema,
)
from veriscribe.text.sentences import complete_sentences

SUMMARY_TOKENS = 320
OWN_SUMMARY_TOKENS = 200
"""The own-words prompt asks for two to four sentences: a reply longer than this has
stopped summarising (small models ramble or list details), and every token is time."""
ELEMENT_TOKENS = 256

DISPLAY = {
    "intro": "introduction",
    "main_idea": "main content",
    "results_conclusions": "results and conclusions",
}


def facet_prompt(options: AbstractOptions, name: str) -> Prompt:
    """Return the summary prompt for the options and facet."""
    if options.split == "ns" and options.prompt == "bc":
        return load_prompt("abstract", "summarize_bc_ns")
    return load_prompt("abstract", f"summarize_{options.prompt}")


def facet_values(
    options: AbstractOptions,
    prompt: Prompt,
    name: str,
    text: str,
    extra: dict[str, str],
) -> dict[str, str]:
    """Return the placeholder values of a facet prompt."""
    naive = options.split == "ns"
    guide_table = {"di": DETAILED_GUIDE, "own": QUESTIONS}.get(
        options.prompt, CONCISE_GUIDE
    )
    guide = "its main topic." if naive else guide_table.get(name, guide_table["other"])
    if naive and options.prompt == "own":
        guide = "What is the main point of this passage?"
    facet = "" if naive else DISPLAY.get(name, name)
    if naive and options.prompt == "own":
        facet = "one passage of the article"
    values = {
        "facet": facet,
        "guide": guide,
        "text": text,
        "output_format": output_format("summary", options.lean),
        "reasoning_field": ""
        if options.lean
        else '; "reasoning" is a brief explanation',
        **extra,
    }
    return {k: v for k, v in values.items() if k in prompt.placeholders}


class FacetSummariser:
    """Summarise one facet's text, with map-reduce when it exceeds the budget."""

    def __init__(self, llm: LLM, options: AbstractOptions, name: str) -> None:
        self.llm = llm
        self.options = options
        self.name = name
        self.usage = Usage()
        self.seconds = 0.0
        self.chunks = 0
        self.prompt_ids: list[str] = []

    def _tokens(self, text: str) -> int:
        return self.llm.count_tokens([HumanMessage(text)])

    def _room(self, prompt: Prompt, max_out: int, extra: dict[str, str]) -> int:
        frame = prompt.render(
            **facet_values(self.options, prompt, self.name, "", extra)
        )
        return self.llm.prompt_budget(max_out) - self.llm.count_tokens(frame)

    async def summarise(self, texts: Sequence[str]) -> str:
        """Return the facet summary of the texts."""
        extra = self._entity_values("\n\n".join(texts))
        prompt = facet_prompt(self.options, self.name)
        room = self._room(prompt, SUMMARY_TOKENS, extra | {"elements": "x" * 400})
        if room < 200:
            raise ContextOverflow(
                f"the model's context ({self.llm.context_tokens} tokens) leaves no room "
                "for facet text",
                prompt_tokens=0,
                budget=room,
            )
        chunks = pack(texts, room, self._tokens)
        self.chunks = len(chunks)
        summaries = [await self._one(prompt, chunk, extra) for chunk in chunks]
        return await self._merge(summaries) if len(summaries) > 1 else summaries[0]

    def _entity_values(self, text: str) -> dict[str, str]:
        if not self.options.entities:
            return {"entities": ""}
        from veriscribe.text.entities import key_phrases

        phrases = key_phrases(text, self.options.entities)
        if not phrases:
            return {"entities": ""}
        return {
            "entities": "\nKeep the meaning of these key terms accurate: "
            + "; ".join(phrases)
            + "."
        }

    async def _one(self, prompt: Prompt, text: str, extra: dict[str, str]) -> str:
        if self.options.prompt == "si_cot":
            extra = extra | {"elements": await self._elements(text)}
        values = facet_values(self.options, prompt, self.name, text, extra)
        result = await self.llm.json(
            prompt.id,
            prompt.render(**values),
            summary_schema(self.options.lean),
            max_tokens=OWN_SUMMARY_TOKENS
            if self.options.prompt == "own"
            else SUMMARY_TOKENS,
            copy_guard=(text, self.options.copy_limit)
            if self.options.copy_limit
            else None,
        )
        self._account(prompt.id, result.usage, result.seconds)
        return complete_sentences(result.value.summary)

    async def _elements(self, text: str) -> str:
        prompt = load_prompt("abstract", "elements_si_cot")
        result = await self.llm.json(
            prompt.id,
            prompt.render(facet=DISPLAY.get(self.name, self.name), text=text),
            Elements,
            max_tokens=ELEMENT_TOKENS,
        )
        self._account(prompt.id, result.usage, result.seconds)
        return "; ".join(e.strip() for e in result.value.elements if e.strip())

    async def _merge(self, summaries: list[str]) -> str:
        prompt = load_prompt("abstract", "merge")
        room = self._room(prompt, SUMMARY_TOKENS, {})
        while True:
            groups = pack(summaries, room, self._tokens)
            merged = []
            for group in groups:
                values = facet_values(self.options, prompt, self.name, group, {})
                result = await self.llm.json(
                    prompt.id,
                    prompt.render(**values),
                    summary_schema(self.options.lean),
                    max_tokens=SUMMARY_TOKENS,
                )
                self._account(prompt.id, result.usage, result.seconds)
                merged.append(complete_sentences(result.value.summary))
            if len(merged) == 1:
                return merged[0]
            if len(merged) >= len(summaries):
                # Merging no longer shrinks the text: keep the pieces in order.
                return " ".join(merged)
            summaries = merged

    def _account(self, prompt_id: str, usage: Usage, seconds: float) -> None:
        self.usage = self.usage + usage
        self.seconds += seconds
        if prompt_id not in self.prompt_ids:
            self.prompt_ids.append(prompt_id)


async def summarize_facet(
    task: FacetTask, runtime: Runtime[AbstractDeps]
) -> AbstractState:
    """Summarise one facet; a semantic failure is recorded, not raised."""
    deps = runtime.context
    article = await deps.article(task["doc_key"])
    texts = [article.paragraphs[i].text for i in task["paragraphs"]]
    worker = FacetSummariser(deps.llm, deps.options, task["name"])
    started = time.perf_counter()
    summary, status, error = "", "ok", None
    try:
        summary = await worker.summarise(texts)
        if not summary:
            status, error = "failed", "the model returned an empty summary"
    except (StructuredOutputError, ContextOverflow) as exc:
        status, error = "failed", exc.user_message
    result = FacetResult(
        name=task["name"],
        stage=task["stage"],
        paragraphs=task["paragraphs"],
        summary=summary,
        status=status,  # type: ignore[typeddict-item]
        error=error,
        chunks=worker.chunks,
        prompt_id=",".join(worker.prompt_ids),
        usage=usage_record("facet", worker.usage, time.perf_counter() - started),
    )
    return {"results": [result], "prompt_ids": worker.prompt_ids}
