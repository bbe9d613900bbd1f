"""Synthetic retrieval questions: sample sections, ask for one question each, gate it.

The method of the verifiable-by-construction paper: each question is written from one
guideline section, in one of three styles (``lookup``: a direct look-up question;
``scenario``: a short clinical vignette ending in a question; ``sdm``: what a patient
asks in a shared decision-making conversation), so the section it came from is its
gold section for retrieval hit rate.

Sampling is deterministic for a seed: documents and, within each, eligible sections are
shuffled, then taken round-robin over documents (each document gets its share, however
many sections it has), and the styles are dealt in turn. A section is eligible when
its text has at least ``min_words`` words and its heading is not administrative
(bibliographic source, funding, disclosures, ...). When more questions are asked for
than there are eligible sections, sections are reused in a style they have not had.

Each generated question goes through the gates of ``veriscribe.checks.question_gates``;
a question that fails is regenerated once with the reasons given to the model, and if
it fails again it is dropped with its reasons recorded.
"""

from __future__ import annotations

import operator
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.runtime import Runtime

from veriscribe.checks.question_gates import GateInput, check_question
from veriscribe.documents.guidelines import section_key
from veriscribe.errors import ContextOverflow
from veriscribe.llm.client import LLM
from veriscribe.prompts import load_prompt
from veriscribe.store import corpora
from veriscribe.store.db import Store

STYLES = ("lookup", "scenario", "sdm")
MIN_WORDS = 40
"""Sections with fewer words than this are too short to ask about."""
MAX_SECTION_CHARS = 4000
"""The section text shown to the model is cut here (at a word boundary)."""
MAX_TOKENS = {"lookup": 80, "scenario": 200, "sdm": 160}
MAX_LINES = 6
"""Lines of a reply searched for the question when it does not come on the first."""

ADMINISTRATIVE = re.compile(
    r"bibliograph|source\(?s?\)? of funding|funding|disclos|conflicts? of interest|"
    r"copyright|disclaimer|availability|adaptation|date released|guideline status|"
    r"guideline developer|committee|composition of group|endorser|ngc status|"
    r"patient resources|companion documents|references?$|acknowledg|abbreviation|"
    r"table of contents|contents$|appendix|author|citation",
    re.IGNORECASE,
)

_LABEL = re.compile(
    r"^\W*(?:question|scenario(?: and question)?|patient|clinician|q|answer)\s*\W*[:\-]\s*",
    re.IGNORECASE,
)


class Slot(TypedDict):
    """The ``Send`` payload of one question: which section, which style."""

    slot: int
    corpus: str
    doc_id: str
    doc_title: str
    section_id: str
    style: str


class Rejected(TypedDict):
    """A generated question that failed a gate."""

    question: str
    failed: list[str]


class QuestionItem(TypedDict):
    """The outcome of one slot: a kept question, or a dropped one with its reasons."""

    slot: int
    doc_id: str
    section_id: str
    section_title: str
    style: str
    question: str | None
    attempts: int
    rejected: list[Rejected]
    dropped: list[str]
    """Why the slot was dropped (the gates the last attempt failed); empty if kept."""
    prompt_id: str


class QuestionsState(TypedDict, total=False):
    """State of one question-set run."""

    corpus: str
    n: int
    styles: list[str]
    seed: int
    min_words: int
    slots: list[Slot]
    eligible: int
    skipped: dict[str, int]
    items: Annotated[list[QuestionItem], operator.add]


@dataclass
class QuestionDeps:
    """What the nodes need besides state."""

    store: Store
    llm: LLM
    on_item: Callable[[QuestionItem], None] | None = None


@dataclass(frozen=True)
class Candidate:
    """An eligible section."""

    doc_id: str
    doc_title: str
    section_id: str


def deal_slots(
    corpus: str,
    candidates: Sequence[Candidate],
    n: int,
    styles: Sequence[str],
    seed: int,
) -> list[Slot]:
    """Sample ``n`` (section, style) slots, stratified over documents (see module doc).

    Returns fewer than ``n`` slots only when every eligible section already has every
    style.
    """
    rng = random.Random(seed)
    by_doc: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_doc.setdefault(candidate.doc_id, []).append(candidate)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    queues = []
    for doc in docs:
        sections = list(by_doc[doc])
        rng.shuffle(sections)
        queues.append(sections)
    order: list[Candidate] = []  # round-robin over documents
    for depth in range(max((len(q) for q in queues), default=0)):
        order.extend(q[depth] for q in queues if depth < len(q))
    slots: list[Slot] = []
    used: set[tuple[str, str, str]] = set()
    offset = 0
    while len(slots) < n and order and offset < len(styles):
        for candidate in order:
            if len(slots) == n:
                break
            # Deal styles in turn; a reused section takes the next style it lacks.
            style = styles[(len(slots) + offset) % len(styles)]
            for shift in range(len(styles)):
                trial = styles[(len(slots) + offset + shift) % len(styles)]
                if (candidate.doc_id, candidate.section_id, trial) not in used:
                    style = trial
                    break
            else:
                continue
            used.add((candidate.doc_id, candidate.section_id, style))
            slots.append(
                Slot(
                    slot=len(slots),
                    corpus=corpus,
                    doc_id=candidate.doc_id,
                    doc_title=candidate.doc_title,
                    section_id=candidate.section_id,
                    style=style,
                )
            )
        offset += 1
    return slots


