"""retrieve: choose the sections to read (fused BM25, the model from summaries, BM25, dense)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.asked import searched_question
from veriscribe.nodes.qa.sources import resolve_section
from veriscribe.nodes.qa.state import QADeps, QAState, RetrievalInfo, Turn
from veriscribe.prompts import Prompt, load_prompt
from veriscribe.store.corpora import SectionRow

SELECTION_TOKENS = 160


class Selection(BaseModel):
    """The retriever model's reply."""

    ids: list[str]


def context_line(history: Sequence[Turn]) -> str:
    """Return the previous question of a chat, for follow-up questions."""
    if not history:
        return ""
    return f"Previous question in this conversation: {history[-1]['question']}\n"


def render_candidates(rows: Sequence[SectionRow]) -> str:
    """List candidate sections: the key in brackets, then title and summary."""
    lines = []
    for row in rows:
        summary = row.summary or row.title
        label = f"{row.title}: " if row.title and row.title not in summary else ""
        lines.append(f"[{row.key}]\n{label}{summary}")
    return "\n".join(lines)


def cap_read_set(
    keys: Sequence[str], chars: dict[str, int], limit: int
) -> tuple[list[str], list[str]]:
    """Keep sections in order while their text fits ``limit`` characters."""
    kept: list[str] = []
    dropped: list[str] = []
    total = 0
    for key in keys:
        if kept and total + chars.get(key, 0) > limit:
            dropped.append(key)
            continue
        kept.append(key)
        total += chars.get(key, 0)
    return kept, dropped


def parse_selection(ids: Sequence[str], keys: Sequence[str], k: int) -> list[str]:
    """Map the model's ids to known section keys, in order, without repeats."""
    chosen: list[str] = []
    for raw in ids:
        key = resolve_section(raw, keys)
        if key is not None and key not in chosen:
            chosen.append(key)
    return chosen[:k]


def _messages(
    prompt: Prompt, state: QAState, rows: Sequence[SectionRow], k: int
) -> list[BaseMessage]:
    return prompt.render(
        context=context_line(state.get("history", [])),
        question=state["question"],
        candidates=render_candidates(rows),
        k=str(k),
    )


async def _llm_pick(
    state: QAState, deps: QADeps, notes: list[str]
) -> tuple[list[str], int, str | None]:
    """Let the model pick from the summaries; return keys, candidates shown, prompt id."""
    llm = deps.model()
    options = deps.options
    corpus = state["corpus"]
    rows = [row for row in await deps.all_sections(corpus) if row.summary and row.chars]
    limit = options.candidates or len(rows)
    if len(rows) > limit:
        ranked = [
            key for key, _ in (await deps.bm25(corpus)).search(state["question"], limit)
        ]
        by_key = {row.key: row for row in rows}
        shown = [by_key[key] for key in ranked if key in by_key]
        # Questions sharing no word with the corpus still get candidates to choose from.
        shown += [row for row in rows if row.key not in set(ranked)][
            : limit - len(shown)
        ]
        notes.append(
            f"the model chose among {len(shown)} of {len(rows)} section summaries, "
            "pre-ranked by BM25"
        )
    else:
        shown = rows
    prompt = load_prompt("qa", "retrieve")
    budget = llm.prompt_budget(SELECTION_TOKENS)
    while (
        shown and llm.count_tokens(_messages(prompt, state, shown, options.k)) > budget
    ):
        shown = shown[: max(1, int(len(shown) * 0.8))] if len(shown) > 1 else []
    if not shown:
        return [], 0, prompt.id
    try:
        reply = await llm.json(
            prompt.id,
            _messages(prompt, state, shown, options.k),
            Selection,
            max_tokens=SELECTION_TOKENS,
        )
    except StructuredOutputError as exc:
        notes.append(f"the retriever model failed: {exc.user_message}")
        return [], len(shown), prompt.id
    keys = parse_selection(reply.value.ids, [row.key for row in rows], options.k)
    if not keys:
        notes.append(
            f"the retriever model named no known section ({reply.value.ids[:5]})"
        )
    return keys, len(shown), prompt.id


async def retrieve(state: QAState, runtime: Runtime[QADeps]) -> QAState:
    """Choose the sections to read for the question."""
    return await choose_sections(state, runtime.context)


async def choose_sections(state: QAState, deps: QADeps) -> QAState:
    """Choose the sections to read for ``state``'s question: the node's update.

    Called by the node, and by the retrieval evaluation on questions alone.
    """
    options = deps.options
    corpus = state["corpus"]
    notes: list[str] = []
    prompt_ids: list[str] = []
    method: str = options.retriever
    shown = 0
    keys: list[str] = []
    query = searched_question(state, (await deps.bm25(corpus)).holds)
    if query != state["question"]:
        notes.append(f"searched as: {query}")
    if method == "llm":
        keys, shown, prompt_id = await _llm_pick(state, deps, notes)
        if prompt_id:
            prompt_ids.append(prompt_id)
        if not keys:
            method = "bm25"
            notes.append("fell back to BM25")
    if method == "fused":
        fused = await deps.fused(corpus)
        keys = [key for key, _ in fused.search(query, options.k)]
    elif method == "bm25":
        keys = [key for key, _ in (await deps.bm25(corpus)).search(query, options.k)]
    elif method == "dense":
        index = await deps.dense(corpus)
        keys = [key for key, _ in index.search(query, options.k)]
    rows = await deps.sections(corpus, keys)
    keys, dropped = cap_read_set(
        keys, {key: row.chars for key, row in rows.items()}, options.read_chars
    )
    if dropped:
        notes.append(
            f"read set capped at {options.read_chars} characters; left out: "
            + ", ".join(dropped)
        )
    return {
        "read_set": keys,
        "retrieval": RetrievalInfo(method=method, candidates=shown, notes=notes),
        "notes": [*state.get("notes", []), *notes],
        "prompt_ids": [*state.get("prompt_ids", []), *prompt_ids],
    }
