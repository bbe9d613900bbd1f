"""State, options and dependencies of the cited-QA graph.

State stays small and saveable: section texts live in the store and are looked up by key
(``<doc_id>:<section_id>``); state holds keys, the answer, its sentences and citations,
and short verdicts. ``Send`` payloads carry a claim, its quotes and section keys only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

from veriscribe.errors import ConfigError
from veriscribe.llm.client import LLM
from veriscribe.options import QAOptions
from veriscribe.results import ClaimStatus, Shortfall, Tier, Verdict
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.retrieval.fused import FusedIndex, section_docs, stored_vectors
from veriscribe.store import corpora
from veriscribe.store.corpora import SectionRow
from veriscribe.store.db import Store

if TYPE_CHECKING:
    from veriscribe.retrieval.dense import DenseIndex, Encoder

Mode = Literal["ask", "verify"]

NOT_FOUND_ANSWER = (
    "Not found in the loaded guidelines: none of the sections read addresses this "
    "question, so no answer is given."
)


@dataclass(frozen=True)
class QADeps:
    """What the nodes need besides state: the store, the model, the options."""

    store: Store
    llm: LLM | None = None
    options: QAOptions = QAOptions()
    _sections: dict[tuple[str, str], SectionRow | None] = field(
        default_factory=dict, compare=False
    )
    _indexes: dict[str, Any] = field(default_factory=dict, compare=False)

    def model(self) -> LLM:
        """Return the model, or raise if this run was set up without one."""
        if self.llm is None:
            raise ConfigError("this step needs a model, and none was configured")
        return self.llm

    async def sections(self, corpus: str, keys: Iterable[str]) -> dict[str, SectionRow]:
        """Return the stored sections with these keys (text included), cached."""
        wanted = list(dict.fromkeys(keys))
        missing = [k for k in wanted if (corpus, k) not in self._sections]
        if missing:
            found = await corpora.get_sections(self.store, corpus, missing)
            for key in missing:
                self._sections[(corpus, key)] = found.get(key)
        return {
            key: row
            for key in wanted
            if (row := self._sections[(corpus, key)]) is not None
        }

    async def all_sections(self, corpus: str) -> list[SectionRow]:
        """Return every section of the corpus with its text, cached."""
        name = f"rows:{corpus}"
        if name not in self._indexes:
            rows = await corpora.sections(self.store, corpus, with_text=True)
            self._indexes[name] = rows
            for row in rows:
                self._sections[(corpus, row.key)] = row
        rows_list: list[SectionRow] = self._indexes[name]
        return rows_list

    async def bm25(self, corpus: str) -> BM25Index:
        """Return a BM25 index over the corpus's sections (title and text), cached."""
        name = f"bm25:{corpus}"
        if name not in self._indexes:
            # Sections without text of their own (a heading over sub-sections) are
            # never worth reading.
            rows = [row for row in await self.all_sections(corpus) if row.chars]
            if not rows:
                raise ConfigError(f"corpus {corpus!r} has no sections with text")
            self._indexes[name] = BM25Index().build(
                [row.key for row in rows], [f"{row.title}\n{row.text}" for row in rows]
            )
        index: BM25Index = self._indexes[name]
        return index

    async def fused(self, corpus: str) -> FusedIndex:
        """Return the default retriever's index over the corpus's sections, cached."""
        name = f"fused:{corpus}"
        if name not in self._indexes:
            titles = {
                doc.doc_id: doc.title
                for doc in await corpora.documents(self.store, corpus)
            }
            found = section_docs(await self.all_sections(corpus), titles)
            if not found:
                raise ConfigError(f"corpus {corpus!r} has no sections with text")
            encoder = self.encoder()
            vectors = (
                None
                if encoder is None
                else await stored_vectors(self.store, corpus, found, encoder)
            )
            self._indexes[name] = FusedIndex(found, encoder, vectors)
        index: FusedIndex = self._indexes[name]
        return index

    def encoder(self) -> Encoder | None:
        """Return the sentence encoder of semantic selection, or None if not installed."""
        from veriscribe.retrieval import minilm

        return minilm.minilm() if minilm.available() else None

    async def dense(self, corpus: str) -> DenseIndex:
        """Return the dense index of the corpus's sections, cached (built on first use)."""
        from veriscribe.retrieval.dense import DenseIndex, minilm_encoder

        name = f"dense:{corpus}"
        if name not in self._indexes:
            rows = await self.all_sections(corpus)
            self._indexes[name] = DenseIndex(
                minilm_encoder(),
                [row.key for row in rows],
                [f"{row.title}\n{row.text}" for row in rows],
            )
        index: DenseIndex = self._indexes[name]
        return index


class Turn(TypedDict):
    """One earlier exchange of a chat, kept for follow-up questions."""

    question: str
    answer: str


