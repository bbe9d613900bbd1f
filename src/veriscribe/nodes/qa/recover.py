"""recover (paper appendix A.14): find a partially supported claim's missing support.

First, without a model call: a sentence read that restates the claim word for word (the
judge's lexical lane and its certification guard) is the support. Else the probe: the
model sees the question, the claim, its quotes and the sections read (the cited
ones first), and copies out a span that states what the quotes leave unsupported. With
constrained citations the reply's schema admits only units of the sections shown, so
the span is a span of the read set by construction. Either way the span counts only if
the verbatim matcher finds it in a section read (first the one the model named, else
any other; ``elided_risky`` never counts), and only if the judge, given the claim's
sources and the recovered passage together, finds the claim fully supported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.checks.support import certification_guard, lexical_verdict
from veriscribe.checks.verbatim import check_quote, is_compliant
from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.constrained import span_item, units_of
from veriscribe.nodes.qa.judge import decide, format_quotes
from veriscribe.nodes.qa.sources import fence_all, fit_sources, resolve_section
from veriscribe.nodes.qa.state import (
    QADeps,
    QAState,
    RecoverTask,
    Recovery,
    RecoveryResult,
)
from veriscribe.prompts import load_prompt
from veriscribe.store.corpora import SectionRow, split_key
from veriscribe.text.sentences import quotable_units, quote_text

RECOVER_TOKENS = 200


class RecoveryReply(BaseModel):
    """The recovery probe's reply."""

    section_id: str = ""
    span: str = ""


def recheck(
    span: str, named: str | None, sections: Mapping[str, SectionRow]
) -> tuple[Recovery, str] | None:
    """Return the span as a recovery, with the passage it spans, if it is verbatim.

    The span must pass the verbatim check in a section read; the passage is the span
    widened to whole sentences.
    """
    if not span.strip():
        return None
    order = [named] if named in sections else []
    order += [key for key in sections if key != named]
    for key in order:
        assert key is not None
        result = check_quote(span, sections[key].text)
        if is_compliant(result.tier):
            doc_id, section_id = split_key(key)
            text = sections[key].text
            around = result.context_span or result.span
            assert around is not None
            source = quote_text(text, *around)
            recovery = Recovery(
                doc_id=doc_id,
                section_id=section_id,
                quote=span.strip(),
                tier=result.tier,
                page=sections[key].page,
            )
            return recovery, source
    return None


def reading_order(read_set: Sequence[str], cited: Sequence[str]) -> list[str]:
    """Return the read set with the claim's cited sections first."""
    first = [key for key in cited if key in read_set]
    return first + [key for key in read_set if key not in first]


def restated_in(claim: str, sections: Sequence[SectionRow]) -> Recovery | None:
    """Return the first unit of the sections that restates the claim word for word.

    The unit must pass the judge's lexical lane as ``fully_supported`` and its
    certification guard, and (as every recovered span) the verbatim check.
    """
    for section in sections:
        for unit in quotable_units(section.text):
            if lexical_verdict(claim, unit.text) != "fully_supported":
                continue
            if certification_guard(claim, unit.text) is not None:
                continue
            found = recheck(unit.text, section.key, {section.key: section})
            if found is not None:
                return found[0]
    return None


async def recover(task: RecoverTask, runtime: Runtime[QADeps]) -> QAState:
    """Look for the missing support of one partially supported claim."""
    deps = runtime.context
    keys = reading_order(task["read_set"], task["cited"])
    rows = await deps.sections(task["corpus"], keys)
    ordered = [rows[key] for key in keys if key in rows]
    restated = restated_in(task["claim"], ordered)
    if restated is not None:
        return _result(task, restated, "a sentence read restates it word for word")
    llm = deps.model()
    prompt = load_prompt("qa", "recover")

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
    units = units_of(chosen)
    constraint = None
    if deps.options.citations == "constrained" and units.units:
        constraint = {**span_item(units, "span"), "additionalProperties": False}
    try:
        reply = await llm.json(
            prompt.id,
            build(fence_all(chosen)),
            RecoveryReply,
            max_tokens=RECOVER_TOKENS,
            constraint=constraint,
        )
    except StructuredOutputError as exc:
        return _result(task, None, f"the recovery probe failed: {exc}")
    shown = {section.key: section for section, _ in chosen}
    named = resolve_section(reply.value.section_id, list(shown))
    found = recheck(reply.value.span, named, shown)
    recovered = None
    if found is not None:
        recovery, source = found
        sources = [*task.get("sources", task["quotes"]), source]
        verdict = await decide(
            llm, deps.options, task["question"], task["claim"], sources
        )
        if verdict["verdict"] == "fully_supported":
            recovered, note = recovery, ""
        else:
            note = "with the recovered passage the claim is still not fully supported"
    elif reply.value.span.strip():
        note = "the recovered span failed the verbatim check"
    else:
        note = "the probe found no span"
    if notes:
        note = "; ".join([note, *notes]) if note else "; ".join(notes)
    return _result(task, recovered, note)


def _result(task: RecoverTask, recovered: Recovery | None, note: str) -> QAState:
    return {
        "recoveries": [
            RecoveryResult(sentence=task["sentence"], recovered=recovered, note=note)
        ]
    }
