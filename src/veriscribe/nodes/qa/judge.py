"""judge: does the source a claim's quotes span support the claim?

The judge reads the source passages of the claim's verbatim-compliant quotes (each
widened to whole sentences, an elision's skipped text included), not the quotes alone.

``scored`` (the default) decides in two lanes:

* the lexical lane (:func:`veriscribe.checks.support.lexical_verdict`): a claim that
  restates a sentence or clause of the source word for word in content, numbers,
  negations and strength is ``fully_supported`` with no model call, and the same
  restatement with its negation flipped or a number changed is ``contradicted``;
* the model lane: one yes/no question ("does the passage state this claim?") whose
  answer is scored from the model's probability of "yes" (read from its next-token
  probabilities where the backend exposes them, else the share of ``samples``
  constrained one-word answers). At or above a cut-off it is ``fully_supported``, at
  or above a lower one ``partially_supported``, below it ``not_supported``; the
  cut-offs are measured per model with ``veriscribe eval judge`` (:data:`MEASURED_THRESHOLDS`).

A model "yes" certifies nothing that :func:`veriscribe.checks.support.certification_guard`
rejects (a number the source does not state, a negation or polarity word dropped): such
a claim is ``not_supported``, with the reason in its note.

``sampled`` is the earlier judge, kept for comparison: the majority of sampled
four-way JSON verdicts, with more samples while the lead is tied and a surviving tie
going to the less supportive verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.checks.support import (
    certification_guard,
    lexical_verdict,
    shortfall_of,
)
from veriscribe.errors import StructuredOutputError
from veriscribe.llm.client import LLM
from veriscribe.nodes.qa.state import (
    ClaimInfo,
    Judgement,
    JudgeTask,
    QADeps,
    QAState,
    Ruling,
)
from veriscribe.options import QAOptions
from veriscribe.prompts import load_prompt
from veriscribe.results import (
    VERDICTS,
    ClaimStatus,
    Shortfall,
    ShortfallVote,
    Verdict,
)

JUDGE_TOKENS = 48


@dataclass(frozen=True)
class Thresholds:
    """Where the model lane's probability of "yes" turns into a verdict."""

    supported: float | None
    """At or above: ``fully_supported``; None: the model lane never certifies."""
    partial: float
    """At or above (and below ``supported``): ``partially_supported``."""


DEFAULT_THRESHOLDS = Thresholds(supported=0.5, partial=0.2)
"""For a model whose yes/no probabilities have not been measured."""

MEASURED_THRESHOLDS: dict[str, Thresholds] = {
    # `veriscribe eval judge --corpus cpgqa --sources 40` (116 pairs): the bundled
    # model's P(yes) is low for every pair: a sentence of another section scores 0.11
    # to 0.23, the sentence itself about 0.25. On answers (bench/qa_quality.py) its
    # paraphrases that drift from the quote scored 0.32 to 0.34, above the copies: no
    # cut-off separates what the source says from what it does not, so this model
    # never certifies; only the lexical lane does, and its "yes" makes a claim partial.
    "local:qwen2.5-coder-0.5b-instruct-q4_k_m": Thresholds(supported=None, partial=0.2),
    # Not measured yet: until it is, the bundled 1.5B certifies nothing by itself either.
    "local:qwen2.5-coder-1.5b-instruct-q4_k_m": Thresholds(supported=None, partial=0.2),
}
"""Cut-offs chosen on development pairs, by model label."""


def thresholds_for(label: str, options: QAOptions) -> Thresholds:
    """Return the model lane's cut-offs: the options', else the measured, else defaults."""
    base = MEASURED_THRESHOLDS.get(label, DEFAULT_THRESHOLDS)
    return Thresholds(
        supported=options.support_threshold or base.supported,
        partial=options.partial_threshold or base.partial,
    )


# From most to least supportive: a surviving tie goes to the later one.
class JudgeReply(BaseModel):
    """One sampled judgement."""

    verdict: Verdict
    shortfall: ShortfallVote = "none"


