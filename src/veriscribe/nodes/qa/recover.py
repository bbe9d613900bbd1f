"""recover (paper appendix A.14): find a partially supported claim's missing support.

The model sees the question, the claim, its quotes and the sections read (the cited
ones first), and copies out a span that states what the quotes leave unsupported. The
span counts only if the verbatim matcher finds it in a section read: first the one the
model named, else any other section read. ``elided_risky`` never counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.checks.verbatim import check_quote, is_compliant
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.judge import format_quotes
from veriscribe.nodes.qa.sources import fence_all, fit_sources, resolve_section
from veriscribe.nodes.qa.state import QADeps, RecoverTask, Recovery, RecoveryResult
from veriscribe.prompts import load_prompt
from veriscribe.store.corpora import SectionRow, split_key

RECOVER_TOKENS = 200


class RecoveryReply(BaseModel):
    """The recovery probe's reply."""

    section_id: str = ""
    span: str = ""


def recheck(
    span: str, named: str | None, sections: Mapping[str, SectionRow]
) -> Recovery | None:
    """Return the span as a recovery if it passes the verbatim check in a section read."""
    if not span.strip():
        return None
    order = [named] if named in sections else []
    order += [key for key in sections if key != named]
    for key in order:
        assert key is not None
        result = check_quote(span, sections[key].text)
        if is_compliant(result.tier):
            doc_id, section_id = split_key(key)
            return Recovery(
                doc_id=doc_id,
                section_id=section_id,
                quote=span.strip(),
                tier=result.tier,
            )
    return None


def reading_order(read_set: Sequence[str], cited: Sequence[str]) -> list[str]:
    """Return the read set with the claim's cited sections first."""
    first = [key for key in cited if key in read_set]
    return first + [key for key in read_set if key not in first]


async def recover(task: RecoverTask, runtime: Runtime[QADeps]) -> dict[str, Any]:
    """Look for the missing support of one partially supported claim."""
    deps = runtime.context
    llm = deps.model()
    prompt = load_prompt("qa", "recover")
    keys = reading_order(task["read_set"], task["cited"])
    rows = await deps.sections(task["corpus"], keys)
    ordered = [rows[key] for key in keys if key in rows]

    def build(sources: str) -> list[BaseMessage]:
        return prompt.render(
            question=task["question"] or "(not given)",
            claim=task["claim"],
            quotes=format_quotes(task["quotes"]),
            sources=sources,
        )

    chosen, notes = fit_sources(llm, build, ordered, RECOVER_TOKENS)
    if not chosen:
        return _result(task, None, "no section read fits the model's context")
    try:
        reply = await llm.json(
            prompt.id,
            build(fence_all(chosen)),
            RecoveryReply,
            max_tokens=RECOVER_TOKENS,
        )
    except StructuredOutputError as exc:
        return _result(task, None, f"the recovery probe failed: {exc}")
    shown = {section.key: section for section, _ in chosen}
    named = resolve_section(reply.value.section_id, list(shown))
    recovered = recheck(reply.value.span, named, shown)
    if recovered is not None:
        note = ""
    elif reply.value.span.strip():
        note = "the recovered span failed the verbatim check"
    else:
        note = "the probe found no span"
    if notes:
        note = "; ".join([note, *notes]) if note else "; ".join(notes)
    return _result(task, recovered, note)


def _result(task: RecoverTask, recovered: Recovery | None, note: str) -> dict[str, Any]:
    return {
        "recoveries": [
            RecoveryResult(sentence=task["sentence"], recovered=recovered, note=note)
        ]
    }
