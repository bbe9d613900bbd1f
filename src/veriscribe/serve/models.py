"""The request bodies of the API and the few responses that are the server's own.

A request's options are the fields of the options models (``veriscribe.options``),
taken whole: the same names, defaults, bounds and descriptions as the command line's.
Every other response is one of the product's result models (``veriscribe.results``),
the same JSON as the matching command's ``--json``.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from veriscribe.options import (
    AbstractOptions,
    Citations,
    CiteBy,
    JudgeMethod,
    LabellerKind,
    PromptFamily,
    QAOptions,
    Retriever,
    Selection,
    Split,
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


def option(model: type[BaseModel], name: str) -> Any:
    """Return the field ``name`` of an options model, to declare in a request body.

    A request takes an option as the options model defines it: its default, its bounds,
    its validators and its description (shown in ``/openapi.json``) are the model's.
    """
    return deepcopy(model.model_fields[name])


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
    retriever: Retriever = option(QAOptions, "retriever")
    k: int = option(QAOptions, "k")
    candidates: int = option(QAOptions, "candidates")
    judge: bool = option(QAOptions, "judge")
    citations: Citations = option(QAOptions, "citations")
    cite_by: CiteBy = option(QAOptions, "cite_by")
    wording: Wording = option(QAOptions, "wording")
    select: Selection = option(QAOptions, "select")
    max_sentences: int = option(QAOptions, "max_sentences")
    judge_method: JudgeMethod = option(QAOptions, "judge_method")

    def options(self) -> QAOptions:
        """Return the answer options the request names."""
        return QAOptions(**self.model_dump(include=set(QAOptions.model_fields)))


class VerifyRequest(BaseModel):
    """An answer with ``{{cite:doc:section|quote}}`` markers to check, as ``verify``."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    corpus: str = Field(pattern=NAME_PATTERN, max_length=MAX_NAME_CHARS)
    question: str = Field("", max_length=MAX_QUESTION_CHARS)
    # `k` is the window's old name, taken for one release (see the changelog).
    window: Annotated[int, option(QAOptions, "window")] = Field(
        validation_alias=AliasChoices("window", "k")
    )
    judge: bool = option(QAOptions, "judge")
    all_claims: bool = option(QAOptions, "all_claims")
    judge_method: JudgeMethod = option(QAOptions, "judge_method")
    read_set: list[SectionKey] | None = Field(
        None,
        max_length=200,
        description="Section keys (doc:section) the answer was written from; "
        "default: the sections it cites.",
    )


class AbstractRequest(BaseModel):
    """The options of ``batch``, as the form fields of an upload of articles."""

    split: Split = option(AbstractOptions, "split")
    prompt: PromptFamily = option(AbstractOptions, "prompt")
    entities: int = option(AbstractOptions, "entities")
    lean: bool = option(AbstractOptions, "lean")
    labeller: LabellerKind = option(AbstractOptions, "labeller")
    copy_limit: int = option(AbstractOptions, "copy_limit")
    words: int = option(AbstractOptions, "words")

    def options(self) -> AbstractOptions:
        """Return the abstract options the form names."""
        return AbstractOptions(**self.model_dump())


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