def leader(votes: Sequence[Verdict]) -> Verdict | None:
    """Return the verdict with strictly the most votes, or None on a tie."""
    if not votes:
        return None
    ranked = Counter(votes).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def tie_break(votes: Sequence[Verdict]) -> Verdict:
    """Return the least supportive of the verdicts tied for the most votes."""
    counts = Counter(votes)
    top = max(counts.values())
    tied = [v for v in VERDICTS if counts.get(v) == top]
    return tied[-1]


def majority_shortfall(replies: Sequence[JudgeReply]) -> Shortfall | None:
    """Return the most frequent shortfall among partial verdicts (None if none named)."""
    named: list[Shortfall] = [
        r.shortfall
        for r in replies
        if r.verdict == "partially_supported" and r.shortfall != "none"
    ]
    if not named:
        return None
    counts = Counter(named)
    return max(counts, key=lambda s: (counts[s], -named.index(s)))


def format_quotes(quotes: Sequence[str]) -> str:
    """Number the quotes one per line."""
    return "\n".join(f'[{i}] "{q}"' for i, q in enumerate(quotes, start=1))


async def judge(task: JudgeTask, runtime: Runtime[QADeps]) -> QAState:
    """Judge one claim against the source its quotes span."""
    deps = runtime.context
    sources = task.get("sources") or task["quotes"]
    found = await decide(
        deps.model(), deps.options, task["question"], task["claim"], sources
    )
    return {"judgements": [Judgement(sentence=task["sentence"], **found)]}


async def decide(
    llm: LLM,
    options: QAOptions,
    question: str,
    claim: str,
    sources: Sequence[str],
    *,
    lexical: bool = True,
) -> Ruling:
    """Return the ruling on a claim given its source passages.

    Whatever the method, a "fully supported" ruling passes the certification guard
    here, the one way every judge (and the recovery's re-judging) certifies: a claim
    whose numbers, negations or obligations its source does not hold is not certified,
    however persuaded the model was. ``lexical=False`` skips the lexical lane of the
    scored judge (to test the model).
    """
    if options.judge_method == "sampled":
        ruling = await sampled_verdict(llm, options, question, claim, sources)
    else:
        ruling = await scored_verdict(
            llm, options, question, claim, sources, lexical=lexical
        )
    return guarded(ruling, claim, sources)


def guarded(ruling: Ruling, claim: str, sources: Sequence[str]) -> Ruling:
    """Return the ruling, a certification the guard refuses turned into not supported."""
    if ruling["verdict"] != "fully_supported":
        return ruling
    reason = certification_guard(claim, "\n".join(sources))
    if reason is None:
        return ruling
    note = f"not certified: {reason}"
    if ruling["note"]:
        note = f"{note}; {ruling['note']}"
    # A sampled ruling keeps the votes the model cast; the one-vote lanes say the
    # verdict they stand for.
    votes = ruling["votes"] if ruling["method"] == "sampled" else ["not_supported"]
    return Ruling(
        **{**ruling, "verdict": "not_supported", "votes": votes, "note": note}
    )


async def scored_verdict(
    llm: LLM,
    options: QAOptions,
    question: str,
    claim: str,
    sources: Sequence[str],
    *,
    lexical: bool = True,
) -> Ruling:
    """Decide by the lexical lane, else by the scored yes/no question."""
    source = "\n".join(sources)
    restated = lexical_verdict(claim, source) if lexical else None
    if restated is not None:
        return _found(restated, [restated], None, "lexical", None, "")
    prompt = load_prompt("qa", "judge_yesno")
    try:
        reply = await llm.choice_probs(
            prompt.id,
            prompt.render(
                question=question or "(not given)",
                claim=claim,
                sources=format_quotes(sources),
            ),
            ("yes", "no"),
            samples=options.samples,
        )
    except StructuredOutputError as exc:
        return _found(
            None, [], None, "model", None, f"the judge gave no usable verdict ({exc})"
        )
    score = round(reply.value.get("yes", 0.0), 4)
    cut = thresholds_for(llm.label, options)
    note = ""
    verdict: Verdict
    if cut.supported is not None and score >= cut.supported:
        verdict = "fully_supported"
    elif score >= cut.partial:
        verdict = "partially_supported"
    else:
        verdict = "not_supported"
    shortfall = (
        shortfall_of(claim, sources) if verdict == "partially_supported" else None
    )
    return _found(verdict, [verdict], shortfall, "model", score, note)


