"""The refine step: one call turns the concatenated draft into the abstract."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from veriscribe.checks.wording import word_count
from veriscribe.errors import ContextOverflow, StructuredOutputError
from veriscribe.nodes.abstract.checks import CheckRecord, check_abstract
from veriscribe.nodes.abstract.evidence import (
    certify_text,
    sentence_counts,
    shown_text,
)
from veriscribe.nodes.abstract.fallback import latest
from veriscribe.nodes.abstract.state import AbstractDeps, AbstractState, usage_record
from veriscribe.prompts import load_prompt
from veriscribe.results import USABLE_FACET_STATUSES
from veriscribe.text.facets import order_key
from veriscribe.text.replies import (
    AbstractFull,
    AbstractLean,
    abstract_tokens,
    output_format,
)
from veriscribe.text.sentences import complete_sentences

REPEAT_MARGIN = 2
"""The refined abstract may repeat a run of its own words this much longer than a facet
summary may copy its text: abstracts name their subject again, loops repeat clauses."""


def draft_of(state: AbstractState) -> str:
    """Concatenate the usable summaries of the final stage in rhetorical order."""
    usable = [
        r
        for r in latest(state.get("results", []), state["stage"]).values()
        if r["status"] in USABLE_FACET_STATUSES and r["summary"].strip()
    ]
    usable.sort(key=lambda r: order_key(r["name"]))
    return "\n\n".join(r["summary"].strip() for r in usable)


def one_paragraph(draft: str) -> str:
    """Return the draft as one paragraph, for the prompt.

    Under a JSON grammar a string cannot hold a raw line break: a small model copying a
    draft of several paragraphs ends its string at the first break, and the abstract
    would be the first facet alone.
    """
    return " ".join(draft.split())


async def refine(state: AbstractState, runtime: Runtime[AbstractDeps]) -> AbstractState:
    """Refine the draft and check the abstract; if refining fails the draft is used."""
    deps = runtime.context
    draft = draft_of(state)
    own = deps.options.prompt == "own"
    prompt = load_prompt("abstract", "refine_own" if own else "refine")
    lean = deps.options.lean
    values = {
        "draft": one_paragraph(draft),
        "output_format": output_format("abstract", lean),
    }
    if own:
        values["words"] = str(deps.options.words or 250)
    article = await deps.article(state["doc_key"])
    started = time.perf_counter()
    update: AbstractState = {"draft": draft, "prompt_ids": [prompt.id]}
    try:
        result = await deps.llm.json(
            prompt.id,
            prompt.render(**values),
            AbstractLean if lean else AbstractFull,
            max_tokens=abstract_tokens(deps.options.words),
            # With a copy limit, the abstract may not loop on its own words either
            # (the draft itself may be copied: it is already the model's wording);
            # its words, spellings and scripts are held to the article's.
            copy_guard=("", deps.options.copy_limit + REPEAT_MARGIN, article.body)
            if deps.options.copy_limit
            else None,
        )
    except (StructuredOutputError, ContextOverflow) as exc:
        abstract, fallbacks = draft, [f"refine_failed: {exc.user_message}"]
        update |= {"refined": False, "prompt_ids": []}
    else:
        abstract = complete_sentences(getattr(result.value, "abstract", ""))
        fallbacks = []
        if not abstract:
            abstract = draft
            fallbacks.append("refine_failed: the model returned an empty abstract")
        update |= {
            "refined": bool(abstract),
            "usage": [
                usage_record("refine", result.usage, time.perf_counter() - started)
            ],
        }
    checked, record, notes = await deps.offload.run(
        check_abstract, abstract, draft, article.body, deps.options.words
    )
    if not deps.options.evidence:
        return update | {
            "abstract": checked,
            "checks": record,
            "fallbacks": fallbacks + notes,
        }
    records = await deps.offload.run(
        certify_text,
        checked,
        article.paragraphs,
        list(state.get("labels", [])),
        article.title,
        deps.options.words,
    )
    shown = shown_text(records)
    counts = sentence_counts(records)
    if counts["repaired"] or counts["dropped"]:
        notes.append(
            f"evidence_checked: {counts['repaired']} sentences repaired, "
            f"{counts['dropped']} dropped against their evidence"
        )
    if not shown:
        # No sentence holds to the article and none could be taken from it: the
        # abstract is shown as the checks left it, and says so.
        notes.append("evidence_unchecked: no sentence could be checked or repaired")
    else:
        # The evidence step repairs, adds and trims sentences: the length recorded is
        # that of the abstract shown.
        record = CheckRecord(**{**record, "words": word_count(shown)})
    return update | {
        "abstract": shown or checked,
        "checks": record,
        "sentences": records,
        "fallbacks": fallbacks + notes,
    }