class RetrievalInfo(TypedDict):
    """How the read set was chosen."""

    method: str
    candidates: int
    notes: list[str]


class CitationRef(TypedDict):
    """A citation as the answer gives it: a section and a quote of it."""

    doc_id: str
    section_id: str
    quote: str


class AnswerSentence(TypedDict):
    """One sentence of the answer with its citations: the answer's representation."""

    text: str
    citations: list[CitationRef]


class SentenceInfo(TypedDict):
    """A sentence of the answer (markers stripped) and whether it states a claim."""

    text: str
    start: int
    end: int
    claim: bool


class MarkedCitation(TypedDict):
    """A citation marker of the answer and how its quote matched."""

    index: int
    doc_id: str
    section_id: str
    quote: str
    offset: int
    tier: Tier | Literal["unchecked"]
    """``unchecked`` until the verbatim check has run."""
    span: list[int] | None
    note: str
    source: str
    """The passage of the section the quote spans, widened to whole sentences: what
    the judge reads and the reader is shown (empty when the quote matched nothing)."""
    page: NotRequired[int | None]
    """The page the cited section starts on (PDF sources), set by the verbatim check;
    absent from answers checkpointed before pages were kept."""


class Recovery(TypedDict):
    """A span of a section read that states what a claim's quotes left unsupported."""

    doc_id: str
    section_id: str
    quote: str
    tier: Tier
    page: NotRequired[int | None]
    """The page the section starts on (PDF sources)."""


class ClaimInfo(TypedDict):
    """A claim sentence and everything the checks found about it."""

    sentence: int
    text: str
    citations: list[int]
    status: ClaimStatus
    verdict: Verdict | None
    votes: list[str]
    shortfall: Shortfall | None
    recovered: Recovery | None
    judged_by: str | None
    score: float | None
    note: str


class Ruling(TypedDict):
    """The support judge's ruling on one claim."""

    verdict: Verdict | None
    votes: list[str]
    shortfall: Shortfall | None
    method: str
    """``lexical`` (no model call), ``model`` (scored yes/no) or ``sampled``."""
    score: float | None
    """The model's probability that the source states the claim (model lane)."""
    note: str


class Judgement(Ruling):
    """A ruling with the claim sentence it is about."""

    sentence: int


class RecoveryResult(TypedDict):
    """The outcome of looking for a claim's missing support."""

    sentence: int
    recovered: Recovery | None
    note: str


class JudgeTask(TypedDict):
    """The ``Send`` payload of one judge branch: a claim and the source it cites.

    ``sources`` are the passages of the cited sections that the compliant quotes span,
    widened to whole sentences (an elision's skipped text included): the judge rules
    on what the source says, not on the quote alone.
    """

    question: str
    sentence: int
    claim: str
    quotes: list[str]
    sources: list[str]


class RecoverTask(TypedDict):
    """The ``Send`` payload of one recovery branch: keys and the claim's sources."""

    corpus: str
    question: str
    sentence: int
    claim: str
    quotes: list[str]
    sources: list[str]
    cited: list[str]
    read_set: list[str]


class Nearest(TypedDict):
    """A section read for a question the sections do not answer, nearest first."""

    key: str
    title: str
    page: int | None


def collect(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append parallel branches' results; an empty list (a new turn's input) clears."""
    if not right:
        return []
    return [*(left or []), *right]


class QAState(TypedDict, total=False):
    """The cited-QA graph's state (one thread per question, or per chat)."""

    mode: Mode
    corpus: str
    question: str
    history: list[Turn]
    read_set: list[str]
    retrieval: RetrievalInfo
    answer: str
    answer_sentences: list[AnswerSentence]
    failure: str
    not_found: bool
    sentences: list[SentenceInfo]
    citations: list[MarkedCitation]
    claims: list[ClaimInfo]
    judgements: Annotated[list[Judgement], collect]
    recoveries: Annotated[list[RecoveryResult], collect]
    notes: list[str]
    prompt_ids: list[str]
    result: dict[str, Any]
    nearest: list[Nearest]


def turn_input(
    mode: Mode,
    corpus: str,
    question: str,
    *,
    answer: str = "",
    read_set: list[str] | None = None,
    not_found: bool = False,
) -> QAState:
    """Return the input of one question: every per-turn field set afresh."""
    return QAState(
        mode=mode,
        corpus=corpus,
        question=question,
        read_set=list(read_set or []),
        retrieval=RetrievalInfo(method="given", candidates=0, notes=[]),
        answer=answer,
        answer_sentences=[],
        failure="",
        not_found=not_found,
        sentences=[],
        citations=[],
        claims=[],
        judgements=[],
        recoveries=[],
        notes=[],
        prompt_ids=[],
        result={},
        nearest=[],
    )