def _found(
    verdict: Verdict | None,
    votes: Sequence[str],
    shortfall: Shortfall | None,
    method: str,
    score: float | None,
    note: str,
) -> Ruling:
    return Ruling(
        verdict=verdict,
        votes=list(votes),
        shortfall=shortfall,
        method=method,
        score=score,
        note=note,
    )


async def sampled_verdict(
    llm: LLM,
    options: QAOptions,
    question: str,
    claim: str,
    sources: Sequence[str],
) -> Ruling:
    """Decide by the majority of sampled four-way verdicts (the earlier judge)."""
    prompt = load_prompt("qa", "judge")
    replies: list[JudgeReply] = []
    failures: list[str] = []
    sample = 0
    while sample < max(options.max_samples, options.samples):
        sample += 1
        try:
            reply = await llm.json(
                prompt.id,
                prompt.render(
                    question=question or "(not given)",
                    claim=claim,
                    quotes=format_quotes(sources),
                    sample=str(sample),
                ),
                JudgeReply,
                max_tokens=JUDGE_TOKENS,
            )
            replies.append(reply.value)
        except StructuredOutputError as exc:
            failures.append(str(exc))
        votes = [r.verdict for r in replies]
        if sample >= options.samples and (not votes or leader(votes) is not None):
            break
    votes = [r.verdict for r in replies]
    note = ""
    verdict: Verdict | None
    if not votes:
        verdict = None
        note = f"the judge gave no usable verdict ({failures[0] if failures else ''})"
    elif (top := leader(votes)) is not None:
        verdict = top
        if len(votes) > options.samples:
            note = f"tie broken after {len(votes)} samples"
    else:
        verdict = tie_break(votes)
        note = f"still tied after {len(votes)} samples: the less supportive verdict"
    if failures and votes:
        note = (note + "; " if note else "") + f"{len(failures)} samples unusable"
    shortfall = (
        majority_shortfall(replies) if verdict == "partially_supported" else None
    )
    return _found(verdict, votes, shortfall, "sampled", None, note)


def merge_judgements(
    claims: Sequence[ClaimInfo], judgements: Sequence[Judgement]
) -> list[ClaimInfo]:
    """Give each judged claim its verdict and the status that follows from it."""
    by_sentence = {j["sentence"]: j for j in judgements}
    merged = []
    for claim in claims:
        found = by_sentence.get(claim["sentence"])
        if found is None:
            merged.append(claim)
            continue
        verdict = found["verdict"]
        merged.append(
            ClaimInfo(
                **{
                    **claim,
                    "verdict": verdict,
                    "votes": found["votes"],
                    "shortfall": found["shortfall"],
                    "status": STATUS_OF_VERDICT.get(verdict or "", "unjudged"),
                    "judged_by": found["method"],
                    "score": found["score"],
                    "note": found["note"],
                }
            )
        )
    return merged


STATUS_OF_VERDICT: dict[str, ClaimStatus] = {
    "fully_supported": "certified",
    "partially_supported": "partial",
    "not_supported": "unsupported",
    "contradicted": "unsupported",
}


async def join(state: QAState) -> QAState:
    """Collect the judge branches into the claims."""
    return {
        "claims": merge_judgements(state.get("claims", []), state.get("judgements", []))
    }
