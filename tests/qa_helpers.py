"""A small guideline corpus and a scripted model that plays every cited-QA prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import Reply, ScriptedChatModel, scripted_llm
from veriscribe.checks.markers import MARKER_RE
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.llm.client import LLM
from veriscribe.store import corpora
from veriscribe.store.corpora import SectionRow
from veriscribe.store.db import Store
from veriscribe.text.sentences import claim_sentences

FIXTURES = Path(__file__).parent / "fixtures"
GUIDELINE = FIXTURES / "guidelines" / "hypertension.md"
CORPUS = "htn"

DIAGNOSIS = "hypertension:diagnosis"
LIFESTYLE = "hypertension:lifestyle"
DRUGS = "hypertension:drug-treatment"
HANDOUT = "hypertension:patient-handout"


async def add_fixture_corpus(store: Store, name: str = CORPUS) -> None:
    """Store the fixture guideline (its sections are short: no summaries needed)."""
    await corpora.ensure_corpus(store, name)
    for doc in read_guideline_path(GUIDELINE):
        await corpora.store_document(store, name, doc)


def cite(key: str, quote: str) -> str:
    """Write a citation marker for a section key."""
    doc_id, section_id = key.split(":", 1)
    return f"{{{{cite:{doc_id}:{section_id}|{quote}}}}}"


def as_sentences(answer: str) -> list[dict[str, str]]:
    """Turn an answer written with markers into the answer model's reply fields.

    A marker credits the sentence it follows, as in a parsed answer: sentences before
    that one become items without a quote.
    """
    if answer.lower().startswith("not found"):
        return []
    items: list[dict[str, str]] = []
    cursor = 0
    for marker in MARKER_RE.finditer(answer):
        before = claim_sentences(answer[cursor : marker.start()])
        for sentence in before[:-1]:
            items.append({"sentence": sentence.text, "section_id": "", "quote": ""})
        if before:
            cursor += before[-1].start
        items.append(
            {
                "sentence": answer[cursor : marker.start()].strip(),
                "section_id": f"{marker['doc'].strip()}:{marker['section'].strip()}",
                "quote": marker["quote"].strip(),
            }
        )
        cursor = marker.end()
    if answer[cursor:].strip():
        items.append(
            {"sentence": answer[cursor:].strip(), "section_id": "", "quote": ""}
        )
    return items


_CLAIM = re.compile(r"^Claim: (.*)$", re.MULTILINE)
_REVIEW = re.compile(r"independent review (\d+)")
_SENTENCES = re.compile(r"^\d+\. ", re.MULTILINE)


def kind_of(prompt: str) -> str:
    """Tell which cited-QA prompt a model call carries."""
    if "Candidate sections:" in prompt:
        return "retrieve"
    if "Quotes already cited:" in prompt:
        return "recover"
    if "independent review" in prompt:
        return "judge"
    if "Does the guideline passage state this claim?" in prompt:
        return "yesno"
    if "Guideline sections:" in prompt:
        return "answer"
    if "state no clinical claim]}." in prompt:
        return "claims"
    raise AssertionError(f"unexpected prompt: {prompt[:300]!r}")


@dataclass
class Script:
    """What the scripted model answers to each prompt of the graph.

    ``verdicts`` maps a substring of a claim to the verdicts of its samples in order
    (the last one repeats); the scored judge's yes/no question is answered "yes" for
    ``fully_supported``, "yes" on the first of its samples only for
    ``partially_supported`` (a probability of 1/3) and "no" otherwise. ``recover`` maps
    a substring of a claim to the ``(section_id, span)`` the recovery probe returns.
    """

    ids: list[str] = field(default_factory=lambda: [DIAGNOSIS, LIFESTYLE])
    answer: str = ""
    claims: Callable[[int], list[bool]] | None = None
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    shortfall: str = "unsupported_addition"
    recover: dict[str, tuple[str, str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    asked: dict[str, int] = field(default_factory=dict)
    full_after_recovery: bool = True

    def recovered_in(self, claim: str, prompt: str) -> bool:
        """Tell whether this is the re-judgement with the recovered passage added.

        Recovery re-judges the claim with its sources plus the recovered passage: a
        second numbered source that holds the span.
        """
        return self.full_after_recovery and any(
            needle in claim and span in prompt and '\n[2] "' in prompt
            for needle, (_, span) in self.recover.items()
        )

    def verdict_for(self, claim: str, sample: int) -> str:
        """Return the scripted verdict of one sample for a claim."""
        for needle, verdicts in self.verdicts.items():
            if needle in claim:
                return verdicts[min(sample, len(verdicts)) - 1]
        return "fully_supported"

    def __call__(self, prompt: str, kwargs: dict[str, Any]) -> Reply:
        kind = kind_of(prompt)
        self.calls.append(kind)
        if kind == "retrieve":
            return json.dumps({"ids": self.ids})
        if kind == "answer":
            return json.dumps({"sentences": as_sentences(self.answer)})
        if kind == "claims":
            sentences = prompt.split("Sentences:", 1)[1].split("Reply as", 1)[0]
            count = len(_SENTENCES.findall(sentences))
            flags = self.claims(count) if self.claims else [True] * count
            not_claims = [i for i, flag in enumerate(flags, start=1) if not flag]
            return json.dumps({"not_claims": not_claims})
        if kind == "judge":
            claim = _CLAIM.search(prompt)
            review = _REVIEW.search(prompt)
            assert claim and review
            verdict = self.verdict_for(claim.group(1), int(review.group(1)))
            if self.recovered_in(claim.group(1), prompt):
                # Given the passage recovery found, the judge finds full support.
                verdict = "fully_supported"
            shortfall = self.shortfall if verdict == "partially_supported" else "none"
            return json.dumps({"verdict": verdict, "shortfall": shortfall})
        if kind == "yesno":
            claim = _CLAIM.search(prompt)
            assert claim
            sample = self.asked[claim.group(1)] = self.asked.get(claim.group(1), 0) + 1
            verdict = self.verdict_for(claim.group(1), 1)
            if self.recovered_in(claim.group(1), prompt):
                verdict = "fully_supported"
            yes = verdict == "fully_supported" or (
                verdict == "partially_supported" and sample % 3 == 1
            )
            return json.dumps({"answer": "yes" if yes else "no"})
        claim_line = prompt.split("Claim: ", 1)[1].split("\n", 1)[0]
        for needle, (section_id, span) in self.recover.items():
            if needle in claim_line:
                return json.dumps({"section_id": section_id, "span": span})
        return json.dumps({"section_id": "", "span": ""})

    def count(self, kind: str) -> int:
        """Return how many calls of one kind were made."""
        return sum(1 for c in self.calls if c == kind)


def script_llm(script: Script, store: Store | None = None, **kwargs: Any) -> LLM:
    """Wrap a script into veriscribe's LLM client."""
    return scripted_llm(ScriptedChatModel(responder=script), store=store, **kwargs)


def chat_calls(llm: LLM) -> Iterator[str]:
    """Yield the prompt of each call the scripted model received."""
    chat = llm.chat
    assert isinstance(chat, ScriptedChatModel)
    for prompt, _ in chat.calls:
        yield prompt


async def run_plain(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Run a QA thread (as ``run_thread``) and return its answer as its JSON object,
    with whether the thread was reused."""
    from veriscribe.service.qa import run_thread

    made = await run_thread(*args, **kwargs)
    return {**made.answer.model_dump(mode="json"), "reused": made.reused}


def section_row(
    key: str, text: str = "Some text.", title: str = "Title", parent: str | None = None
) -> SectionRow:
    """Return a stored section ``doc:section`` with the given text, title and parent."""
    doc_id, section_id = key.split(":", 1)
    return SectionRow(
        doc_id=doc_id,
        section_id=section_id,
        position=0,
        number="1",
        title=title,
        parent=parent,
        children=[],
        level=1,
        chars=len(text),
        summary=None,
        summary_source=None,
        text=text,
    )
