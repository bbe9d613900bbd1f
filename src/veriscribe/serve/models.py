"""The request bodies of the API and the few responses that are the server's own.

Every other response is one of the product's result models (``veriscribe.results``),
the same JSON as the matching command's ``--json``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from veriscribe.options import (
    Citations,
    CiteBy,
    JudgeMethod,
    QAOptions,
    Retriever,
    Selection,
    Wording,
)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""A corpus name or a chat session id (the rule ``corpus add`` states)."""
MAX_NAME_CHARS = 64
MAX_QUESTION_CHARS = 4000
MAX_ANSWER_CHARS = 50_000
"""An answer to check: pages of text, far beyond the few sentences ``ask`` writes. Its
deterministic checks take about 2 s at this length (``tests/serve/test_edges.py``)."""
MAX_KEY_CHARS = 300
"""A section key (``doc:section``) or a run id: a document id and a section path."""
SectionKey = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS)]
_DEFAULT = QAOptions()
"""The answer options a request leaves out take these values."""


class AnswerRequest(BaseModel):
    """A question for a corpus, with the options of ``ask`` (and ``chat``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    corpus: str = Field(pattern=NAME_PATTERN, max_length=MAX_NAME_CHARS)
    session: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        max_length=MAX_NAME_CHARS,
        description="A chat session id: the question is the next turn of that chat "
        "(started if new, resumed if not), as `chat --session` does.",
    )
    retriever: Retriever = _DEFAULT.retriever
    k: int = Field(
        _DEFAULT.k, ge=1, le=50, description="Sections to read (llm: at most)."
    )
    candidates: int = Field(
        40, ge=0, description="Summaries the llm retriever chooses from (0: all)."
    )
    judge: bool = Field(True, description="Run the support judge and recovery.")
    citations: Citations = "constrained"
    cite_by: CiteBy = "quote"
    wording: Wording = "source"
    select: Selection = _DEFAULT.select
    max_sentences: int = Field(_DEFAULT.max_sentences, ge=1, le=10)
    judge_method: JudgeMethod = "scored"

    def options(self) -> QAOptions:
        """Return the answer options the request names."""
        return QAOptions(
            retriever=self.retriever,
            k=self.k,
            candidates=self.candidates,
            judge=self.judge,
            citations=self.citations,
            cite_by=self.cite_by,
            wording=self.wording,
            select=self.select,
            max_sentences=self.max_sentences,
            judge_method=self.judge_method,
        )


class VerifyRequest(BaseModel):
    """An answer with ``{{cite:doc:section|quote}}`` markers to check, as ``verify``."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    corpus: str = Field(pattern=NAME_PATTERN, max_length=MAX_NAME_CHARS)
    question: str = Field("", max_length=MAX_QUESTION_CHARS)
    k: int = Field(1, ge=0, le=20, description="Attribution window.")
    judge: bool = True
    all_claims: bool = Field(
        False, description="Treat every sentence as a claim (no claim filter call)."
    )
    judge_method: JudgeMethod = "scored"
    read_set: list[SectionKey] | None = Field(
        None,
        max_length=200,
        description="Section keys (doc:section) the answer was written from; "
        "default: the sections it cites.",
    )


class Health(BaseModel):
    """The server is up."""

    status: str = "ok"
    version: str


class Readiness(BaseModel):
    """The server can work: its database answers and its model SPEC is usable."""

    status: str = "ready"
    database: str = Field(description="`ok` when the database answered.")
    model: str = Field(description="The model SPEC requests are answered with.")


class RunAccepted(BaseModel):
    """An abstract run registered; it works in the background."""

    run_id: str
    status: str = Field(
        description="`started`; `running` or `finished` if the same run already was."
    )
    articles: list[str] = Field(description="The files uploaded, as stored.")
    location: str = Field(description="Where its progress is: GET this path.")
