"""judge: does a claim's verbatim quotes support it? The majority of sampled verdicts.

The judge sees only the question, the claim and its verbatim-compliant quotes. Each
claim gets ``samples`` (three) independent judgements; the most frequent verdict wins,
and while two verdicts tie for the lead another sample is drawn, up to
``max_samples``. A tie that survives every round goes to the less supportive verdict.
Each sample is its own prompt (it carries its review number), so samples differ even
where responses are cached, and a resumed run reuses each finished sample.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel

from veriscribe.errors import StructuredOutputError
from veriscribe.nodes.qa.state import ClaimInfo, Judgement, JudgeTask, QADeps, QAState
from veriscribe.prompts import load_prompt

JUDGE_TOKENS = 48

# From most to least supportive: a surviving tie goes to the later one.
VERDICT_ORDER = (
    "fully_supported",
    "partially_supported",
    "not_supported",
    "contradicted",
)


class JudgeReply(BaseModel):
    """One sampled judgement."""

    verdict: Literal[
        "fully_supported", "partially_supported", "not_supported", "contradicted"
    ]
    shortfall: Literal[
        "none",
        "unsupported_addition",
        "strength_inflation",
        "scope_inflation",
        "causal_upgrade",
    ] = "none"


def leader(votes: Sequence[str]) -> str | None:
    """Return the verdict with strictly the most votes, or None on a tie."""
    if not votes:
        return None
    ranked = Counter(votes).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def tie_break(votes: Sequence[str]) -> str:
    """Return the least supportive of the verdicts tied for the most votes."""
    counts = Counter(votes)
    top = max(counts.values())
    tied = [v for v in VERDICT_ORDER if counts.get(v) == top]
    return tied[-1]


def majority_shortfall(replies: Sequence[JudgeReply]) -> str | None:
    """Return the most frequent shortfall among partial verdicts (None if none named)."""
    named = [
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


async def judge(task: JudgeTask, runtime: Runtime[QADeps]) -> dict[str, Any]:
    """Judge one claim by the majority of sampled verdicts."""
    deps = runtime.context
    llm = deps.model()
    options = deps.options
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
                    question=task["question"] or "(not given)",
                    claim=task["claim"],
                    quotes=format_quotes(task["quotes"]),
                    sample=str(sample),
                ),
                JudgeReply,
                max_tokens=JUDGE_TOKENS,
            )
            replies.append(reply.value)
        except StructuredOutputError as exc:
            failures.append(str(exc))
        votes = [str(r.verdict) for r in replies]
        if sample >= options.samples and (not votes or leader(votes) is not None):
            break
    votes = [str(r.verdict) for r in replies]
    note = ""
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
    return {
        "judgements": [
            Judgement(
                sentence=task["sentence"],
                verdict=verdict,
                votes=votes,
                shortfall=shortfall,
                note=note,
            )
        ]
    }


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
                    "note": found["note"],
                }
            )
        )
    return merged


STATUS_OF_VERDICT = {
    "fully_supported": "certified",
    "partially_supported": "partial",
    "not_supported": "unsupported",
    "contradicted": "unsupported",
}


async def join(state: QAState) -> dict[str, Any]:
    """Collect the judge branches into the claims."""
    return {
        "claims": merge_judgements(state.get("claims", []), state.get("judgements", []))
    }