async def sample(
    state: QuestionsState, runtime: Runtime[QuestionDeps]
) -> QuestionsState:
    """Choose the sections and styles of the question set."""
    store = runtime.context.store
    corpus = state["corpus"]
    titles = {d.doc_id: d.title for d in await corpora.documents(store, corpus)}
    min_words = state.get("min_words", MIN_WORDS)
    skipped = {"too_short": 0, "administrative": 0}
    candidates = []
    for row in await corpora.sections(store, corpus, with_text=True):
        if ADMINISTRATIVE.search(row.title.strip()):
            skipped["administrative"] += 1
        elif len(row.text.split()) < min_words:
            skipped["too_short"] += 1
        else:
            candidates.append(
                Candidate(row.doc_id, titles.get(row.doc_id, ""), row.section_id)
            )
    slots = deal_slots(
        corpus,
        candidates,
        state["n"],
        state.get("styles", list(STYLES)),
        state.get("seed", 0),
    )
    return {"slots": slots, "eligible": len(candidates), "skipped": skipped}


def clean_question(reply: str) -> str:
    """Return the question in a model reply: labels, quotes and markup removed.

    The reply should be one line. When a small model spreads a scenario over several
    lines ("Patient: 65 years old" / "Question: ...?"), the lines up to the first one
    that asks something are joined; the text ends at that line's last question mark.
    """
    kept: list[str] = []
    for line in reply.splitlines():
        text = _LABEL.sub("", line.strip()).strip().strip("*_`\"'\u201c\u201d ").strip()
        if not text:
            continue
        if "?" in text:
            kept.append(text[: text.rindex("?") + 1])
            break
        kept.append(text if text[-1] in ".!:;," else text + ".")
        if len(kept) == MAX_LINES:
            kept = kept[:1]  # no question within reach: keep the first line only
            break
    return " ".join(" ".join(kept).split())


def _cut(text: str, limit: int = MAX_SECTION_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " ..."


def _feedback(rejected: Rejected) -> str:
    reasons = {
        "not_a_question": "it was not a single question ending with a question mark",
        "title_copy": "it only restated the section heading",
        "verbatim_copy": "it copied a long run of words from the section",
        "names_guideline": "it named the guideline",
        "refers_to_source": "it referred to the section or the text itself",
        "model_error": "no usable reply came back",
    }
    why = "; ".join(reasons.get(f, f) for f in rejected["failed"])
    return (
        f'\nA previous attempt, "{rejected["question"]}", was rejected: {why}. '
        "Write a different question that avoids this.\n"
    )


async def generate(task: Slot, runtime: Runtime[QuestionDeps]) -> QuestionsState:
    """Write one question for a slot; regenerate once if it fails a gate."""
    deps = runtime.context
    key = section_key(task["doc_id"], task["section_id"])
    row = (await corpora.get_sections(deps.store, task["corpus"], [key]))[key]
    source = GateInput(row.title, row.text, task["doc_id"], task["doc_title"])
    prompt = load_prompt("questions", task["style"])
    rejected: list[Rejected] = []
    question: str | None = None
    for _ in range(2):
        feedback = _feedback(rejected[-1]) if rejected else ""
        messages = prompt.render(
            section_title=row.title or "(untitled)",
            text=_cut(row.text),
            feedback=feedback,
        )
        try:
            reply = await deps.llm.text(
                prompt.id, messages, max_tokens=MAX_TOKENS[task["style"]]
            )
        except ContextOverflow:
            # Only this item cannot be asked; any other failure stops the run.
            rejected.append(Rejected(question="", failed=["model_error"]))
            continue
        candidate = clean_question(reply.value)
        failed = check_question(candidate, source)
        if not failed:
            question = candidate
            break
        rejected.append(Rejected(question=candidate, failed=failed))
    item = QuestionItem(
        slot=task["slot"],
        doc_id=task["doc_id"],
        section_id=task["section_id"],
        section_title=row.title,
        style=task["style"],
        question=question,
        attempts=len(rejected) + (question is not None),
        rejected=rejected,
        dropped=[] if question is not None else rejected[-1]["failed"],
        prompt_id=prompt.id,
    )
    if deps.on_item is not None:
        deps.on_item(item)
    return {"items": [item]}
